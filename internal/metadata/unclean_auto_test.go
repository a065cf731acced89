package metadata

import (
	"slices"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/base"
)

// unclean.leader.election.enable resolves as in Kafka's controller: the
// topic's config, the controller's dynamic config, the cluster-wide
// dynamic default, the controller's static config.
func TestUncleanElectionEnabled(t *testing.T) {
	const controller = 1
	set := func(v string) map[string]string { return map[string]string{uncleanElectionKey: v} }
	for _, tc := range []struct {
		name                 string
		topic, node, cluster map[string]string
		static, want         bool
	}{
		{"nothing set", nil, nil, nil, false, false},
		{"static only", nil, nil, nil, true, true},
		{"the cluster default over static", nil, nil, set("false"), true, false},
		{"the controller's own over the cluster default", nil, set("true"), set("false"), false, true},
		{"the topic over everything", set("false"), set("true"), set("true"), true, false},
		{"the topic alone", set("true"), nil, nil, false, true},
		{"TRUE in any case", set("TRUE"), nil, nil, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := emptyImage()
			if tc.node != nil {
				img.NodeConfigs[controller] = tc.node
			}
			if tc.cluster != nil {
				img.BrokerConfigs = tc.cluster
			}
			if got := uncleanElectionEnabled(img, controller, &Topic{Configs: tc.topic}, tc.static); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
	img := emptyImage()
	img.NodeConfigs[2] = set("true") // another node's dynamic config
	if uncleanElectionEnabled(img, controller, &Topic{}, false) {
		t.Fatal("another node's dynamic config counted")
	}
}

func TestUncleanCandidates(t *testing.T) {
	img := emptyImage()
	for _, id := range []int32{1, 2, 3} {
		img.Brokers[id] = &Broker{ID: id, Fenced: id == 1}
	}
	topic := func(name string, id byte, configs map[string]string, parts ...Partition) {
		for i := range parts {
			parts[i].Index = int32(i)
		}
		tp := &Topic{Name: name, ID: base.TopicID{id}, Configs: configs, Partitions: parts}
		img.Topics[name] = tp
		img.TopicsByID[tp.ID] = tp
	}
	on := map[string]string{uncleanElectionKey: "true"}
	leaderlessISR1 := Partition{Leader: NoLeader, Replicas: []int32{1, 2}, ISR: []int32{1}}
	topic("enabled", 1, on,
		leaderlessISR1, // 2 is live outside the ISR: elected
		Partition{Leader: 2, Replicas: []int32{2, 1}, ISR: []int32{2}},           // led
		Partition{Leader: NoLeader, Replicas: []int32{1}, ISR: []int32{1}},       // nobody else
		Partition{Leader: NoLeader, Replicas: []int32{1, 3}, ISR: []int32{1, 3}}, // 3, in the ISR, can lead
	)
	topic("disabled", 2, nil, leaderlessISR1)
	topic("tiered", 3, map[string]string{uncleanElectionKey: "true", "remote.storage.enable": "true"}, leaderlessISR1)
	enabled := func(t *Topic) bool { return uncleanElectionEnabled(img, 1, t, false) }
	got := uncleanCandidates(img, enabled)
	want := []partitionRef{{TopicID: base.TopicID{1}, Partition: 0}, {TopicID: base.TopicID{1}, Partition: 3}}
	if !slices.Equal(got, want) {
		t.Fatalf("candidates %v, want %v", got, want)
	}
}

// TestControllerElectsUncleanlyWhereTheTopicAllows: a partition whose last
// in-sync replica is fenced gets a leader from outside the ISR as soon as
// one is live, without an operator, where its topic enables
// unclean.leader.election.enable; elsewhere it waits, until the config is
// turned on.
func TestControllerElectsUncleanlyWhereTheTopicAllows(t *testing.T) {
	s, epochs := brokersStore(t, nil)
	if _, err := s.CreateTopic(t.Context(), CreateTopic{Name: "u", Assignments: [][]int32{{1, 2}},
		Configs: map[string]string{uncleanElectionKey: "true"}}); err != nil {
		t.Fatal(err)
	}
	// 2, then 3 leave the ISRs; 1, their last member, goes too.
	for _, id := range []int32{2, 3, 1} {
		if err := s.FenceBroker(t.Context(), id, epochs[id]); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.UnfenceBroker(t.Context(), 2, epochs[2]); err != nil {
		t.Fatal(err)
	}
	waitLeader(t, s, "u", 0, 2, []int32{2})
	waitUncleanElections(t, s, 1) // counted once the proposal returns
	time.Sleep(100 * time.Millisecond)
	if p := s.Image().Topics["t"].Partitions[0]; p.Leader != NoLeader {
		t.Fatalf("t-0, whose topic does not allow it, got leader %d", p.Leader)
	}
	if err := s.SetBrokerConfigs(t.Context(), map[string]string{uncleanElectionKey: "true"}); err != nil {
		t.Fatal(err)
	}
	waitLeader(t, s, "t", 0, 2, []int32{2})
	waitLeader(t, s, "t", 1, 2, []int32{2})
	waitUncleanElections(t, s, 3)
}

func waitUncleanElections(t *testing.T, s *Store, want uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.UncleanElections() != want {
		if time.Now().After(deadline) {
			t.Fatalf("UncleanElections %d, want %d", s.UncleanElections(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitLeader waits until topic's partition has leader and isr.
func waitLeader(t *testing.T, s *Store, topic string, partition, leader int32, isr []int32) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		p := s.Image().Topics[topic].Partitions[partition]
		if p.Leader == leader && slices.Equal(p.ISR, isr) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s-%d: leader %d ISR %v, want %d %v", topic, partition, p.Leader, p.ISR, leader, isr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestOutsideISR(t *testing.T) {
	before := emptyImage()
	before.Topics["t"] = &Topic{Name: "t", Partitions: []Partition{
		{Index: 0, Leader: NoLeader, Replicas: []int32{1, 2}, ISR: []int32{1}},
		{Index: 1, Leader: NoLeader, Replicas: []int32{1, 2}, ISR: []int32{1}},
	}}
	moves := []leadershipMove{
		{tp: base.TopicPartition{Topic: "t", Partition: 0}, from: NoLeader, to: 2}, // unclean
		{tp: base.TopicPartition{Topic: "t", Partition: 1}, from: NoLeader, to: 1}, // its ISR member came back
	}
	got := outsideISR(before, moves)
	if len(got) != 1 || got[0].tp.Partition != 0 {
		t.Fatalf("outsideISR = %v, want t-0's move alone", got)
	}
}

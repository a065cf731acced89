package e2e

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// TestADeletedTopicTakesItsCommittedOffsets: as Kafka's coordinator does, a
// deleted topic takes its groups' committed offsets with it, so a group
// reading a topic created again under the same name starts at its reset
// offset and reads every new record, not from where it had read the old
// topic to.
func TestADeletedTopicTakesItsCommittedOffsets(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), groupBrokerOverrides...)
	adm := newAdmin(t, b.Addr)
	const topic, group = "reborn", "reborn-readers"
	createTopic(t, adm, topic, 2, nil)
	produceSpread(t, manualPartitioner(t, b.Addr), topic, 2, 20)
	read := map[int32]int64{0: 4, 1: 4}
	offsets := kadm.Offsets{}
	for p, o := range read {
		offsets.AddOffset(topic, p, o, -1)
	}
	committed, err := adm.CommitOffsets(testContext(t, 10*time.Second), group, offsets)
	if err == nil {
		err = committed.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	requireCommitted(t, adm, group, topic, read)

	if _, err := adm.DeleteTopics(testContext(t, 10*time.Second), topic); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, "the group's offsets to leave the deleted topic", func() bool {
		resp, err := adm.FetchOffsets(testContext(t, 10*time.Second), group)
		if err != nil {
			return false
		}
		_, found := resp.Lookup(topic, 0)
		return !found
	})
	waitFor(t, metadataSettle, "the topic to be created again", func() bool {
		resp, err := adm.CreateTopic(testContext(t, 10*time.Second), 2, 1, nil, topic)
		return err == nil && resp.Err == nil
	})
	requirePartitionCount(t, adm, topic, 2)
	// A new client: franz-go's producer keeps the old topic's id (UNKNOWN_TOPIC_ID).
	ends := produceSpread(t, manualPartitioner(t, b.Addr), topic, 2, 20)

	l := newLedger()
	m := startMember(t, b.Addr, group, topic, l, defaultPace)
	waitFor(t, 30*time.Second, "the group to read the new topic", func() bool { return l.count() >= 20 })
	m.leave()
	l.check(t, ends)
}

package e2e

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestGroupAdmin drives kadm's group administration: list and describe a
// live group, refuse to delete it or its subscribed offsets while it has a
// member, then (once it is empty) delete one partition's offsets and the
// group. It also checks that __consumer_offsets is internal and cannot be
// deleted, and that simple (memberless) commits work.
func TestGroupAdmin(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), groupBrokerOverrides...)
	adm := newAdmin(t, b.Addr)
	ctx := testContext(t, 60*time.Second)
	const topic, group, partitions = "groups-admin", "g-admin", 2
	createTopic(t, adm, topic, partitions, nil)
	ends := produceSpread(t, manualPartitioner(t, b.Addr), topic, partitions, 20)

	l := newLedger()
	m := startMember(t, b.Addr, group, topic, l, defaultPace, kgo.ClientID("admin-member"))
	waitFor(t, 30*time.Second, "the member to consume", func() bool { return l.count() >= 20 })
	requireCommitted(t, adm, group, topic, ends)

	listed, err := adm.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := listed[group]; !ok || g.State != "Stable" || g.ProtocolType != "consumer" {
		t.Fatalf("ListGroups: %+v, want %s Stable consumer", listed, group)
	}
	if empty, err := adm.ListGroups(ctx, "Empty"); err != nil || len(empty) != 0 {
		t.Fatalf("ListGroups(Empty) = %v, %v; want none", empty, err)
	}
	described, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	d := described[group]
	if d.Err != nil || d.State != "Stable" || len(d.Members) != 1 || d.Protocol == "" {
		t.Fatalf("DescribeGroups: %+v", d)
	}
	if mem := d.Members[0]; mem.ClientID != "admin-member" || mem.ClientHost != "/127.0.0.1" {
		t.Fatalf("member %+v: want client id admin-member from /127.0.0.1", mem)
	}

	del, err := adm.DeleteGroups(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(del[group].Err, kerr.NonEmptyGroup) {
		t.Fatalf("DeleteGroups of a live group: %v, want NON_EMPTY_GROUP", del[group].Err)
	}
	dOff, err := adm.DeleteOffsets(ctx, group, kadm.TopicsSet{topic: {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	if err, _ := dOff.Lookup(topic, 0); !errors.Is(err, kerr.GroupSubscribedToTopic) {
		t.Fatalf("DeleteOffsets of a subscribed topic: %v, want GROUP_SUBSCRIBED_TO_TOPIC", err)
	}

	m.leave()
	waitFor(t, 15*time.Second, "the group to be empty", func() bool {
		d, err := adm.DescribeGroups(ctx, group)
		return err == nil && d[group].State == "Empty"
	})
	dOff, err = adm.DeleteOffsets(ctx, group, kadm.TopicsSet{topic: {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	if err, ok := dOff.Lookup(topic, 0); !ok || err != nil {
		t.Fatalf("DeleteOffsets of an empty group: %v (found %v)", err, ok)
	}
	fetched, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := fetched.Lookup(topic, 0); ok {
		t.Fatalf("partition 0's offset survived DeleteOffsets: %v", fetched)
	}
	if o, ok := fetched.Lookup(topic, 1); !ok || o.At != ends[1] {
		t.Fatalf("partition 1's offset: %+v, want %d", o, ends[1])
	}
	del, err = adm.DeleteGroups(ctx, group)
	if err != nil || del[group].Err != nil {
		t.Fatalf("DeleteGroups of an empty group: %v, %v", err, del[group].Err)
	}
	if listed, err := adm.ListGroups(ctx); err != nil || len(listed) != 0 {
		t.Fatalf("ListGroups after the delete: %v, %v", listed, err)
	}

	// A simple commit: no member, generation -1.
	simple := kadm.Offsets{}
	simple.Add(kadm.Offset{Topic: topic, Partition: 1, At: 7, LeaderEpoch: -1})
	if resp, err := adm.CommitOffsets(ctx, "g-simple", simple); err != nil || resp.Error() != nil {
		t.Fatalf("simple commit: %v, %v", err, resp.Error())
	}
	requireCommitted(t, adm, "g-simple", topic, map[int32]int64{1: 7})

	// Offsets of a topic or partition that does not exist are refused, as
	// in Kafka; the others in the same request are committed.
	mixed := kadm.Offsets{}
	mixed.Add(kadm.Offset{Topic: "no-such-topic", Partition: 0, At: 1, LeaderEpoch: -1})
	mixed.Add(kadm.Offset{Topic: topic, Partition: 99, At: 1, LeaderEpoch: -1})
	mixed.Add(kadm.Offset{Topic: topic, Partition: 0, At: 3, LeaderEpoch: -1})
	resp, err := adm.CommitOffsets(ctx, "g-simple", mixed)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		topic     string
		partition int32
		want      error
	}{{"no-such-topic", 0, kerr.UnknownTopicOrPartition}, {topic, 99, kerr.UnknownTopicOrPartition}, {topic, 0, nil}} {
		got, ok := resp.Lookup(c.topic, c.partition)
		if !ok || !errors.Is(got.Err, c.want) && got.Err != c.want {
			t.Fatalf("commit of %s/%d: %v (found %v), want %v", c.topic, c.partition, got.Err, ok, c.want)
		}
	}
	requireCommitted(t, adm, "g-simple", topic, map[int32]int64{0: 3, 1: 7})

	// Requests naming several groups are split across coordinator
	// partitions and merged: describe, fetch (OffsetFetch v8+) and delete.
	var many []string
	for i := range 6 {
		g := fmt.Sprintf("g-many-%d", i)
		many = append(many, g)
		o := kadm.Offsets{}
		o.Add(kadm.Offset{Topic: topic, Partition: 0, At: int64(i + 1), LeaderEpoch: -1})
		if resp, err := adm.CommitOffsets(ctx, g, o); err != nil || resp.Error() != nil {
			t.Fatalf("commit for %s: %v, %v", g, err, resp.Error())
		}
	}
	fetchedMany := adm.FetchManyOffsets(ctx, many...)
	for i, g := range many {
		o, ok := fetchedMany[g].Fetched.Lookup(topic, 0)
		if fetchedMany[g].Err != nil || !ok || o.At != int64(i+1) {
			t.Fatalf("FetchManyOffsets %s: err %v, %+v, want %d", g, fetchedMany[g].Err, o, i+1)
		}
	}
	describedMany, err := adm.DescribeGroups(ctx, many...)
	if err != nil || len(describedMany) != len(many) {
		t.Fatalf("DescribeGroups of %d groups: %v, %v", len(many), describedMany, err)
	}
	for _, g := range many {
		if d := describedMany[g]; d.Err != nil || d.State != "Empty" {
			t.Fatalf("DescribeGroups %s: %+v", g, d)
		}
	}
	deletedMany, err := adm.DeleteGroups(ctx, many...)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range many {
		if deletedMany[g].Err != nil {
			t.Fatalf("DeleteGroups %s: %v", g, deletedMany[g].Err)
		}
	}

	details, err := adm.ListTopicsWithInternal(ctx, "__consumer_offsets")
	if err != nil {
		t.Fatal(err)
	}
	if td := details["__consumer_offsets"]; td.Err != nil || !td.IsInternal || len(td.Partitions) != 10 {
		t.Fatalf("__consumer_offsets metadata: err %v, internal %v, %d partitions", td.Err, td.IsInternal, len(td.Partitions))
	}
	delTopic, err := adm.DeleteTopics(ctx, "__consumer_offsets")
	if err != nil {
		t.Fatal(err)
	}
	if delTopic["__consumer_offsets"].Err == nil {
		t.Fatal("deleting __consumer_offsets succeeded")
	}
	grown, err := adm.CreatePartitions(ctx, 20, "__consumer_offsets")
	if err != nil {
		t.Fatal(err)
	}
	if grown["__consumer_offsets"].Err == nil {
		t.Fatal("growing __consumer_offsets succeeded")
	}
	err = newClient(t, b.Addr).ProduceSync(ctx, &kgo.Record{Topic: "__consumer_offsets", Value: []byte("x")}).FirstErr()
	if !errors.Is(err, kerr.InvalidTopicException) {
		t.Fatalf("producing to __consumer_offsets: %v, want INVALID_TOPIC_EXCEPTION", err)
	}
}

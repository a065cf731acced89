package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
)

// reassignNodes starts a single-voter quorum and nodes 1 and 2,
// registered and unfenced, with topic name of one partition on broker 1
// alone.
func reassignNodes(t *testing.T, name string) (*metadata.Store, map[int32]*replicaNode) {
	t.Helper()
	meta := openTestQuorum(t)
	nodes := startTwoNodes(t, meta)
	if _, err := meta.CreateTopic(t.Context(), metadata.CreateTopic{Name: name, Assignments: [][]int32{{1}}}); err != nil {
		t.Fatal(err)
	}
	return meta, nodes
}

// ackedProducer produces "v0", "v1", … to partition 0 of topic with
// acks=all and idempotence, one at a time, until stop; acked are the
// values acknowledged.
type ackedProducer struct {
	mu    sync.Mutex
	acked []string
	errs  []error
	stop  func()
}

func startAckedProducer(t *testing.T, topic string, seeds ...string) *ackedProducer {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DisableClientMetrics(), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RecordDeliveryTimeout(time.Minute), kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	ap := &ackedProducer{}
	go func() {
		defer close(done)
		for i := 0; ctx.Err() == nil; i++ {
			v := fmt.Sprintf("v%d", i)
			err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr()
			ap.mu.Lock()
			if err == nil {
				ap.acked = append(ap.acked, v)
			} else if ctx.Err() == nil {
				ap.errs = append(ap.errs, err)
			}
			ap.mu.Unlock()
		}
	}()
	var once sync.Once
	ap.stop = func() {
		once.Do(func() {
			cancel()
			<-done
			cl.Close()
		})
	}
	t.Cleanup(ap.stop)
	return ap
}

// count is how many values were acknowledged so far.
func (ap *ackedProducer) count() int {
	ap.mu.Lock()
	defer ap.mu.Unlock()
	return len(ap.acked)
}

// reassignAndWait asks, through adm, for partition 0 of topic to move
// to replicas, and polls ListPartitionReassignments until it is done.
func reassignAndWait(t *testing.T, adm *kadm.Client, meta *metadata.Store, topic string, replicas ...int32) {
	t.Helper()
	var req kadm.AlterPartitionAssignmentsReq
	req.Assign(topic, 0, replicas)
	resp, err := adm.AlterPartitionAssignments(t.Context(), req)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("reassigning %s-0 to %v: %v", topic, replicas, err)
	}
	var set kadm.TopicsSet
	set.Add(topic, 0)
	waitUntil(t, fmt.Sprintf("the reassignment of %s-0 to %v to complete", topic, replicas), func() bool {
		listed, err := adm.ListPartitionReassignments(t.Context(), set)
		if err != nil {
			t.Fatal(err)
		}
		return len(listed.Sorted()) == 0
	})
	p := meta.Image().Topics[topic].Partitions[0]
	if !slices.Equal(p.Replicas, replicas) || !slices.Equal(p.ISR, replicas) || p.Leader != replicas[0] {
		t.Fatalf("%s-0 after its reassignment to %v: %+v", topic, replicas, p)
	}
}

// readAll reads partition 0 of topic from its start to its high
// watermark through seed.
func readAll(t *testing.T, seed, topic string) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seed), kgo.DisableClientMetrics(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(t.Context(), topic)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup(topic, 0)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var out []string
	for int64(len(out)) < end.Offset {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read %d of %d records: %v", len(out), end.Offset, err)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Logf("fetching: %v", err) })
		fs.EachRecord(func(r *kgo.Record) { out = append(out, string(r.Value)) })
	}
	return out
}

// TestReassignMovesPartitionWhileProducing: a partition on broker 1 alone
// moves to broker 2 (AlterPartitionReassignments through kadm, polled
// with ListPartitionReassignments) while an idempotent acks=all producer
// writes to it: broker 2 then leads with every record, in order, none
// twice and no acknowledged one lost, and broker 1 has deleted its copy.
// Growing it back onto both brokers then works too.
func TestReassignMovesPartitionWhileProducing(t *testing.T) {
	const topic = "mv"
	meta, nodes := reassignNodes(t, topic)
	tp := base.TopicPartition{Topic: topic, Partition: 0}
	waitUntil(t, "broker 1 to lead", func() bool {
		p, ok := nodes[1].broker.Partition(tp)
		return ok && p.IsLeader()
	})
	prod := startAckedProducer(t, topic, nodes[1].addr, nodes[2].addr)
	waitUntil(t, "records before the move", func() bool { return prod.count() >= 200 })

	adm, err := kgo.NewClient(kgo.SeedBrokers(nodes[2].addr), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	reassignAndWait(t, kadm.NewClient(adm), meta, topic, 2)

	before := prod.count()
	waitUntil(t, "records after the move", func() bool { return prod.count() >= before+200 })
	prod.stop()
	if len(prod.errs) > 0 {
		t.Errorf("%d produce errors, first %v", len(prod.errs), prod.errs[0])
	}

	waitUntil(t, "broker 1 to delete its copy", func() bool {
		_, hosted := nodes[1].broker.Partition(tp)
		_, err := os.Stat(filepath.Join(nodes[1].broker.DataDir(), "mv-0"))
		return !hosted && os.IsNotExist(err)
	})
	p2, ok := nodes[2].broker.Partition(tp)
	if !ok || !p2.IsLeader() || p2.Offsets().LogStart != 0 {
		t.Fatalf("broker 2 after the move: hosted %v", ok)
	}
	got := readAll(t, nodes[2].addr, topic)
	checkNothingLost(t, got, prod.acked)

	// Grow back onto both brokers: broker 1 copies the log again.
	reassignAndWait(t, kadm.NewClient(adm), meta, topic, 2, 1)
	waitUntil(t, "broker 1 to catch up", func() bool {
		p1, ok := nodes[1].broker.Partition(tp)
		return ok && !p1.IsLeader() && p1.Offsets().LogEnd == p2.Offsets().LogEnd
	})
	p1, _ := nodes[1].broker.Partition(tp)
	if string(logBytes(t, p1)) != string(logBytes(t, p2)) {
		t.Fatal("broker 1's new copy differs from broker 2's log")
	}
}

// checkNothingLost checks that log holds every value of acked, each once,
// in the order produced ("v0", "v1", …), with nothing but such values.
func checkNothingLost(t *testing.T, log, acked []string) {
	t.Helper()
	seen := map[string]int{}
	for i, v := range log {
		if j, dup := seen[v]; dup {
			t.Errorf("%q at offsets %d and %d", v, j, i)
		}
		seen[v] = i
	}
	for _, v := range acked {
		if _, ok := seen[v]; !ok {
			t.Errorf("acknowledged %q is lost (log of %d records, %d acknowledged)", v, len(log), len(acked))
		}
	}
	for i, v := range log {
		if want := fmt.Sprintf("v%d", i); v != want {
			t.Fatalf("offset %d holds %q, want %q (log of %d records, %d acknowledged)", i, v, want, len(log), len(acked))
		}
	}
	t.Logf("%d records, %d acknowledged, none lost", len(log), len(acked))
}

package e2e

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// shareEarliest sets group's share.auto.offset.reset to earliest (a share
// group starts at the end of the log otherwise), as franz-go's docs say.
func shareEarliest(t *testing.T, addr, group string) {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Value, c.Op = "share.auto.offset.reset", kmsg.StringPtr("earliest"), kmsg.IncrementalAlterConfigOpSet
	rr.Configs = append(rr.Configs, c)
	req.Resources = append(req.Resources, rr)
	resp, err := req.RequestWith(testContext(t, 10*time.Second), newClient(t, addr))
	if err == nil {
		err = kerr.ErrorForCode(resp.Resources[0].ErrorCode)
	}
	if err != nil {
		t.Fatalf("share.auto.offset.reset=earliest on group %s: %v", group, err)
	}
}

// shareRecords counts the records share consumers received, by partition
// and offset, and how often each was delivered.
type shareRecords struct {
	mu   sync.Mutex
	seen map[string]int
	max  map[string]int32 // highest delivery count seen
}

func newShareRecords() *shareRecords {
	return &shareRecords{seen: map[string]int{}, max: map[string]int32{}}
}

func (s *shareRecords) add(r *kgo.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := fmt.Sprintf("%d/%d", r.Partition, r.Offset)
	s.seen[k]++
	s.max[k] = max(s.max[k], r.DeliveryCount())
}

func (s *shareRecords) distinct() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.seen)
}

func (s *shareRecords) duplicates() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for k, n := range s.seen {
		if n > 1 {
			out = append(out, fmt.Sprintf("%s x%d", k, n))
		}
	}
	return out
}

// startShareConsumer is a kgo share group member of group reading topic,
// accepting every record (kgo accepts at the next poll), into got, until
// the returned stop is called or the test ends.
func startShareConsumer(t *testing.T, addr, group, topic string, got *shareRecords, opts ...kgo.Opt) (stop func()) {
	t.Helper()
	cl := newClient(t, addr, append([]kgo.Opt{kgo.ShareGroup(group), kgo.ConsumeTopics(topic)}, opts...)...)
	pollCtx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for pollCtx.Err() == nil {
			cl.PollFetches(pollCtx).EachRecord(func(r *kgo.Record) {
				got.add(r)
				r.Ack(kgo.AckAccept)
			})
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
			flushCtx, flushCancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer flushCancel()
			if err := cl.FlushAcks(flushCtx); err != nil {
				t.Errorf("flushing acknowledgements: %v", err)
			}
			cl.Close()
		})
	}
	t.Cleanup(stop)
	return stop
}

func waitShare(t *testing.T, got *shareRecords, want int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for got.distinct() < want {
		if time.Now().After(deadline) {
			t.Fatalf("share consumers received %d distinct records of %d within %v", got.distinct(), want, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestShareGroupQueue: two franz-go share consumers of one group split a
// topic's records, each record delivered once (they accept what they
// get); ShareGroupDescribe and ListGroups show the group; once they leave,
// a new member of the group reads only what was produced since, and
// another share group reads everything again.
func TestShareGroupQueue(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	adm := newAdmin(t, b.Addr)
	createTopic(t, adm, "queue", 3, nil)
	shareEarliest(t, b.Addr, "workers")
	prod := newClient(t, b.Addr)
	produceN(t, prod, "queue", 300)

	got := newShareRecords()
	stopA := startShareConsumer(t, b.Addr, "workers", "queue", got)
	stopB := startShareConsumer(t, b.Addr, "workers", "queue", got)
	waitShare(t, got, 300, 30*time.Second)

	described, err := adm.DescribeShareGroups(testContext(t, 10*time.Second), "workers")
	if err != nil {
		t.Fatalf("DescribeShareGroups: %v", err)
	}
	if d := described["workers"]; d.Err != nil || len(d.Members) != 2 || d.GroupState != "Stable" {
		t.Fatalf("described share group: %+v", d)
	}
	stopA()
	stopB()
	if d := got.duplicates(); len(d) > 0 {
		t.Fatalf("records delivered more than once while every one was accepted: %v", d)
	}

	produceN(t, prod, "queue", 60)
	again := newShareRecords()
	startShareConsumer(t, b.Addr, "workers", "queue", again)
	waitShare(t, again, 60, 30*time.Second)
	time.Sleep(500 * time.Millisecond)
	if n := again.distinct(); n != 60 {
		t.Fatalf("a new member got %d records; want only the 60 produced since the group accepted the first 300", n)
	}

	shareEarliest(t, b.Addr, "auditors")
	all := newShareRecords()
	startShareConsumer(t, b.Addr, "auditors", "queue", all)
	waitShare(t, all, 360, 30*time.Second)
}

// TestShareGroupDeletedStartsOver: DeleteGroups of an empty share group
// deletes what it delivered (its share-partitions' state), so a group of
// the same id starts over by its share.auto.offset.reset; a share group
// with members is not deleted (NON_EMPTY_GROUP).
func TestShareGroupDeletedStartsOver(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	adm := newAdmin(t, b.Addr)
	createTopic(t, adm, "redo", 2, nil)
	shareEarliest(t, b.Addr, "once")
	produceN(t, newClient(t, b.Addr), "redo", 50)

	first := newShareRecords()
	stop := startShareConsumer(t, b.Addr, "once", "redo", first)
	waitShare(t, first, 50, 30*time.Second)
	deleted, err := adm.DeleteGroups(testContext(t, 10*time.Second), "once")
	if err != nil || !errors.Is(deleted["once"].Err, kerr.NonEmptyGroup) {
		t.Fatalf("deleting a share group with a member: %v %+v", err, deleted)
	}
	stop()
	deadline := time.Now().Add(20 * time.Second)
	for {
		deleted, err = adm.DeleteGroups(testContext(t, 10*time.Second), "once")
		if err == nil && deleted["once"].Err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deleting the share group once empty: %v %+v", err, deleted)
		}
		time.Sleep(100 * time.Millisecond)
	}
	again := newShareRecords()
	startShareConsumer(t, b.Addr, "once", "redo", again)
	waitShare(t, again, 50, 30*time.Second)
}

// TestShareGroupOffsetsAdmin: the share group offset APIs with kadm (what
// kafka-share-groups --describe, --reset-offsets and --delete-offsets
// send): the start offsets and lag of a group that accepted a topic's
// records, the lag growing with new records; a reset to the start makes
// the group read everything again; once its offsets are deleted the group
// starts over by its share.auto.offset.reset; a group with members cannot
// be changed.
func TestShareGroupOffsetsAdmin(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	adm := newAdmin(t, b.Addr)
	createTopic(t, adm, "ledger", 2, nil)
	shareEarliest(t, b.Addr, "clerks")
	prod := newClient(t, b.Addr, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	produceN(t, prod, "ledger", 100)
	got := newShareRecords()
	stop := startShareConsumer(t, b.Addr, "clerks", "ledger", got)
	waitShare(t, got, 100, 30*time.Second)
	_, err := adm.AlterShareGroupOffsets(testContext(t, 10*time.Second), "clerks", kadm.Offsets{"ledger": {0: {Topic: "ledger", Partition: 0, At: 0}}})
	if !errors.Is(err, kerr.NonEmptyGroup) {
		t.Fatalf("altering the offsets of a group with a member: %v", err)
	}
	stop()

	lag := func() (starts []int64, total int64) {
		t.Helper()
		described, err := adm.DescribeShareGroupOffsets(testContext(t, 10*time.Second), "clerks")
		if err != nil || described["clerks"].Err != nil {
			t.Fatalf("DescribeShareGroupOffsets: %v %+v", err, described)
		}
		for p := range int32(2) {
			o, ok := described["clerks"].Offsets.Lookup("ledger", p)
			if !ok || o.Err != nil {
				t.Fatalf("partition %d: %+v", p, o)
			}
			starts, total = append(starts, o.StartOffset), total+o.Lag
		}
		return starts, total
	}
	if starts, total := lag(); starts[0]+starts[1] != 100 || total != 0 {
		t.Fatalf("after accepting everything: starts %v, lag %d", starts, total)
	}
	produceN(t, prod, "ledger", 20)
	if _, total := lag(); total != 20 {
		t.Fatalf("lag %d after 20 more records", total)
	}

	resp, err := adm.AlterShareGroupOffsets(testContext(t, 10*time.Second), "clerks", kadm.Offsets{"ledger": {
		0: {Topic: "ledger", Partition: 0, At: 0}, 1: {Topic: "ledger", Partition: 1, At: 0}}})
	if err != nil || resp.Error() != nil {
		t.Fatalf("resetting the group to the start: %v %v", err, resp.Error())
	}
	if starts, total := lag(); starts[0] != 0 || starts[1] != 0 || total != 120 {
		t.Fatalf("after the reset: starts %v, lag %d", starts, total)
	}
	again := newShareRecords()
	stop = startShareConsumer(t, b.Addr, "clerks", "ledger", again)
	waitShare(t, again, 120, 30*time.Second)
	stop()

	deleted, err := adm.DeleteShareGroupOffsets(testContext(t, 10*time.Second), "clerks", "ledger")
	if err != nil || deleted.Error() != nil {
		t.Fatalf("deleting the group's offsets: %v %v", err, deleted.Error())
	}
	described, err := adm.DescribeShareGroupOffsets(testContext(t, 10*time.Second), "clerks")
	if err != nil || len(described["clerks"].Offsets) != 0 {
		t.Fatalf("described after the delete: %v %+v", err, described)
	}
	fresh := newShareRecords()
	startShareConsumer(t, b.Addr, "clerks", "ledger", fresh)
	waitShare(t, fresh, 120, 30*time.Second)
}

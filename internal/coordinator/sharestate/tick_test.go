package sharestate

import (
	"maps"
	"slices"
	"testing"
	"time"
)

func TestTickDeletesTheStateOfDeletedTopics(t *testing.T) {
	h := newHarness(t)
	known := map[[16]byte]bool{topicA: true, topicB: true}
	h.opts.PartitionCount = func(id [16]byte) (int32, bool) { return 2, known[id] }
	h.c = New(h.opts)
	for _, s := range []struct {
		group     string
		topic     [16]byte
		partition int32
	}{{group, topicA, 0}, {group, topicA, 1}, {"other", topicB, 1}, {group, topicB, 0}} {
		wantCode(t, "initialize", h.initialize(s.group, s.topic, s.partition, 0, 5), nil)
	}
	written := len(h.records)
	h.now = h.now.Add(deletedTopicSweep)
	h.absorb(h.c.Tick(h.now))
	if len(h.records) != written {
		t.Fatalf("a tick with every topic known wrote %d records", len(h.records)-written)
	}

	known[topicB] = false // deleted
	h.now = h.now.Add(deletedTopicSweep - time.Millisecond)
	h.absorb(h.c.Tick(h.now))
	if len(h.records) != written {
		t.Fatal("a tick within a second of the last sweep swept again")
	}
	h.now = h.now.Add(time.Millisecond)
	h.absorb(h.c.Tick(h.now))
	var tombstones []string
	for _, r := range h.records[written:] {
		if r.Value != nil {
			t.Fatalf("the tick wrote a record that is not a tombstone: %+v", r)
		}
		_, k, err := readKey(r.Key)
		if err != nil {
			t.Fatal(err)
		}
		tombstones = append(tombstones, k.String())
	}
	want := []string{Key(group, topicB, 0), Key("other", topicB, 1)}
	if !slices.Equal(tombstones, want) {
		t.Fatalf("tombstones %q, want %q (by group, topic, partition)", tombstones, want)
	}
	left := slices.Sorted(maps.Keys(snapshotOf(h.c)))
	if wantLeft := []string{Key(group, topicA, 0), Key(group, topicA, 1)}; !slices.Equal(left, wantLeft) {
		t.Fatalf("states left %q, want %q", left, wantLeft)
	}
	wantCode(t, "read of a kept state", h.read(group, topicA, 1, 0).ErrorCode, nil)

	written = len(h.records)
	h.now = h.now.Add(deletedTopicSweep)
	h.absorb(h.c.Tick(h.now))
	if len(h.records) != written {
		t.Fatal("a second sweep wrote again")
	}
	h.reload() // what was deleted stays deleted
	if got := slices.Sorted(maps.Keys(snapshotOf(h.c))); !slices.Equal(got, left) {
		t.Fatalf("after a reload states %q, want %q", got, left)
	}
}

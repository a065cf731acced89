package tier

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/objstore"
)

func TestStatsCountsPerPartition(t *testing.T) {
	var s Stats
	a, b := base.TopicPartition{Topic: "a", Partition: 1}, base.TopicPartition{Topic: "a", Partition: 0}
	s.Track(a)
	s.Track(b)
	s.copyStarted(a)
	s.copied(a, 100)
	s.copyStarted(a)
	s.copyFailed(a)
	s.fetched(b, 40, nil)
	s.fetched(b, 0, errors.New("boom"))
	s.deleteStarted(b)
	s.deleteFailed(b)
	want := []PartitionStats{
		{TP: b, FetchRequests: 2, FetchErrors: 1, FetchBytes: 40, DeleteRequests: 1, DeleteErrors: 1},
		{TP: a, CopyRequests: 2, CopyErrors: 1, CopyBytes: 100},
	}
	if got := s.Snapshot(); !slices.Equal(got, want) {
		t.Fatalf("Snapshot =\n %+v, want\n %+v", got, want)
	}
}

func TestNilStatsCountsNothing(t *testing.T) {
	var s *Stats
	s.Track(testTP)
	s.copyStarted(testTP)
	s.copied(testTP, 1)
	s.copyFailed(testTP)
	s.fetched(testTP, 1, nil)
	s.deleteStarted(testTP)
	s.deleteFailed(testTP)
	s.Forget(testTP)
	if got := s.Snapshot(); got != nil {
		t.Fatalf("nil Stats snapshot %v", got)
	}
}

// A partition is counted only while tracked: one never tracked, or
// forgotten, has no counts (its topic deleted, its series must leave
// /metrics and not come back from a read still in flight); the other
// partitions keep theirs; tracked again (a topic created again under the
// same name) it counts from zero; and a partition tracked but never
// counted has no counts either, so a topic that never used the remote
// tier has no series.
func TestStatsForgetDropsAPartitionsCounts(t *testing.T) {
	var s Stats
	gone0, gone1 := base.TopicPartition{Topic: "gone", Partition: 0}, base.TopicPartition{Topic: "gone", Partition: 1}
	kept, idle := base.TopicPartition{Topic: "kept", Partition: 0}, base.TopicPartition{Topic: "idle", Partition: 0}
	never := base.TopicPartition{Topic: "never", Partition: 0}
	for _, tp := range []base.TopicPartition{gone0, gone1, kept, idle} {
		s.Track(tp)
	}
	for _, tp := range []base.TopicPartition{gone0, gone1, kept, never} {
		s.copyStarted(tp)
		s.copied(tp, 10)
		s.fetched(tp, 5, nil)
		s.deleteStarted(tp)
	}
	s.Track(kept) // tracked twice: keeps its counts
	s.Forget(gone0)
	s.Forget(gone1)
	s.fetched(gone0, 5, nil) // a read that finished after the topic went
	s.deleteStarted(gone1)   // the deleted topic's remote data
	counted := PartitionStats{CopyRequests: 1, CopyBytes: 10, FetchRequests: 1, FetchBytes: 5, DeleteRequests: 1}
	withTP := func(tp base.TopicPartition, p PartitionStats) PartitionStats { p.TP = tp; return p }
	if got, want := s.Snapshot(), []PartitionStats{withTP(kept, counted)}; !slices.Equal(got, want) {
		t.Fatalf("after Forget(gone) Snapshot =\n %+v, want\n %+v", got, want)
	}

	s.Track(gone0)
	s.fetched(gone0, 7, nil)
	want := []PartitionStats{{TP: gone0, FetchRequests: 1, FetchBytes: 7}, withTP(kept, counted)}
	if got := s.Snapshot(); !slices.Equal(got, want) {
		t.Fatalf("after the topic came back Snapshot =\n %+v, want\n %+v", got, want)
	}
	if n := len(s.mu.parts); n != 3 {
		t.Fatalf("Stats holds %d partitions, want the 3 tracked", n)
	}
}

func TestStatsConcurrentCounts(t *testing.T) {
	var s Stats
	s.Track(testTP)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				s.copied(testTP, 2)
				_ = s.Snapshot()
			}
		})
	}
	wg.Wait()
	if got := s.Snapshot(); len(got) != 1 || got[0].CopyBytes != 16000 {
		t.Fatalf("Snapshot %+v, want 16000 copy bytes", got)
	}
}

// Counting races with the broker forgetting and tracking the partition
// again (a topic deleted and created while a read is in flight): nothing
// breaks, and once tracked again the partition counts from zero.
func TestStatsForgetWhileCounting(t *testing.T) {
	var s Stats
	s.Track(testTP)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 1000 {
				s.fetched(testTP, 1, nil)
			}
		})
	}
	wg.Go(func() {
		for range 100 {
			s.Forget(testTP)
			s.Track(testTP)
			_ = s.Snapshot()
		}
	})
	wg.Wait()
	s.Forget(testTP)
	s.Track(testTP)
	s.fetched(testTP, 1, nil)
	if got, want := s.Snapshot(), []PartitionStats{{TP: testTP, FetchRequests: 1, FetchBytes: 1}}; !slices.Equal(got, want) {
		t.Fatalf("Snapshot = %+v, want %+v", got, want)
	}
}

// The executors count what they do into their Stats: each copy, read and
// delete attempt, its failure, and the bytes of those that succeeded.
func TestExecutorsCountIntoStats(t *testing.T) {
	l := newTestLog(t, 60, 8<<10)
	r := newRig(t, objstore.NewMem())
	stats := &Stats{}
	stats.Track(testTP)
	r.copier.Stats, r.deleter.Stats, r.reader.Stats = stats, stats, stats
	segs := r.copyAll(l)
	var copied int64
	for _, s := range segs {
		copied += s.SizeBytes
	}

	failPut := true
	r.setInject(func(op objstore.Op, key string) error {
		if op == objstore.OpPut && failPut {
			return fmt.Errorf("injected: %w", objstore.ErrTransient)
		}
		if op == objstore.OpDelete && strings.HasSuffix(key, ".index") {
			return fmt.Errorf("injected: %w", objstore.ErrTransient)
		}
		return nil
	})
	task := PlanCopies(LocalSegmentsOf(l.Segments()), PartitionView{loaded: true}, epoch0, l.End(), CopyConfig{}, 0)[0]
	if _, err := r.copier.Copy(t.Context(), task, LogSource{Log: l}, testTopicID, testTP, 0); err == nil {
		t.Fatal("Copy succeeded through a failing store")
	}
	failPut = false

	got, err := r.reader.Read(t.Context(), segs[0], segs[0].Range.Start, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.reader.Read(t.Context(), segs[0], segs[0].Range.End, 1<<20); err == nil {
		t.Fatal("Read past the segment succeeded")
	}
	if err := r.deleter.Delete(t.Context(), DeleteTask{Segment: segs[0], Reason: DeleteRetention}, 0); err == nil {
		t.Fatal("Delete succeeded through a failing store")
	}

	want := []PartitionStats{{
		TP:           testTP,
		CopyRequests: int64(len(segs)) + 1, CopyErrors: 1, CopyBytes: copied,
		FetchRequests: 2, FetchErrors: 1, FetchBytes: int64(len(got)),
		DeleteRequests: 1, DeleteErrors: 1,
	}}
	if snap := stats.Snapshot(); !slices.Equal(snap, want) {
		t.Fatalf("Snapshot =\n %+v, want\n %+v", snap, want)
	}
}

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
	s.copyStarted(testTP)
	s.copied(testTP, 1)
	s.copyFailed(testTP)
	s.fetched(testTP, 1, nil)
	s.deleteStarted(testTP)
	s.deleteFailed(testTP)
	if got := s.Snapshot(); got != nil {
		t.Fatalf("nil Stats snapshot %v", got)
	}
}

func TestStatsConcurrentCounts(t *testing.T) {
	var s Stats
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

// The executors count what they do into their Stats: each copy, read and
// delete attempt, its failure, and the bytes of those that succeeded.
func TestExecutorsCountIntoStats(t *testing.T) {
	l := newTestLog(t, 60, 8<<10)
	r := newRig(t, objstore.NewMem())
	stats := &Stats{}
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

package broker

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/partition"
)

func TestPickDirtiest(t *testing.T) {
	tests := []struct {
		name   string
		cands  []cleanerCandidate
		want   int
		wantOK bool
	}{
		{"none", nil, 0, false},
		{"one", []cleanerCandidate{{ratio: 0.6}}, 0, true},
		{"highest ratio", []cleanerCandidate{{ratio: 0.6}, {ratio: 0.9}, {ratio: 0.7}}, 1, true},
		{"past max lag beats a dirtier log", []cleanerCandidate{{ratio: 0.9}, {ratio: 0.1, forced: true}}, 1, true},
		{"among forced, the dirtiest", []cleanerCandidate{{ratio: 0.3, forced: true}, {ratio: 0.99}, {ratio: 0.4, forced: true}}, 2, true},
		{"ties keep the first", []cleanerCandidate{{ratio: 0.5}, {ratio: 0.5}}, 0, true},
		{"a dirtier log does not beat one past max lag", []cleanerCandidate{{ratio: 0.1, forced: true}, {ratio: 0.9}}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := pickDirtiest(tt.cands)
			if ok != tt.wantOK || (ok && got != tt.want) {
				t.Fatalf("pickDirtiest = %d, %v; want %d, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

// TestCleanerOptionsValidate: the backoff and the key maps' memory must
// be positive; the I/O rate may be 0 (no throttle), not negative.
func TestCleanerOptionsValidate(t *testing.T) {
	good := CleanerOptions{Backoff: time.Second, DedupeBytes: 1 << 20}
	for _, tc := range []struct {
		name   string
		change func(*CleanerOptions)
		ok     bool
	}{
		{"good", func(*CleanerOptions) {}, true},
		{"no backoff", func(o *CleanerOptions) { o.Backoff = 0 }, false},
		{"no key map", func(o *CleanerOptions) { o.DedupeBytes = 0 }, false},
		{"no throttle", func(o *CleanerOptions) { o.IOBytesPerSecond = 0 }, true},
		{"negative rate", func(o *CleanerOptions) { o.IOBytesPerSecond = -1 }, false},
	} {
		o := good
		tc.change(&o)
		if err := o.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

// TestCleanerMapShare: each thread's key map gets its share of
// DedupeBytes, at least a byte; Threads 0 is one thread.
func TestCleanerMapShare(t *testing.T) {
	for _, tc := range []struct {
		o    CleanerOptions
		want int64
	}{
		{CleanerOptions{DedupeBytes: 100}, 100},
		{CleanerOptions{DedupeBytes: 100, Threads: 1}, 100},
		{CleanerOptions{DedupeBytes: 100, Threads: 4}, 25},
		{CleanerOptions{DedupeBytes: 3, Threads: 4}, 1},
	} {
		if got := tc.o.mapBytes(); got != tc.want {
			t.Errorf("%+v: mapBytes %d, want %d", tc.o, got, tc.want)
		}
	}
	if n := (CleanerOptions{}).threads(); n != 1 {
		t.Errorf("Threads 0 runs %d threads, want 1", n)
	}
}

// TestCleanerStateForgetsWhatIsNotHosted: an uncleanable partition no
// longer hosted is forgotten; a hosted one stays set aside.
func TestCleanerStateForgetsWhatIsNotHosted(t *testing.T) {
	var s cleanerState
	kept, gone := &partition.Partition{}, &partition.Partition{}
	s.markUncleanable(kept, errors.New("bad"))
	s.markUncleanable(gone, errors.New("bad"))
	s.forget([]*partition.Partition{kept})
	if !s.isUncleanable(kept) || s.isUncleanable(gone) {
		t.Fatalf("uncleanable: hosted %v (want true), gone %v (want false)", s.isUncleanable(kept), s.isUncleanable(gone))
	}
}

// TestCleanerStatusCounts: a pass's recopy ratio is the bytes it wrote
// over those it read (0 for a pass that read nothing); the counters add
// up over passes.
func TestCleanerStatusCounts(t *testing.T) {
	var s cleanerState
	end := time.Unix(1000, 0)
	s.ran(partition.CleanStats{BytesBefore: 400, BytesAfter: 100}, time.Second, end)
	if st := s.status; st.RecopyRatio != 0.25 || st.LastDuration != time.Second || !st.LastRun.Equal(end) {
		t.Fatalf("after one pass: %+v", st)
	}
	s.ran(partition.CleanStats{}, 2*time.Second, end.Add(time.Minute))
	if st := s.status; st.RecopyRatio != 0 || st.Passes != 2 || st.BytesRead != 400 || st.BytesWritten != 100 {
		t.Fatalf("after two passes: %+v", st)
	}
}

// TestCleanerCleansOnlyWhatIsDue: once a log is clean, the cleaner finds
// nothing to do: a log under min.cleanable.dirty.ratio is not cleaned.
func TestCleanerCleansOnlyWhatIsDue(t *testing.T) {
	meta := openTestMeta(t)
	b := newCompactingTestBroker(t, meta)
	createTopic(t, meta, "due", 1)
	p := hostedPartition(t, b, "due")
	for i := range 60 {
		if _, _, err := p.Append(keyedBatch(fmt.Sprintf("k%d", i%3)), partition.AcksLeader); err != nil {
			t.Fatal(err)
		}
	}
	var cm *partition.CleanerMap
	b.cleanDirtiest(&cm, 1<<20)
	if st := b.CleanerStatus(); st.Passes != 1 || st.MaxDirtyRatio <= 0 {
		t.Fatalf("status %+v after a pass over a dirty log: want 1 pass, and the dirty ratio it saw", st)
	}
	b.RunCleaner(1 << 20)
	if st := b.CleanerStatus(); st.Passes != 1 {
		t.Fatalf("%d passes once the log is clean, want still 1", st.Passes)
	}
}

// TestCleanerSkipsAPartitionBeingCleaned: a partition another cleaner
// thread is cleaning is passed over for the next dirtiest, not waited for.
func TestCleanerSkipsAPartitionBeingCleaned(t *testing.T) {
	meta := openTestMeta(t)
	b := newCompactingTestBroker(t, meta)
	createTopic(t, meta, "busy", 1)
	createTopic(t, meta, "next", 1)
	busy, next := hostedPartition(t, b, "busy"), hostedPartition(t, b, "next")
	dirty := func(p *partition.Partition, n int) {
		for i := range n {
			if _, _, err := p.Append(keyedBatch(fmt.Sprintf("k%d", i%3)), partition.AcksLeader); err != nil {
				t.Fatal(err)
			}
		}
	}
	dirty(next, 60)
	b.RunCleaner(1 << 20)
	dirty(next, 30) // dirty again, less than busy
	dirty(busy, 60)
	if !b.cleaner.claim(busy) {
		t.Fatal("claim")
	}
	b.RunCleaner(1 << 20)
	if st := b.CleanerStatus(); st.Passes != 2 {
		t.Fatalf("%d passes, want 2: next cleaned again while busy is taken", st.Passes)
	}
}

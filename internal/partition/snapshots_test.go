package partition

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition/producers"
)

func snapshotFiles(t testing.TB, dir string) []base.Offset {
	t.Helper()
	offs, err := listSnapshots(dir)
	if err != nil {
		t.Fatal(err)
	}
	return offs
}

func TestSnapshotWrittenAtEachRoll(t *testing.T) {
	e := newEnv(t, smallSegments)
	p := e.open(t)
	const pid = 11
	for i := range 40 {
		before := len(p.log.Segments())
		mustAppend(t, p, batch(t, spec{pid: pid, seq: int32(i), valueBytes: 180}), AcksLeader)
		bases := segmentBases(p)
		offs := snapshotFiles(t, e.dir)
		if len(bases) > before && (len(offs) == 0 || offs[len(offs)-1] != bases[len(bases)-1]) {
			t.Fatalf("append %d rolled to %d, snapshots %v", i, bases[len(bases)-1], offs)
		}
		if len(offs) > snapshotsKept {
			t.Fatalf("%d snapshots kept: %v", len(offs), offs)
		}
	}
	bases := segmentBases(p)
	if got, want := snapshotFiles(t, e.dir), bases[len(bases)-2:]; !slices.Equal(got, want) {
		t.Fatalf("snapshots %v, want the newest two segment bases %v", got, want)
	}
	// Each holds the producer's state before its offset: the last batch ends just below.
	for _, at := range snapshotFiles(t, e.dir) {
		data, err := os.ReadFile(filepath.Join(e.dir, snapshotName(at)))
		if err != nil {
			t.Fatal(err)
		}
		ps, err := decodeSnapshot(data, at)
		if err != nil {
			t.Fatal(err)
		}
		ent, ok := ps.Entry(pid)
		if !ok || ent.Batches[len(ent.Batches)-1].LastOffset != at-1 {
			t.Fatalf("snapshot at %d: %+v, want the last batch ending at %d", at, ent, at-1)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	end := bases[len(bases)-1] // the log end is past it
	offs := snapshotFiles(t, e.dir)
	if len(offs) != snapshotsKept || offs[1] <= end || offs[0] != end {
		t.Fatalf("snapshots after Close %v, want the last roll %d and the log end", offs, end)
	}
}

// pruneSetup writes producer 1's batch at offset 0, rolls many segments
// with producer 2, and deletes the segments holding producer 1's batch. A
// snapshot still knows producer 1; a replay of the remaining log does not.
func pruneSetup(t *testing.T) (*env, *Partition) {
	t.Helper()
	e := newEnv(t, smallSegments)
	p := e.open(t)
	mustAppend(t, p, batch(t, spec{pid: 1, records: 2, valueBytes: 180}), AcksLeader)
	for i := range 30 {
		mustAppend(t, p, batch(t, spec{pid: 2, seq: int32(i), valueBytes: 180}), AcksLeader)
	}
	bases := segmentBases(p)
	if _, err := p.DeleteRecords(bases[3]); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		mustAppend(t, p, batch(t, spec{pid: 2, seq: int32(30 + i), valueBytes: 180}), AcksLeader)
	}
	return e, p
}

// resend reports whether producer 1's first batch is recognized.
func resend(t *testing.T, p *Partition) bool {
	t.Helper()
	return mustAppend(t, p, batch(t, spec{pid: 1, records: 2, valueBytes: 180}), AcksLeader).Duplicate
}

func TestCrashRestoresFromSnapshot(t *testing.T) {
	e, _ := pruneSetup(t)
	if !resend(t, openAt(t, e.crashCopy(t))) {
		t.Fatal("after a crash, producer 1 was forgotten: the snapshot was not used")
	}
}

func TestCorruptSnapshotFallsBack(t *testing.T) {
	e, _ := pruneSetup(t)
	o := e.crashCopy(t)
	offs := snapshotFiles(t, o.Dir)
	if len(offs) != 2 {
		t.Fatalf("snapshots %v, want two", offs)
	}
	corrupt := func(at base.Offset) {
		path := filepath.Join(o.Dir, snapshotName(at))
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		data[len(data)/2] ^= 0xff
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	corrupt(offs[1])
	o2 := o
	o2.Dir = t.TempDir()
	for _, at := range offs {
		copyFile(t, filepath.Join(o.Dir, snapshotName(at)), filepath.Join(o2.Dir, snapshotName(at)))
	}
	corrupt(offs[0])
	entries, _ := os.ReadDir(o.Dir)
	for _, de := range entries {
		if _, ok := parseSnapshotName(de.Name()); !ok {
			copyFile(t, filepath.Join(o.Dir, de.Name()), filepath.Join(o2.Dir, de.Name()))
		}
	}

	// o2: the newest is corrupt, the older one is used.
	p := openAt(t, o2)
	if got := snapshotFiles(t, o2.Dir); !slices.Equal(got, offs[:1]) {
		t.Fatalf("snapshots after open %v, want the corrupt one removed", got)
	}
	if !resend(t, p) {
		t.Fatal("the older snapshot was not used")
	}

	// o: both corrupt, a full replay of the local log. Producer 1 is gone
	// with its segment; producer 2's recent batch is still a duplicate.
	p = openAt(t, o)
	if resend(t, p) {
		t.Fatal("producer 1 known without a usable snapshot")
	}
	res := mustAppend(t, p, batch(t, spec{pid: 2, seq: 39, valueBytes: 180}), AcksLeader)
	if !res.Duplicate {
		t.Fatal("full replay lost producer 2's last batch")
	}
}

func TestSnapshotPastLogEndIsRemoved(t *testing.T) {
	e := newEnv(t)
	p := e.open(t)
	mustAppend(t, p, batch(t, spec{records: 3}), AcksLeader)
	o := e.crashCopy(t)
	// As if a roll snapshot was written but the log's tail was lost.
	ps := producers.New()
	ps.Update(77, 0, producers.BatchMeta{FirstSeq: 0, LastSeq: 0, FirstOffset: 5, LastOffset: 5}, false)
	if err := os.WriteFile(filepath.Join(o.Dir, snapshotName(9)), ps.Snapshot(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(o.Dir, legacySnapshotFile), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	crashed := openAt(t, o)
	if got := snapshotFiles(t, o.Dir); len(got) != 0 {
		t.Fatalf("snapshots %v after open, want the one past the log end removed", got)
	}
	if _, err := os.Stat(filepath.Join(o.Dir, legacySnapshotFile)); !os.IsNotExist(err) {
		t.Fatalf("legacy snapshot still there: %v", err)
	}
	if crashed.mu.producers.Len() != 0 {
		t.Fatal("state of a snapshot past the log end was loaded")
	}
}

func TestDecodeSnapshotRejectsBatchAtOrAfterItsOffset(t *testing.T) {
	ps := producers.New()
	ps.Update(1, 0, producers.BatchMeta{FirstOffset: 3, LastOffset: 4}, false)
	if _, err := decodeSnapshot(ps.Snapshot(), 5); err != nil {
		t.Fatalf("valid at 5: %v", err)
	}
	if _, err := decodeSnapshot(ps.Snapshot(), 4); err == nil {
		t.Fatal("a snapshot at 4 holding offset 4 was accepted")
	}
}

// The estimate of the active segment must never miss a roll, whatever rolls
// it: size, age, a full index, or a config change.
func TestActiveEstimateTracksRolls(t *testing.T) {
	for name, tweak := range map[string]func(*Options){
		"bytes": smallSegments,
		"age":   func(o *Options) { o.Config.SegmentMaxAge = 10 * time.Second },
		"index": func(o *Options) { o.Config.SegmentIndexBytes, o.Config.IndexIntervalBytes = 48, 0 },
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, tweak)
			p := e.open(t)
			rng := rand.New(rand.NewPCG(1, 2))
			rolls := 0
			for i := range 200 {
				if i == 100 {
					// Reopen mid-way: the estimate starts from what is on disk.
					if err := p.Close(); err != nil {
						t.Fatal(err)
					}
					p = e.open(t)
				}
				if i == 150 {
					c := e.opts.Config
					c.SegmentBytes = 600
					if err := p.SetConfig(c); err != nil {
						t.Fatal(err)
					}
				}
				e.clock.Advance(time.Duration(rng.IntN(3000)) * time.Millisecond)
				before := segmentBases(p)
				mustAppend(t, p, batch(t, spec{records: 1 + rng.IntN(3), valueBytes: rng.IntN(300)}), AcksLeader)
				after := segmentBases(p)
				active := after[len(after)-1]
				if p.mu.active.base != active {
					t.Fatalf("append %d: estimate at %d, active segment at %d", i, p.mu.active.base, active)
				}
				if len(after) > len(before) {
					rolls++
					if offs := snapshotFiles(t, e.dir); !slices.Contains(offs, active) {
						t.Fatalf("append %d rolled to %d without a snapshot (%v)", i, active, offs)
					}
				}
			}
			if rolls < 5 {
				t.Fatalf("only %d rolls: the test does not exercise rolling", rolls)
			}
		})
	}
}

func TestSnapshotsToPrune(t *testing.T) {
	offs := []base.Offset{10, 20, 30, 40, 50}
	for name, tc := range map[string]struct {
		tiered     bool
		localStart base.Offset
		want       []base.Offset
	}{
		"not tiered":                   {false, 0, []base.Offset{10, 20, 30}},
		"not tiered, start moved":      {false, 35, []base.Offset{10, 20, 30}},
		"tiered, all local":            {true, 0, []base.Offset{}},
		"tiered, start moved":          {true, 25, []base.Offset{10, 20}},
		"tiered, start on a snapshot":  {true, 30, []base.Offset{10, 20}},
		"tiered keeps the newest two":  {true, 100, []base.Offset{10, 20, 30}},
		"tiered, start below them all": {true, 5, []base.Offset{}},
	} {
		if got := snapshotsToPrune(offs, tc.tiered, tc.localStart); !slices.Equal(got, tc.want) {
			t.Errorf("%s: prune %v, want %v", name, got, tc.want)
		}
	}
}

// A tiered partition keeps the snapshot of every local segment, so the
// tier can upload each with its segment however late the copy runs.
func TestTieredPartitionKeepsASnapshotPerSegment(t *testing.T) {
	e := newEnv(t, smallSegments, func(o *Options) { o.Config.Tiered = true })
	p := e.open(t)
	for i := range 40 {
		mustAppend(t, p, batch(t, spec{pid: 11, seq: int32(i), valueBytes: 180}), AcksLeader)
	}
	bases := segmentBases(p)
	if len(bases) < 4 {
		t.Fatalf("only %d segments", len(bases))
	}
	if got, want := snapshotFiles(t, e.dir), bases[1:]; !slices.Equal(got, want) {
		t.Fatalf("snapshots %v, want one at each rolled segment's base %v", got, want)
	}
}

// A producer snapshot below the local log start (left by a failed prune,
// or older than every segment retention kept) is not restored from: its
// replay would start outside the log. Open rebuilds the state from the
// local log instead.
func TestSnapshotBelowLocalLogStartIsNotUsed(t *testing.T) {
	e := newEnv(t, smallSegments)
	p := e.open(t)
	for seq := range int32(12) {
		mustAppend(t, p, batch(t, spec{pid: 7, seq: seq, valueBytes: 300}), AcksAll)
	}
	bases := segmentBases(p)
	if len(bases) < 4 {
		t.Fatalf("segments %v, want several", bases)
	}
	if _, err := p.DeleteRecords(bases[2]); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	for _, o := range snapshotFiles(t, e.dir) {
		if err := os.Remove(filepath.Join(e.dir, snapshotName(o))); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(e.dir, snapshotName(bases[1])), producers.New().Snapshot(), 0o644); err != nil {
		t.Fatal(err)
	}
	p = e.open(t)
	ent, ok := p.mu.producers.Entry(7)
	if !ok || len(ent.Batches) == 0 || ent.Batches[len(ent.Batches)-1].LastSeq != 11 {
		t.Fatalf("producer 7 after reopening: %+v, %v; want its last sequence 11 from the log", ent, ok)
	}
}

// Open's replay reads the log in chunks of 1 MiB; a log longer than one,
// whose offset index holds no entry past its start, is replayed once,
// every batch applied exactly once.
func TestReplayLongerThanOneChunk(t *testing.T) {
	e := newEnv(t, func(o *Options) {
		o.Config.SegmentBytes = 8 << 20
		o.Config.IndexIntervalBytes = 8 << 20 // no index entry past the segment's start
	})
	p := e.open(t)
	const batches = 25 // of 100 kB: more than one chunk of 1 MiB
	for seq := range int32(batches) {
		mustAppend(t, p, batch(t, spec{pid: 7, seq: seq, valueBytes: 100_000}), AcksAll)
	}
	p = openAt(t, e.crashCopy(t)) // no snapshot: the whole log is replayed
	ent, ok := p.mu.producers.Entry(7)
	if !ok || len(ent.Batches) != producers.MaxBatches || ent.Batches[len(ent.Batches)-1].LastSeq != batches-1 {
		t.Fatalf("producer 7 after the replay: %+v, %v", ent, ok)
	}
	if res := mustAppend(t, p, batch(t, spec{pid: 7, seq: batches - 1, valueBytes: 100_000}), AcksAll); !res.Duplicate {
		t.Fatalf("the last batch sent again: %+v, want a duplicate", res)
	}
}

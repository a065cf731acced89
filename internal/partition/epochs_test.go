package partition

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

func TestLeaderEpochCachePersisted(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.LeaderEpoch = 1 })
	p := e.open(t)
	mustAppend(t, p, batch(t, spec{records: 3}), AcksLeader)
	if err := p.BecomeLeader(2); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, p, batch(t, spec{records: 2}), AcksLeader)
	if err := p.BecomeLeader(1); err != nil { // stale: ignored
		t.Fatal(err)
	}
	check := func(p *Partition, when string) {
		t.Helper()
		for _, tc := range []struct {
			asked, epoch base.Epoch
			end          base.Offset
		}{{1, 1, 3}, {2, 2, 5}, {0, 0, 0}} {
			if ep, end, ok := p.EndOffsetForEpoch(tc.asked); !ok || ep != tc.epoch || end != tc.end {
				t.Errorf("%s: EndOffsetForEpoch(%d) = %d, %d, %v; want %d, %d", when, tc.asked, ep, end, ok, tc.epoch, tc.end)
			}
		}
		if _, _, ok := p.EndOffsetForEpoch(3); ok {
			t.Errorf("%s: an epoch above the latest answered", when)
		}
		hs := readAll(t, p, 0)
		if len(hs) != 2 || hs[0].PartitionLeaderEpoch != 1 || hs[1].PartitionLeaderEpoch != 2 {
			t.Errorf("%s: batches stamped %+v, want epochs 1 then 2", when, hs)
		}
	}
	check(p, "open")
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	check(e.open(t), "reopened")
	data, err := os.ReadFile(filepath.Join(e.dir, epochCheckpointFile))
	if err != nil || string(data) != "0\n2\n1 0\n2 3\n" {
		t.Fatalf("checkpoint %q, %v; want Kafka's format", data, err)
	}
}

func TestCorruptEpochCheckpointNamesTheFile(t *testing.T) {
	for _, content := range []string{"garbage", "0\n2\n1 0\n", "0\n2\n3 0\n2 5\n", "0\n1\n1 -4\n", "0\n2\n1 9\n2 3\n", "0\n1\n1 0 7\n"} {
		e := newEnv(t)
		path := filepath.Join(e.dir, epochCheckpointFile)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Open(e.opts)
		if err == nil || !strings.Contains(err.Error(), path) || !errors.Is(err, errCorruptEpochCheckpoint) {
			t.Errorf("checkpoint %q: Open error %v, want one naming %s", content, err, path)
		}
	}
}

func TestBecomeLeaderAfterClose(t *testing.T) {
	p := newEnv(t).open(t)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.BecomeLeader(9); !errors.Is(err, ErrClosed) {
		t.Fatalf("BecomeLeader after Close: %v", err)
	}
}

func TestEpochCacheTruncateBefore(t *testing.T) {
	base3 := []base.EpochStart{{Epoch: 2, Start: 10}, {Epoch: 4, Start: 25}, {Epoch: 7, Start: 40}}
	for _, tc := range []struct {
		start   base.Offset
		want    []base.EpochStart
		changed bool
	}{
		{start: 5, want: base3, changed: false},
		{start: 10, want: base3, changed: false},
		{start: 12, want: lin(2, 12, 4, 25, 7, 40), changed: true},
		{start: 25, want: lin(4, 25, 7, 40), changed: true},
		{start: 30, want: lin(4, 30, 7, 40), changed: true},
		{start: 99, want: lin(7, 99), changed: true},
	} {
		c := epochCache{entries: append([]base.EpochStart(nil), base3...)}
		changed := c.truncateBefore(tc.start)
		if changed != tc.changed || !slices.Equal(c.entries, tc.want) {
			t.Errorf("truncateBefore(%d) = %v, %v; want %v, %v", tc.start, c.entries, changed, tc.want, tc.changed)
		}
	}
}

// TestDeleteRecordsTrimsTheEpochCache: a moved log start is reflected in
// the persisted leader-epoch checkpoint.
func TestDeleteRecordsTrimsTheEpochCache(t *testing.T) {
	e := newEnv(t, smallSegments)
	p := e.open(t)
	mustAppend(t, p, batch(t, spec{records: 3}), AcksLeader)
	if err := p.BecomeLeader(3); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, p, batch(t, spec{records: 3}), AcksLeader)
	if _, err := p.DeleteRecords(4); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := loadEpochCache(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := lin(3, 4); !slices.Equal(c.entries, want) {
		t.Fatalf("epoch cache after DeleteRecords(4): %v, want %v", c.entries, want)
	}
}

// TestFailedEpochCheckpointWriteIsRetried: a leader epoch whose checkpoint
// write failed is already in the cache in memory; the next BecomeLeader
// of that epoch (the broker retries a failed role change) must write it
// again rather than find nothing new, or the epoch is lost at the next
// start and a follower's divergence in it goes unseen. Each place that
// changes the cache writes it again after a failure; this one is the
// most common.
func TestFailedEpochCheckpointWriteIsRetried(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.LeaderEpoch = 1 })
	p := e.open(t)
	mustAppend(t, p, batch(t, spec{records: 3}), AcksLeader)
	if err := p.BecomeFollower(1); err != nil {
		t.Fatal(err)
	}
	// A directory where the write's temporary file goes fails the write,
	// for root too.
	blocker := filepath.Join(e.dir, epochCheckpointFile+".tmp")
	if err := os.Mkdir(blocker, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := p.BecomeLeader(2); err == nil {
		t.Fatal("BecomeLeader(2) succeeded with its checkpoint unwritable")
	}
	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	if err := p.BecomeLeader(2); err != nil {
		t.Fatalf("BecomeLeader(2) once the checkpoint is writable: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(e.dir, epochCheckpointFile))
	if err != nil || string(data) != "0\n2\n1 0\n2 3\n" {
		t.Fatalf("checkpoint %q, %v; want epochs 1 at 0 and 2 at 3", data, err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if ep, end, ok := e.open(t).EndOffsetForEpoch(1); !ok || ep != 1 || end != 3 {
		t.Fatalf("after a restart EndOffsetForEpoch(1) = %d, %d, %v; want epoch 1 ending at 3", ep, end, ok)
	}
}

// lin is the lineage of the (epoch, start) pairs given.
func lin(pairs ...int64) []base.EpochStart {
	var out []base.EpochStart
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, base.EpochStart{Epoch: base.Epoch(pairs[i]), Start: base.Offset(pairs[i+1])})
	}
	return out
}

// An epoch that starts at the log end (a leader that has not appended in
// it yet) survives a clean restart: the partition reopens in it even when
// Open is given an older epoch, so a notice of an epoch between the two
// stays stale.
func TestEpochAtLogEndSurvivesRestart(t *testing.T) {
	e := newEnv(t) // Open's epoch is 1
	p := e.open(t)
	mustAppend(t, p, batch(t, spec{records: 2}), AcksLeader)
	if err := p.BecomeLeader(5); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	p = e.open(t)
	if ep, ok := p.LatestEpoch(); !ok || ep != 5 {
		t.Fatalf("reopened: latest epoch %d, %v; want 5", ep, ok)
	}
	if got := p.Offsets().LeaderEpoch; got != 5 {
		t.Fatalf("reopened in leader epoch %d, want 5", got)
	}
	if ep, end, ok := p.EndOffsetForEpoch(1); !ok || ep != 1 || end != 2 {
		t.Fatalf("EndOffsetForEpoch(1) = %d, %d, %v; want epoch 1 ending at 2", ep, end, ok)
	}
	if err := p.BecomeFollower(3); !errors.Is(err, ErrStaleLeaderEpoch) {
		t.Fatalf("BecomeFollower(3) after reopening in epoch 5: %v, want ErrStaleLeaderEpoch", err)
	}
}

// Open drops the epochs that start past the log end: their batches were
// lost in a crash (the checkpoint is fsynced at BecomeLeader, the data
// may not have been). The epoch Open is given then starts at the log end,
// and OffsetForLeaderEpoch never answers an offset past it.
func TestOpenDropsEpochsPastTheLogEnd(t *testing.T) {
	e := newEnv(t)
	p := e.open(t)
	mustAppend(t, p, batch(t, spec{records: 5}), AcksAll)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	// Epoch 3 began at 9, after [5, 9) that the crash lost.
	if err := os.WriteFile(filepath.Join(e.dir, epochCheckpointFile), []byte("0\n2\n1 0\n3 9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := e.opts
	o.LeaderEpoch = 4
	p = openAt(t, o)
	want := []base.EpochStart{{Epoch: 1, Start: 0}, {Epoch: 4, Start: 5}}
	if got := p.Lineage(); !slices.Equal(got, want) {
		t.Fatalf("lineage %v, want %v", got, want)
	}
	if ep, end, ok := p.EndOffsetForEpoch(3); !ok || ep != 1 || end != 5 {
		t.Fatalf("EndOffsetForEpoch(3) = %d, %d, %v; want epoch 1 ending at 5", ep, end, ok)
	}
}

// Regression: a crash after DeleteRecords persisted the new log start but
// before the trimmed epoch checkpoint was written left epochs below the
// log start at the next Open, so OffsetForLeaderEpoch answered an end
// offset below the log start for an epoch whose batches were deleted.
// Open trims the cache to the log start, as Kafka's LogLoader does
// (truncateFromStart of the log start checkpoint), and persists it.
func TestOpenTrimsEpochsBelowTheLogStart(t *testing.T) {
	e := newEnv(t)
	p := e.open(t)
	mustAppend(t, p, batch(t, spec{records: 3}), AcksAll)
	if err := p.BecomeLeader(3); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, p, batch(t, spec{records: 3}), AcksAll)
	untrimmed, err := os.ReadFile(filepath.Join(e.dir, epochCheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DeleteRecords(4); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	// The crash: the log start file was written, the checkpoint was not.
	if err := os.WriteFile(filepath.Join(e.dir, epochCheckpointFile), untrimmed, 0o644); err != nil {
		t.Fatal(err)
	}
	p = e.open(t)
	if got, want := p.Lineage(), lin(3, 4); !slices.Equal(got, want) {
		t.Fatalf("lineage %v after reopening with log start 4, want %v", got, want)
	}
	if ep, end, ok := p.EndOffsetForEpoch(1); !ok || ep != 1 || end != 4 {
		t.Fatalf("EndOffsetForEpoch(1) = %d, %d, %v; want the log start 4, as before the crash", ep, end, ok)
	}
	c, err := loadEpochCache(e.dir)
	if err != nil || !slices.Equal(c.entries, lin(3, 4)) {
		t.Fatalf("checkpoint %v, %v; want it trimmed on disk too", c.entries, err)
	}
}

package broker

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
)

func TestReopenFreeBytes(t *testing.T) {
	for _, tc := range []struct {
		total, want uint64
	}{
		{0, minReopenFreeBytes},
		{80 << 20, minReopenFreeBytes},           // a twentieth is 4 MiB
		{160 << 20, 8 << 20},                     // a twentieth
		{10 << 30, 512 << 20},                    // a twentieth
		{4 << 40, maxReopenFreeBytes},            // capped
		{1<<64 - 1, maxReopenFreeBytes},          // no overflow
		{minReopenFreeBytes, minReopenFreeBytes}, // a tiny disk: all of it
	} {
		if got := reopenFreeBytes(tc.total); got != tc.want {
			t.Errorf("reopenFreeBytes(%d) = %d, want %d", tc.total, got, tc.want)
		}
	}
}

func TestMayReopen(t *testing.T) {
	full := fmt.Errorf("log: append: %w", &fs.PathError{Op: "write", Path: "/d/t-0/0.log", Err: syscall.ENOSPC})
	noFD := fmt.Errorf("log: roll: %w", &fs.PathError{Op: "open", Path: "/d/1.log", Err: syscall.EMFILE})
	disk := uint64(160 << 20) // needs 8 MiB free
	roomy := diskSpace{free: disk, total: disk}
	fewFiles := fileUsage{open: 100, limit: 1024}
	for _, tc := range []struct {
		name    string
		failure error
		space   diskSpace
		files   fileUsage
		want    bool
	}{
		{"full disk with room again", full, diskSpace{free: 8 << 20, total: disk}, fewFiles, true},
		{"full disk still short of room", full, diskSpace{free: 8<<20 - 1, total: disk}, fewFiles, false},
		{"full disk still full", full, diskSpace{total: disk}, fewFiles, false},
		{"out of files, well under the limit now", noFD, roomy, fileUsage{open: 960, limit: 1024}, true},
		{"out of files, still near the limit", noFD, roomy, fileUsage{open: 961, limit: 1024}, false},
		{"out of files, a small limit raised", noFD, roomy, fileUsage{open: 40, limit: 4096}, true},
		{"out of files, margin of at least 64", noFD, roomy, fileUsage{open: 40, limit: 100}, false},
		{"out of files, limit unknown", noFD, roomy, fileUsage{open: 1}, false},
		{"the whole system out of files", fmt.Errorf("log: roll: %w", syscall.ENFILE), roomy, fewFiles, false},
		{"I/O error", fmt.Errorf("log: fdatasync: %w", &fs.PathError{Op: "fdatasync", Path: "/d/0.log", Err: syscall.EIO}), roomy, fewFiles, false},
		{"anything else", errors.New("log: rename: boom"), roomy, fewFiles, false},
		{"not failed", nil, roomy, fewFiles, false},
	} {
		if got := mayReopen(tc.failure, tc.space, tc.files); got != tc.want {
			t.Errorf("%s: mayReopen = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestReopenThresholdProperties: the free space asked for is within its
// bounds, never more than a twentieth of the disk unless the lower bound
// asks for it, and grows with the disk.
func TestReopenThresholdProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := rapid.Uint64Range(0, 1<<63).Draw(t, "a")
		b := rapid.Uint64Range(a, 1<<63).Draw(t, "b")
		ra, rb := reopenFreeBytes(a), reopenFreeBytes(b)
		if ra < minReopenFreeBytes || ra > maxReopenFreeBytes {
			t.Fatalf("reopenFreeBytes(%d) = %d outside its bounds", a, ra)
		}
		if ra > a/20 && ra != minReopenFreeBytes {
			t.Fatalf("reopenFreeBytes(%d) = %d, more than a twentieth", a, ra)
		}
		if rb < ra {
			t.Fatalf("reopenFreeBytes(%d) = %d < reopenFreeBytes(%d) = %d", b, rb, a, ra)
		}
	})
}

// TestReopenSettlesEachPartition: a failed log closed to be reopened is
// opened again and hosted in its role; one that something else opened
// meanwhile, that moved to other brokers, or whose topic is gone, is not,
// and its data goes. Either way it is no longer waiting to be reopened.
func TestReopenSettlesEachPartition(t *testing.T) {
	f := newReplicationFixture(t, replicatedConfig(1))
	f.createTopic("reopen", []int32{1}, []int32{1}, []int32{1})
	at := func(topic string, i int32) base.TopicPartition {
		return base.TopicPartition{Topic: topic, Partition: i}
	}
	closed, open, moved, gone := at("reopen", 0), at("reopen", 1), at("reopen", 2), at("gone", 0)
	if err := os.MkdirAll(f.b.partitionDir(gone), 0o755); err != nil {
		t.Fatal(err)
	}
	var detached []*hosted
	f.b.mu.Lock()
	for _, tp := range []base.TopicPartition{closed, moved} {
		detached = append(detached, f.b.detachLocked(tp))
	}
	for _, tp := range []base.TopicPartition{closed, open, moved, gone} {
		f.b.mu.reopening[tp] = "a full disk"
	}
	f.b.mu.Unlock()
	for _, h := range detached {
		if err := h.p.Close(); err != nil {
			t.Fatal(err)
		}
	}
	img := changedImage(f.meta.Image(), "reopen", moved.Partition, func(pa *metadata.Partition) { pa.Replicas = []int32{2} })
	for _, tp := range []base.TopicPartition{closed, open, moved, gone} {
		f.b.reopen(img, tp, "a full disk", diskSpace{}, fileUsage{})
	}
	if p := f.hosted(closed); p == detached[0].p || !p.IsLeader() {
		t.Fatalf("%v not reopened as leader", closed)
	}
	if f.isHosted(moved) {
		t.Fatalf("%v reopened on a broker that is not its replica", moved)
	}
	f.b.mu.Lock()
	left := len(f.b.mu.reopening)
	f.b.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d partitions still waiting to be reopened", left)
	}
	for _, tp := range []base.TopicPartition{moved, gone} {
		if _, err := os.Stat(f.b.partitionDir(tp)); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("the directory of %v: %v", tp, err)
		}
	}

	// A reopening that failed is tried again at the next check, with no
	// failed log left to look at.
	f.b.mu.Lock()
	h := f.b.detachLocked(open)
	f.b.mu.reopening[open] = "a full disk"
	f.b.mu.Unlock()
	if err := h.p.Close(); err != nil {
		t.Fatal(err)
	}
	f.b.reopenFailedLogs()
	if p := f.hosted(open); p == h.p {
		t.Fatalf("%v not reopened by the next check", open)
	}
}

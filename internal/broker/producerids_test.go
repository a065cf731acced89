package broker

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
)

// nextIDs draws n producer ids from p.
func nextIDs(t *testing.T, p *producerIDs, n int) []base.ProducerID {
	t.Helper()
	out := make([]base.ProducerID, n)
	for i := range out {
		id, err := p.next()
		if err != nil {
			t.Fatal(err)
		}
		out[i] = id
	}
	return out
}

// TestProducerIDsSurviveRestarts: a single node hands out ids from a
// block whose end is on disk before the first is used, so a restart
// continues past the block and never hands out an id twice.
func TestProducerIDsSurviveRestarts(t *testing.T) {
	dir := t.TempDir()
	p, err := openProducerIDs(dir)
	if err != nil {
		t.Fatalf("no file yet: %v", err)
	}
	if got := nextIDs(t, p, 3); got[0] != 0 || got[2] != 2 {
		t.Fatalf("first ids %v, want 0 1 2", got)
	}
	data, err := os.ReadFile(filepath.Join(dir, producerIDFile))
	if err != nil || string(data) != "1000\n" {
		t.Fatalf("%s holds %q (%v), want the block's end, 1000", producerIDFile, data, err)
	}
	if p, err = openProducerIDs(dir); err != nil {
		t.Fatal(err)
	}
	if got := nextIDs(t, p, 1); got[0] != producerIDBlock {
		t.Fatalf("after a restart, id %d, want %d", got[0], producerIDBlock)
	}
}

func TestProducerIDFileCorrupt(t *testing.T) {
	for _, bad := range []string{"", "x\n", "-5\n", "12 13\n"} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, producerIDFile), []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := openProducerIDs(dir); err == nil {
			t.Errorf("%q: opened, want an error", bad)
		}
	}
}

// TestProducerIDsFromTheCluster: a registered broker hands out the blocks
// the quorum gives it, asking for the next when one is used up, and
// fails when the quorum cannot give one.
func TestProducerIDsFromTheCluster(t *testing.T) {
	p, err := openProducerIDs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	starts := []int64{5000, 9000}
	var fail error
	asked := 0
	p.clusterBlock = func() (int64, bool, error) {
		if fail != nil {
			return 0, false, fail
		}
		asked++
		return starts[asked-1], true, nil
	}
	ids := nextIDs(t, p, metadata.ProducerIDBlockSize+1)
	if ids[0] != 5000 || ids[metadata.ProducerIDBlockSize-1] != 5000+metadata.ProducerIDBlockSize-1 {
		t.Fatalf("first block from %d to %d, want from 5000", ids[0], ids[metadata.ProducerIDBlockSize-1])
	}
	if last := ids[metadata.ProducerIDBlockSize]; last != 9000 || asked != 2 {
		t.Fatalf("after the first block: id %d, %d blocks asked for; want 9000, 2", last, asked)
	}
	p.mu.next = p.mu.reservedEnd
	fail = errors.New("no quorum")
	if _, err := p.next(); !errors.Is(err, fail) {
		t.Fatalf("with no block to be had: %v, want %v", err, fail)
	}
}

// TestSingleNodeProducerIDs: a broker that is not registered (a single
// node) hands out ids from its own blocks, without the quorum.
func TestSingleNodeProducerIDs(t *testing.T) {
	b := startTestBroker(t, idleTestOptions(t, openTestMeta(t), replicatedConfig(1)))
	id, err := b.NextProducerID()
	if err != nil || id != 0 {
		t.Fatalf("first producer id %d, %v; want 0", id, err)
	}
	if data, err := os.ReadFile(filepath.Join(b.DataDir(), producerIDFile)); err != nil || string(data) != "1000\n" {
		t.Fatalf("%s holds %q (%v), want 1000", producerIDFile, data, err)
	}
}

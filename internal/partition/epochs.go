package partition

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/vfs"
)

const epochCheckpointFile = "leader-epoch-checkpoint"

// epochEntry says that leader epoch Epoch began at offset Start.
type epochEntry struct {
	Epoch base.Epoch
	Start base.Offset
}

// epochCache is the leader-epoch lineage, ascending in both fields.
type epochCache struct {
	entries []epochEntry
}

func (c *epochCache) latestEpoch() base.Epoch {
	if len(c.entries) == 0 {
		return 0
	}
	return c.entries[len(c.entries)-1].Epoch
}

// assign records that epoch starts at start; older or equal epochs are
// ignored.
func (c *epochCache) assign(epoch base.Epoch, start base.Offset) bool {
	if n := len(c.entries); n > 0 && c.entries[n-1].Epoch >= epoch {
		return false
	}
	c.entries = append(c.entries, epochEntry{Epoch: epoch, Start: start})
	return true
}

// truncateFrom drops epochs that start at or after end (log truncation).
func (c *epochCache) truncateFrom(end base.Offset) {
	for len(c.entries) > 1 && c.entries[len(c.entries)-1].Start > end {
		c.entries = c.entries[:len(c.entries)-1]
	}
}

// endOffsetFor answers OffsetForLeaderEpoch: the largest epoch ≤ the one
// asked for, and the offset where the next epoch starts (or logEnd for the
// latest). ok=false when the epoch precedes every known epoch.
func (c *epochCache) endOffsetFor(epoch base.Epoch, logEnd base.Offset) (base.Epoch, base.Offset, bool) {
	for i := len(c.entries) - 1; i >= 0; i-- {
		if c.entries[i].Epoch > epoch {
			continue
		}
		if i == len(c.entries)-1 {
			return c.entries[i].Epoch, logEnd, true
		}
		return c.entries[i].Epoch, c.entries[i+1].Start, true
	}
	return 0, 0, false
}

// encode writes Kafka's checkpoint format: version, count, then one
// "epoch offset" line per entry.
func (c *epochCache) encode() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "0\n%d\n", len(c.entries))
	for _, e := range c.entries {
		fmt.Fprintf(&b, "%d %d\n", e.Epoch, e.Start)
	}
	return b.Bytes()
}

func loadEpochCache(dir string) (epochCache, error) {
	data, err := os.ReadFile(filepath.Join(dir, epochCheckpointFile))
	if errors.Is(err, os.ErrNotExist) {
		return epochCache{}, nil
	}
	if err != nil {
		return epochCache{}, err
	}
	return decodeEpochCache(data)
}

func decodeEpochCache(data []byte) (epochCache, error) {
	bad := func(why string) error {
		return fmt.Errorf("%s is corrupt (%s); remove it to rebuild from the log", epochCheckpointFile, why)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	var lines []string
	for sc.Scan() {
		lines = append(lines, strings.TrimSpace(sc.Text()))
	}
	if len(lines) < 2 || lines[0] != "0" {
		return epochCache{}, bad("bad header")
	}
	n, err := strconv.Atoi(lines[1])
	if err != nil || n != len(lines)-2 {
		return epochCache{}, bad("bad count")
	}
	var c epochCache
	for _, l := range lines[2:] {
		var e, o int64
		if _, err := fmt.Sscanf(l, "%d %d", &e, &o); err != nil {
			return epochCache{}, bad("bad entry")
		}
		if !c.assign(base.Epoch(e), base.Offset(o)) {
			return epochCache{}, bad("epochs not ascending")
		}
	}
	return c, nil
}

// becomeLeaderLocked records a new leader epoch starting at the log end.
func (p *Partition) becomeLeaderLocked(epoch base.Epoch) error {
	if !p.mu.epochs.assign(epoch, p.log.End()) && len(p.mu.epochs.entries) > 0 {
		return nil
	}
	return vfs.WriteFileAtomic(p.opts.Dir, epochCheckpointFile, p.mu.epochs.encode())
}

// BecomeLeader records a leader epoch from metadata.
func (p *Partition) BecomeLeader(epoch base.Epoch) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.becomeLeaderLocked(epoch)
}

// EndOffsetForEpoch answers OffsetForLeaderEpoch.
func (p *Partition) EndOffsetForEpoch(epoch base.Epoch) (base.Epoch, base.Offset, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.epochs.endOffsetFor(epoch, p.log.End())
}

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
)

const epochCheckpointFile = "leader-epoch-checkpoint"

// epochCache is the leader-epoch lineage, ascending in both fields.
type epochCache struct {
	entries []base.EpochStart
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
	c.entries = append(c.entries, base.EpochStart{Epoch: epoch, Start: start})
	return true
}

// truncateFrom drops epochs that start after end, as after a crash lost
// the log's tail. An epoch starting exactly at end stays: a leader that has
// not appended yet still leads from there. The oldest epoch always stays.
func (c *epochCache) truncateFrom(end base.Offset) {
	for len(c.entries) > 1 && c.entries[len(c.entries)-1].Start > end {
		c.entries = c.entries[:len(c.entries)-1]
	}
}

// assignFromLeader records that epoch starts at start, for a batch a
// follower appends, by the rule of Kafka's LeaderEpochFileCache.assign:
// nothing changes when epoch is the latest and start is not before its
// start; otherwise the entries at the end that conflict with it (an epoch
// at or above it, or a start at or after start) are dropped, and it is
// appended. It reports whether the cache changed.
func (c *epochCache) assignFromLeader(epoch base.Epoch, start base.Offset) bool {
	n := len(c.entries)
	if n > 0 && c.entries[n-1].Epoch == epoch && start >= c.entries[n-1].Start {
		return false
	}
	for n > 0 && (c.entries[n-1].Epoch >= epoch || c.entries[n-1].Start >= start) {
		n--
	}
	c.entries = append(c.entries[:n], base.EpochStart{Epoch: epoch, Start: start})
	return true
}

// truncateFromEnd drops the epochs that start at or after end, as Kafka's
// LeaderEpochFileCache.truncateFromEnd does when a follower's log is
// truncated to end: they hold no batch of the log any more. Unlike
// truncateFrom, an epoch starting exactly at end goes too: it is one this
// replica led without appending to it, which its new leader's log may
// contradict. It reports whether anything changed.
func (c *epochCache) truncateFromEnd(end base.Offset) bool {
	n := len(c.entries)
	for n > 0 && c.entries[n-1].Start >= end {
		n--
	}
	changed := n < len(c.entries)
	c.entries = c.entries[:n]
	return changed
}

// truncateBefore drops what the log no longer holds when its start moves
// to start, as Kafka's LeaderEpochFileCache.truncateFromStart does: epochs
// that ended at or before start go, and the epoch holding start begins at
// start. It reports whether anything changed.
func (c *epochCache) truncateBefore(start base.Offset) bool {
	i := 0
	for i+1 < len(c.entries) && c.entries[i+1].Start <= start {
		i++
	}
	changed := i > 0
	c.entries = c.entries[i:]
	if len(c.entries) > 0 && c.entries[0].Start < start {
		c.entries[0].Start = start
		changed = true
	}
	return changed
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
	c, err := decodeEpochCache(data)
	if err != nil {
		return epochCache{}, fmt.Errorf("%s: %w", filepath.Join(dir, epochCheckpointFile), err)
	}
	return c, nil
}

// errCorruptEpochCheckpoint is wrapped by the errors of decodeEpochCache.
var errCorruptEpochCheckpoint = errors.New("corrupt leader-epoch checkpoint; remove it to rebuild it")

// decodeEpochCache is the gateway for the checkpoint file: epochs strictly
// ascending, start offsets non-decreasing, nothing negative.
func decodeEpochCache(data []byte) (epochCache, error) {
	bad := func(why string) error {
		return fmt.Errorf("%w: %s", errCorruptEpochCheckpoint, why)
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
	for i, l := range lines[2:] {
		f := strings.Fields(l)
		if len(f) != 2 {
			return epochCache{}, bad(fmt.Sprintf("entry %d: %q", i, l))
		}
		e, eerr := strconv.ParseInt(f[0], 10, 32)
		o, oerr := strconv.ParseInt(f[1], 10, 64)
		if eerr != nil || oerr != nil || e < 0 || o < 0 {
			return epochCache{}, bad(fmt.Sprintf("entry %d: %q", i, l))
		}
		if n := len(c.entries); n > 0 && base.Offset(o) < c.entries[n-1].Start {
			return epochCache{}, bad(fmt.Sprintf("entry %d: start offsets not ascending", i))
		}
		if !c.assign(base.Epoch(e), base.Offset(o)) {
			return epochCache{}, bad(fmt.Sprintf("entry %d: epochs not ascending", i))
		}
	}
	return c, nil
}

// becomeLeaderLocked records a new leader epoch starting at the log end.
func (p *Partition) becomeLeaderLocked(epoch base.Epoch) error {
	assigned := p.mu.epochs.assign(epoch, p.log.End())
	return p.saveEpochsLocked(assigned || len(p.mu.epochs.entries) == 0)
}

// EndOffsetForEpoch answers OffsetForLeaderEpoch.
func (p *Partition) EndOffsetForEpoch(epoch base.Epoch) (base.Epoch, base.Offset, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return base.EndOffsetForEpoch(p.mu.epochs.entries, p.log.End(), epoch)
}

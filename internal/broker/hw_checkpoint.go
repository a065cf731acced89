package broker

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/vfs"
)

const (
	// hwCheckpointFile holds the high watermark of every partition hosted
	// here, in the format and under the name of Kafka's
	// replication-offset-checkpoint.
	hwCheckpointFile = "replication-offset-checkpoint"
	// defaultHWCheckpointInterval is Kafka's
	// replica.high.watermark.checkpoint.interval.ms default.
	defaultHWCheckpointInterval = 5 * time.Second
)

// hwCheckpointInterval is how often the checkpoint is written.
func (b *Broker) hwCheckpointInterval() time.Duration {
	return cmp.Or(b.opts.HWCheckpointInterval, defaultHWCheckpointInterval)
}

// hwCheckpoint keeps the high watermark checkpoint: the one read at start,
// whose entries each partition's first open takes (a replica that restarts
// and leads again then shows consumers only what was committed, not
// records its followers never had), and what was last written, so that an
// idle broker does not rewrite it.
type hwCheckpoint struct {
	dir string
	mu  struct {
		sync.Mutex
		atStart map[base.TopicPartition]base.Offset
		written []byte
		failing bool // the last write failed
	}
}

// openHWCheckpoint reads dir's checkpoint. A missing file is an empty
// checkpoint (a new broker, or one from before checkpoints); an unreadable
// one is reported, and the partitions open as without one.
func openHWCheckpoint(dir string) (*hwCheckpoint, error) {
	c := &hwCheckpoint{dir: dir}
	data, err := os.ReadFile(filepath.Join(dir, hwCheckpointFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return c, nil
	case err != nil:
		return c, err
	}
	hws, err := decodeHighWatermarks(data)
	if err != nil {
		return c, fmt.Errorf("%s: %w", filepath.Join(dir, hwCheckpointFile), err)
	}
	c.mu.atStart, c.mu.written = hws, data
	return c, nil
}

// take returns tp's checkpointed high watermark, once: only the first open
// of a partition after the start restores it.
func (c *hwCheckpoint) take(tp base.TopicPartition) partition.CheckpointedOffset {
	c.mu.Lock()
	defer c.mu.Unlock()
	hw, ok := c.mu.atStart[tp]
	delete(c.mu.atStart, tp)
	return partition.CheckpointedOffset{Offset: hw, Set: ok}
}

// write replaces the checkpoint with hws, unless it holds them already.
// changed reports a first failure after successes, or a success after
// failures.
func (c *hwCheckpoint) write(hws map[base.TopicPartition]base.Offset) (changed bool, err error) {
	data := encodeHighWatermarks(hws)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !bytes.Equal(data, c.mu.written) {
		if err = vfs.WriteFileAtomic(c.dir, hwCheckpointFile, data); err == nil {
			c.mu.written = data
		}
	}
	changed, c.mu.failing = c.mu.failing != (err != nil), err != nil
	return changed, err
}

// encodeHighWatermarks is Kafka's offset checkpoint format: the version
// (0), the entry count, then "topic partition offset" per line, here in
// topic-partition order.
func encodeHighWatermarks(hws map[base.TopicPartition]base.Offset) []byte {
	tps := slices.SortedFunc(maps.Keys(hws), func(a, b base.TopicPartition) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "0\n%d\n", len(tps))
	for _, tp := range tps {
		fmt.Fprintf(&buf, "%s %d %d\n", tp.Topic, tp.Partition, hws[tp])
	}
	return buf.Bytes()
}

// decodeHighWatermarks parses encodeHighWatermarks's format, refusing
// anything else.
func decodeHighWatermarks(data []byte) (map[base.TopicPartition]base.Offset, error) {
	lines := strings.Split(string(data), "\n")
	if len(lines) < 3 || lines[len(lines)-1] != "" {
		return nil, errors.New("not an offset checkpoint: too short, or no newline at the end")
	}
	lines = lines[:len(lines)-1]
	if lines[0] != "0" {
		return nil, fmt.Errorf("offset checkpoint version %q, want 0", lines[0])
	}
	n, err := strconv.Atoi(lines[1])
	if err != nil || n != len(lines)-2 {
		return nil, fmt.Errorf("offset checkpoint says %q entries, holds %d", lines[1], len(lines)-2)
	}
	out := make(map[base.TopicPartition]base.Offset, n)
	for _, line := range lines[2:] {
		f := strings.Fields(line)
		if len(f) != 3 {
			return nil, fmt.Errorf("offset checkpoint entry %q: want \"topic partition offset\"", line)
		}
		part, perr := strconv.ParseInt(f[1], 10, 32)
		off, oerr := strconv.ParseInt(f[2], 10, 64)
		if perr != nil || oerr != nil || part < 0 || off < 0 {
			return nil, fmt.Errorf("offset checkpoint entry %q: partition and offset must be numbers from 0", line)
		}
		out[base.TopicPartition{Topic: f[0], Partition: int32(part)}] = base.Offset(off)
	}
	return out, nil
}

// checkpointHighWatermarks writes every hosted partition's high watermark
// to the checkpoint. A failure is logged once until a write succeeds
// again: the checkpoint only lags, and a restart then shows less.
func (b *Broker) checkpointHighWatermarks() {
	b.mu.Lock()
	hws := make(map[base.TopicPartition]base.Offset, len(b.mu.parts))
	for tp, h := range b.mu.parts {
		hws[tp] = h.p.Offsets().HighWatermark
	}
	b.mu.Unlock()
	changed, err := b.hw.write(hws)
	switch {
	case changed && err != nil:
		b.logger.Warn("writing the high watermark checkpoint failed; it is tried again every "+b.hwCheckpointInterval().String(), "err", err)
	case changed:
		b.logger.Info("the high watermark checkpoint is written again")
	}
}

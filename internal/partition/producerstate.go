package partition

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition/producers"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/vfs"
)

const producerSnapshotFile = "producer-state.snapshot"

// loadProducers restores producer state from the snapshot taken at the last
// clean close and replays the batches written after it. Without a usable
// snapshot it replays the whole local log.
func (p *Partition) loadProducers() (*producers.State, error) {
	ps, from := p.readProducerSnapshot()
	if err := p.replayProducers(ps, from); err != nil {
		return nil, err
	}
	return ps, nil
}

// readProducerSnapshot never fails: a missing, stale or corrupt snapshot
// only costs a longer replay.
func (p *Partition) readProducerSnapshot() (*producers.State, base.Offset) {
	data, err := os.ReadFile(filepath.Join(p.opts.Dir, producerSnapshotFile))
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			p.logger.Warn("producer snapshot unreadable; replaying the log", "err", err)
		}
		return producers.New(), p.log.Start()
	}
	if len(data) < 8 {
		return producers.New(), p.log.Start()
	}
	at := base.Offset(binary.BigEndian.Uint64(data))
	if at > p.log.End() || at < p.log.Start() {
		return producers.New(), p.log.Start()
	}
	ps, err := producers.Restore(data[8:])
	if err != nil {
		p.logger.Warn("producer snapshot corrupt; replaying the log", "err", err)
		return producers.New(), p.log.Start()
	}
	return ps, at
}

func (p *Partition) replayProducers(ps *producers.State, from base.Offset) error {
	const chunkBytes = 1 << 20
	buf := make([]byte, 0, chunkBytes)
	for from < p.log.End() {
		out, err := p.log.Read(from, chunkBytes, buf[:0])
		if err != nil {
			return fmt.Errorf("replaying producer state from %d: %w", from, err)
		}
		if len(out) == 0 {
			return nil
		}
		for pos := 0; pos < len(out); {
			h, err := record.ParseHeader(out[pos:])
			if err != nil || pos+h.Size() > len(out) {
				return fmt.Errorf("replaying producer state: bad batch at %d", from)
			}
			pos += h.Size()
			if h.NextOffset() <= from {
				continue
			}
			if h.Idempotent() && !h.Control() {
				ps.Update(base.ProducerID(h.ProducerID), h.ProducerEpoch, producers.BatchMeta{
					FirstSeq: h.BaseSequence, LastSeq: lastSequence(h),
					FirstOffset: h.BaseOffset, LastOffset: h.LastOffset(), TimestampMs: h.MaxTimestamp,
				})
			}
			from = h.NextOffset()
		}
		buf = out
	}
	return nil
}

// snapshotProducersLocked writes the producer state as of the log end.
func (p *Partition) snapshotProducersLocked() error {
	snap := p.mu.producers.Snapshot()
	data := make([]byte, 8, 8+len(snap))
	binary.BigEndian.PutUint64(data, uint64(p.log.End()))
	return vfs.WriteFileAtomic(p.opts.Dir, producerSnapshotFile, append(data, snap...))
}

package partition

import (
	"fmt"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition/producers"
	"github.com/strata-broker/strata/internal/record"
)

// loadProducers restores producer state from the newest usable snapshot
// and replays the batches written after it.
func (p *Partition) loadProducers() (*producers.State, error) {
	ps, from, err := p.restoreSnapshot()
	if err != nil {
		return nil, err
	}
	if err := p.replayProducers(ps, from); err != nil {
		return nil, err
	}
	return ps, nil
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

package partition

import (
	"errors"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/log"
)

// Region is a byte range of a segment file holding whole batches, for
// sending with sendfile. The receiver owns File and must Close it.
type Region = log.Region

// ErrNoRegion means the read cannot be served as a file region (the log
// has no OS files); use Read.
var ErrNoRegion = errors.New("partition: no file region for this read")

// ReadRegion is Read without copying: it returns where the batches are.
// An empty region (no File) means there is nothing at from yet.
func (p *Partition) ReadRegion(from base.Offset, maxBytes int) (Region, Offsets, error) {
	return p.ReadRegionIsolated(from, maxBytes, ReadUncommitted)
}

// ReadRegionIsolated is ReadRegion stopping where iso says, as
// ReadIsolated does: a leader serves a follower's fetch with ReadLogEnd.
func (p *Partition) ReadRegionIsolated(from base.Offset, maxBytes int, iso Isolation) (Region, Offsets, error) {
	p.mu.Lock()
	off := p.offsetsLocked()
	closed := p.mu.closed
	p.mu.Unlock()
	if closed {
		return Region{}, off, ErrClosed
	}
	if from < off.LogStart || from > off.readableEnd(iso) {
		return Region{}, off, ErrOffsetOutOfRange
	}
	if from < off.LocalStart {
		return Region{}, off, ErrOffsetInRemote
	}
	end := off.End(iso)
	if from >= end {
		return Region{Next: from}, off, nil
	}
	// Batches from end on must not be served; the log leaves them out, as
	// Read trims them.
	r, err := p.log.ReadRegion(from, end, maxBytes)
	switch {
	case errors.Is(err, log.ErrOffsetOutOfRange):
		return Region{}, off, ErrOffsetOutOfRange
	case err != nil:
		return Region{}, off, errors.Join(ErrNoRegion, err)
	}
	return r, off, nil
}

package partition

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/retention"
	"github.com/strata-broker/strata/internal/tier"
)

// ErrOffsetInRemote means a read asked for an offset in
// [logStart, localLogStart): it is in the log, but only in the remote tier,
// which the caller serves (the partition does no remote I/O).
var ErrOffsetInRemote = errors.New("partition: offset is in the remote tier")

// Tiered reports whether the partition's topic has remote.storage.enable:
// then the tier loop, not ApplyRetention, owns its retention.
func (p *Partition) Tiered() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.cfg.Tiered
}

// Config returns the partition's current configuration.
func (p *Partition) Config() Config {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.cfg
}

// Lineage is the leader-epoch cache as the tier sees it: ascending in
// epoch and in start. An epoch that began where the next one begins held
// no offsets and is left out (a leader that appended nothing).
func (p *Partition) Lineage() []base.EpochStart {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]base.EpochStart, 0, len(p.mu.epochs.entries))
	for _, e := range p.mu.epochs.entries {
		if n := len(out); n > 0 && out[n-1].Start >= e.Start {
			out = out[:n-1]
		}
		out = append(out, e)
	}
	return out
}

// LastStableOffset is the last stable offset (Offsets.LastStable): the
// tier uploads only segments wholly below it.
func (p *Partition) LastStableOffset() base.Offset {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.offsetsLocked().LastStable
}

// TierLocal is the local part of the partition for tier.Pass.
func (p *Partition) TierLocal() tier.Local { return tierLocal{p} }

type tierLocal struct{ p *Partition }

func (l tierLocal) Segments() []tier.LocalSegment { return tier.LocalSegmentsOf(l.p.log.Segments()) }

func (l tierLocal) Source() tier.SegmentSource {
	return tier.LogSource{Log: l.p.log, Snapshots: l.p.producerSnapshotAt, Aborted: l.abortedTxns}
}

// abortedTxns is AbortedTxns as the tier's type, for the transaction
// index of an upload. The tier uploads only segments below the last
// stable offset, so every marker of an upload is applied and listed;
// the entries whose marker is below the log start are no longer listed,
// but their offsets are outside the log, so no reader of the index needs
// them.
func (l tierLocal) abortedTxns(from, upTo base.Offset) []tier.AbortedTxn {
	ts := l.p.AbortedTxns(from, upTo)
	if len(ts) == 0 {
		return nil
	}
	out := make([]tier.AbortedTxn, len(ts))
	for i, t := range ts {
		out[i] = tier.AbortedTxn(t)
	}
	return out
}

// ApplyLocal moves the log start to d.NewLogStart (persisted first) and
// deletes the local segments below d.DeleteLocalBefore. tier.Pass has
// checked that the decision deletes locally only what is tiered or below
// the new log start. A decision made while the topic was tiered is
// refused (ErrNotTiered) once tiering is off: the remote copies it counted
// on are being deleted (KIP-950), so its local deletions would lose data.
func (l tierLocal) ApplyLocal(d retention.Decision) error {
	p := l.p
	defer p.compactAbortedIndexLogged() // after the unlock
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.closed {
		return ErrClosed
	}
	if !p.mu.cfg.Tiered {
		return ErrNotTiered
	}
	return p.applyDecisionLocked(d, d.DeleteLocalBefore)
}

// ErrNotTiered refuses a tier pass's retention decision for a partition
// whose tiering was turned off while the pass ran.
var ErrNotTiered = errors.New("partition: tiering was turned off; the tier pass's retention decision is stale")

// producerSnapshotAt returns the producer snapshot file valid at at, if
// one is still kept.
func (p *Partition) producerSnapshotAt(at base.Offset) ([]byte, bool) {
	p.snapFiles.Lock()
	defer p.snapFiles.Unlock()
	b, err := os.ReadFile(filepath.Join(p.opts.Dir, snapshotName(at)))
	if err != nil {
		return nil, false
	}
	return b, true
}

package partition

import (
	"fmt"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition/producers"
)

// VerificationGuard ties a transactional batch to the verification that
// let it open its producer's transaction here (Kafka's VerificationGuard,
// KIP-890 part 1). The broker asks the transaction coordinator whether the
// partition is in the producer's transaction before appending a batch that
// opens one; if the transaction ends (its marker is written here) between
// that answer and the append, the batch must not open a transaction that
// nothing will end: its partition's last stable offset, and every
// read_committed consumer, would stay behind it. Zero is no guard.
type VerificationGuard uint64

// StartVerification records a new guard for pid, before its coordinator is
// asked; a later one replaces it.
func (p *Partition) StartVerification(pid base.ProducerID) VerificationGuard {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.verifying == nil {
		p.mu.verifying = map[base.ProducerID]VerificationGuard{}
	}
	p.mu.lastGuard++
	p.mu.verifying[pid] = p.mu.lastGuard
	return p.mu.lastGuard
}

// AbandonVerification forgets g, if it is still pid's guard: its
// verification failed, and nothing will be appended with it.
func (p *Partition) AbandonVerification(pid base.ProducerID, g VerificationGuard) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.verifying[pid] == g {
		delete(p.mu.verifying, pid)
	}
}

// AppendVerified is Append of a batch whose producer's coordinator
// verified the partition after StartVerification returned g. When the
// batch opens a transaction here, g must still be its producer's guard:
// a marker of the producer written since (its transaction ended) or a
// newer verification refuses it with INVALID_TXN_STATE, and nothing is
// appended. A batch that continues an open transaction needs no guard.
func (p *Partition) AppendVerified(batch []byte, acks Acks, g VerificationGuard) (AppendResult, func() error, error) {
	return p.appendBatch(batch, acks, originClient, g)
}

// checkGuardLocked is AppendVerified's check, for a transactional batch
// of pid at epoch; a batch it lets open a transaction uses the guard up.
func (p *Partition) checkGuardLocked(pid base.ProducerID, epoch int16, g VerificationGuard) error {
	if g == 0 || p.openTxnLocked(pid, epoch) {
		return nil
	}
	if held, ok := p.mu.verifying[pid]; !ok || held != g {
		return fmt.Errorf("partition %v: producer %d: %w: its transaction ended, or was verified again, after the coordinator verified the partition",
			p.opts.TP, pid, producers.ErrInvalidTxnState)
	}
	delete(p.mu.verifying, pid)
	return nil
}

// forgetVerificationLocked drops pid's guard: a marker of its ended a
// transaction, so what was verified for it no longer holds.
func (p *Partition) forgetVerificationLocked(pid base.ProducerID) {
	delete(p.mu.verifying, pid)
}

package partition

import (
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition/producers"
)

func TestVerificationGuard(t *testing.T) {
	for _, tc := range []struct {
		name string
		// run verifies and appends producer 1's first transactional
		// batch, with whatever happens between, and returns the error.
		run    func(t *testing.T, p *Partition) error
		refuse bool
		// markers is how many markers run writes (a refused batch adds
		// nothing to them).
		markers int64
	}{
		{"the batch opens its verified transaction", func(t *testing.T, p *Partition) error {
			g := p.StartVerification(1)
			_, _, err := p.AppendVerified(batch(t, txn(1, 0, 1)), AcksLeader, g)
			return err
		}, false, 0},
		{"a marker between verification and append", func(t *testing.T, p *Partition) error {
			g := p.StartVerification(1)
			mustMarker(t, p, 1, 0, false, 0) // the transaction ended
			_, _, err := p.AppendVerified(batch(t, txn(1, 0, 1)), AcksLeader, g)
			return err
		}, true, 1},
		{"a newer verification replaces the older", func(t *testing.T, p *Partition) error {
			old := p.StartVerification(1)
			g := p.StartVerification(1)
			if _, _, err := p.AppendVerified(batch(t, txn(1, 0, 1)), AcksLeader, old); err == nil {
				t.Fatal("the older guard was taken")
			}
			_, _, err := p.AppendVerified(batch(t, txn(1, 0, 1)), AcksLeader, g)
			return err
		}, false, 0},
		{"an abandoned verification", func(t *testing.T, p *Partition) error {
			g := p.StartVerification(1)
			p.AbandonVerification(1, g)
			_, _, err := p.AppendVerified(batch(t, txn(1, 0, 1)), AcksLeader, g)
			return err
		}, true, 0},
		{"another producer's marker leaves it", func(t *testing.T, p *Partition) error {
			g := p.StartVerification(1)
			mustMarker(t, p, 2, 0, true, 0)
			_, _, err := p.AppendVerified(batch(t, txn(1, 0, 1)), AcksLeader, g)
			return err
		}, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newEnv(t).open(t)
			before := p.Offsets().LogEnd
			err := tc.run(t, p)
			if !tc.refuse {
				if err != nil {
					t.Fatalf("append: %v", err)
				}
				if !p.HasOpenTxn(1, 0) {
					t.Fatal("the batch did not open its transaction")
				}
				return
			}
			wantCode(t, err, producers.CodeInvalidTxnState)
			if p.HasOpenTxn(1, 0) || p.Offsets().LogEnd != before+base.Offset(tc.markers) {
				t.Fatalf("a refused batch opened a transaction or was written: log end %d (was %d)", p.Offsets().LogEnd, before)
			}
			wantLastStable(t, p, p.Offsets().HighWatermark)
		})
	}
}

// A batch that continues its producer's open transaction needs no guard,
// and Append (verification off) checks none.
func TestVerificationGuardOnlyWhenATransactionOpens(t *testing.T) {
	p := newEnv(t).open(t)
	mustAppend(t, p, batch(t, txn(1, 0, 1)), AcksLeader)
	if _, _, err := p.AppendVerified(batch(t, txn(1, 1, 1)), AcksLeader, 12345); err != nil {
		t.Fatalf("a batch continuing the open transaction: %v", err)
	}
	mustMarker(t, p, 1, 0, true, 0)
	p.StartVerification(1)
	mustMarker(t, p, 1, 0, false, 0)
	mustAppend(t, p, batch(t, txn(1, 2, 1)), AcksLeader) // unverified: as before
}

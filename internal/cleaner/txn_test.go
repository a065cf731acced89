package cleaner

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
)

// AbortedTxns answers by membership in the producer's own aborted ranges,
// whatever order the transaction index lists them in (a partition's index
// is in the order transactions joined it, and a rebuild may append older
// ones), for every offset a pass starting at from can read.
func TestAbortedTxnsMembership(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var txns []AbortedTxn
		var end base.Offset
		for pid := range int64(3) {
			o := base.Offset(rapid.Int64Range(0, 5).Draw(t, "start"))
			for range rapid.IntRange(0, 4).Draw(t, "n") {
				first := o + base.Offset(rapid.Int64Range(0, 4).Draw(t, "gap"))
				last := first + base.Offset(rapid.Int64Range(1, 4).Draw(t, "len")) // the marker follows the data
				txns = append(txns, AbortedTxn{ProducerID: pid, First: first, Last: last})
				o = last + 1
			}
			end = max(end, o)
		}
		txns = rapid.Permutation(txns).Draw(t, "order")
		from := base.Offset(rapid.Int64Range(0, int64(end)).Draw(t, "from"))
		a := NewAbortedTxns(txns, from)
		for pid := range int64(4) {
			for o := from; o <= end; o++ {
				want := false
				for _, tx := range txns {
					want = want || tx.ProducerID == pid && tx.First <= o && o <= tx.Last
				}
				if got := a.Aborted(pid, o); got != want {
					t.Fatalf("Aborted(%d, %d) = %v, want %v (index %v, from %d)", pid, o, got, want, txns, from)
				}
			}
		}
	})
	var none *AbortedTxns
	if none.Aborted(1, 0) {
		t.Fatal("a nil index aborts nothing")
	}
}

package txn

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestDescribeTransactions(t *testing.T) {
	h := newHarness(t)
	pid, epoch := h.mustInit("tx")
	wantCode(t, "add", h.addCode(addReq("tx", pid, epoch, 3, tp("u", 2), tp("t", 1), tp("u", 0))), nil)
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = []string{"tx", "", "nope"}
	states := h.do(req).(*kmsg.DescribeTransactionsResponse).TransactionStates
	if len(states) != 3 {
		t.Fatalf("states %+v", states)
	}
	d := states[0]
	wantCode(t, "describe tx", d.ErrorCode, nil)
	if d.TransactionalID != "tx" || d.State != "Ongoing" || d.ProducerID != pid || d.ProducerEpoch != epoch ||
		d.TimeoutMillis != testTimeoutMs || d.StartTimestamp != h.now.UnixMilli() {
		t.Fatalf("describe %+v", d)
	}
	if len(d.Topics) != 2 || d.Topics[0].Topic != "t" || d.Topics[1].Topic != "u" || !slices.Equal(d.Topics[1].Partitions, []int32{0, 2}) {
		t.Fatalf("describe topics %+v", d.Topics)
	}
	wantCode(t, "describe empty id", states[1].ErrorCode, kerr.InvalidRequest)
	wantCode(t, "describe unknown id", states[2].ErrorCode, kerr.TransactionalIDNotFound)
	if states[2].TransactionalID != "nope" {
		t.Fatalf("unknown id answered as %q", states[2].TransactionalID)
	}
	h.mustInit("empty")
	if d := h.wantState("empty", "Empty"); d.StartTimestamp != -1 || len(d.Topics) != 0 {
		t.Fatalf("describe Empty %+v", d)
	}
}

func TestListTransactions(t *testing.T) {
	h := newHarness(t)
	pa, ea := h.mustInit("a") // Empty
	pb, eb := h.mustInit("b")
	wantCode(t, "add b", h.addCode(addReq("b", pb, eb, 3, tp("t", 0))), nil) // Ongoing since t0
	h.advance(time.Minute - time.Second)
	pc, ec := h.mustInit("c")
	wantCode(t, "add c", h.addCode(addReq("c", pc, ec, 3, tp("t", 0))), nil)
	wantCode(t, "commit c", h.endCode(endReq("c", pc, ec, 4, true)), nil) // PrepareCommit since t0+59s
	h.now = h.now.Add(time.Second)

	list := func(version int16, states []string, pids []int64, durationMs int64) *kmsg.ListTransactionsResponse {
		t.Helper()
		req := kmsg.NewPtrListTransactionsRequest()
		req.Version, req.StateFilters, req.ProducerIDFilters, req.DurationFilterMillis = version, states, pids, durationMs
		resp := h.do(req).(*kmsg.ListTransactionsResponse)
		wantCode(t, "list", resp.ErrorCode, nil)
		return resp
	}
	ids := func(r *kmsg.ListTransactionsResponse) []string {
		var out []string
		for _, s := range r.TransactionStates {
			out = append(out, s.TransactionalID+"/"+s.TransactionState)
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		version    int16
		states     []string
		pids       []int64
		durationMs int64
		want       []string
	}{
		{"all", 0, nil, nil, -1, []string{"a/Empty", "b/Ongoing", "c/PrepareCommit"}},
		{"by state", 0, []string{"Ongoing", "PrepareCommit"}, nil, -1, []string{"b/Ongoing", "c/PrepareCommit"}},
		{"state names are exact", 0, []string{"ongoing"}, nil, -1, nil},
		{"by producer id", 1, nil, []int64{pa, pc, 424242}, -1, []string{"a/Empty", "c/PrepareCommit"}},
		{"both", 1, []string{"Empty"}, []int64{pb}, -1, nil},
		{"older than 30s", 1, nil, nil, 30_000, []string{"a/Empty", "b/Ongoing"}},
		{"older than 60s (exactly b's age)", 1, nil, nil, 60_000, []string{"a/Empty"}},
		{"v0 has no duration filter", 0, nil, nil, 30_000, []string{"a/Empty", "b/Ongoing", "c/PrepareCommit"}},
	} {
		if got := ids(list(tc.version, tc.states, tc.pids, tc.durationMs)); !slices.Equal(got, tc.want) {
			t.Fatalf("%s: listed %v, want %v", tc.name, got, tc.want)
		}
	}
	r := list(1, []string{"Bogus", "Empty"}, nil, -1)
	if !slices.Equal(r.UnknownStateFilters, []string{"Bogus"}) || !slices.Equal(ids(r), []string{"a/Empty"}) {
		t.Fatalf("unknown filters %v, listed %v", r.UnknownStateFilters, ids(r))
	}
	if r.TransactionStates[0].ProducerID != pa || ea != 0 {
		t.Fatalf("listed %+v", r.TransactionStates[0])
	}
}

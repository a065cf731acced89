package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
)

// DescribeTransactions: the state of transactional ids. They are split by
// coordinator partition and the answers merged in request order; before
// __transaction_state exists no id is known (TRANSACTIONAL_ID_NOT_FOUND).
// An id the principal may not DESCRIBE gets
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
func init() { register(65, 0, txnMax(65), (*Handler).handleDescribeTransactions) }

func (h *Handler) handleDescribeTransactions(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.DescribeTransactionsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	allowed, denied := partitionKeys(dedupe(r.TransactionalIDs), func(id string) bool { return h.allowedTxn(req, acl.OpDescribe, id) })
	byPart, ok := h.txns.split(allowed)
	if !ok {
		for _, id := range dedupe(r.TransactionalIDs) {
			code := kerr.TransactionalIDNotFound.Code
			if !h.allowedTxn(req, acl.OpDescribe, id) {
				code = txnDenied
			}
			resp.TransactionStates = append(resp.TransactionStates, txnStateError(id, code))
		}
		return done(resp)
	}
	wait := h.txns.fanOut(req, byPart, func(ids []string) kmsg.Request {
		sub := kmsg.NewPtrDescribeTransactionsRequest()
		sub.TransactionalIDs = ids
		return sub
	})
	return Reply{Wait: func() kmsg.Response {
		var answers []kmsg.DescribeTransactionsResponseTransactionState
		for _, id := range denied {
			answers = append(answers, txnStateError(id, txnDenied))
		}
		for _, sub := range wait(ctx) {
			answers = append(answers, sub.(*kmsg.DescribeTransactionsResponse).TransactionStates...)
		}
		resp.TransactionStates = inRequestOrder(dedupe(r.TransactionalIDs), answers, func(s kmsg.DescribeTransactionsResponseTransactionState) string { return s.TransactionalID })
		return resp
	}}
}

// txnStateError is the answer for a transactional id that is not described.
func txnStateError(id string, code int16) kmsg.DescribeTransactionsResponseTransactionState {
	s := kmsg.NewDescribeTransactionsResponseTransactionState()
	s.TransactionalID, s.ErrorCode = id, code
	s.ProducerID, s.ProducerEpoch, s.StartTimestamp = -1, -1, -1
	return s
}

// dedupe returns ids without repeats, in first-seen order.
func dedupe(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

package api

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
)

// ListTransactions: every __transaction_state partition coordinated here is
// asked (with the request's state, producer id and, v1+, duration filters;
// clients ask every broker) and the answers concatenated; the first error a partition reports (e.g.
// COORDINATOR_LOAD_IN_PROGRESS, retriable) is the response's error.
func init() { register(66, 0, txnMax(66), (*Handler).handleListTransactions) }

func (h *Handler) handleListTransactions(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.ListTransactionsRequest)
	resp := r.ResponseKind().(*kmsg.ListTransactionsResponse)
	byPart, ok := h.txns.every()
	if !ok {
		return done(resp) // no transaction is coordinated here
	}
	wait := h.txns.fanOut(req, byPart, func([]string) kmsg.Request {
		sub := *r
		return &sub
	})
	return Reply{Wait: func() kmsg.Response {
		for _, sub := range wait(ctx) {
			s := sub.(*kmsg.ListTransactionsResponse)
			if resp.ErrorCode == 0 {
				resp.ErrorCode = s.ErrorCode
			}
			resp.UnknownStateFilters = s.UnknownStateFilters
			resp.TransactionStates = append(resp.TransactionStates, s.TransactionStates...)
		}
		resp.TransactionStates = slices.DeleteFunc(resp.TransactionStates, func(s kmsg.ListTransactionsResponseTransactionState) bool {
			return !h.allowedTxn(req, acl.OpDescribe, s.TransactionalID)
		})
		return resp
	}}
}

package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/metadata"
)

// produceDenials are the partitions req's principal may not write to, with
// Kafka's code: all of them TRANSACTIONAL_ID_AUTHORIZATION_FAILED when the
// request names a transactional id the principal may not WRITE, else
// TOPIC_AUTHORIZATION_FAILED for each topic without WRITE, whether it
// exists or not (a refusal must not tell which topics exist). nil when
// every partition is allowed (always, without an authorizer).
func (h *Handler) produceDenials(req *Request, r *kmsg.ProduceRequest, img *metadata.Image, byID bool) map[partitionRef]int16 {
	if h.policy == nil {
		return nil
	}
	txnRefused := r.TransactionID != nil && !h.allowedTxn(req, acl.OpWrite, *r.TransactionID)
	var out map[partitionRef]int16
	for i, rt := range r.Topics {
		code := txnDenied
		if !txnRefused {
			t := lookupTopic(img, rt.Topic, rt.TopicID, byID)
			if h.allowedTopic(req, acl.OpWrite, topicName(rt.Topic, t)) {
				continue
			}
			code = topicDenied
		}
		if out == nil {
			out = map[partitionRef]int16{}
		}
		for j := range rt.Partitions {
			out[partitionRef{i, j}] = code
		}
	}
	return out
}

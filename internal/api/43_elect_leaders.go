package api

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
)

// ElectLeaders: v0-2 (v1 adds ElectionType and the top-level error code,
// v2 is flexible). Needs ALTER on the cluster. PREFERRED (0, the only type
// of v0) makes each partition's first replica its leader when that replica
// is in the ISR and unfenced, through the controller. UNCLEAN (1) gives a
// partition without a leader one, from outside the ISR when no in-sync
// replica is live (metadata.ElectUncleanLeaders: the operator accepts
// losing what only the ISR held; refused on tiered topics). A partition
// with a leader needs no election. Topics null means every partition of
// every topic; then, as in Kafka, partitions that need no election are left
// out of the answer.
func init() { register(43, 0, 2, (*Handler).handleElectLeaders) }

// The election types of ElectLeaders v1+.
const (
	electionPreferred int8 = 0
	electionUnclean   int8 = 1
)

// electionAnswer is one partition's result.
type electionAnswer struct {
	code int16
	msg  string
}

func (h *Handler) handleElectLeaders(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.ElectLeadersRequest)
	resp := r.ResponseKind().(*kmsg.ElectLeadersResponse)
	all := r.Topics == nil
	img := h.opts.Meta.Image()
	parts := electionTargets(img, r.Topics)
	answers := make(map[base.TopicPartition]electionAnswer, len(parts))
	answerAll := func(code int16, msg string) {
		for _, tp := range parts {
			answers[tp] = electionAnswer{code, msg}
		}
	}
	switch {
	case !h.allowedCluster(req, acl.OpAlter):
		// Kafka's error response names the partitions asked for, not
		// those of "every topic".
		resp.ErrorCode = clusterDenied
		if all {
			return done(resp)
		}
		answerAll(clusterDenied, "not authorized to alter the cluster (elect leaders)")
	case r.ElectionType == electionPreferred || r.ElectionType == electionUnclean:
		if r.TimeoutMillis > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, time.Duration(r.TimeoutMillis)*time.Millisecond)
			defer cancel()
		}
		elect := h.opts.Meta.ElectPreferredLeaders
		if r.ElectionType == electionUnclean {
			elect = h.opts.Meta.ElectUncleanLeaders
		}
		for tp, err := range elect(ctx, parts) {
			code, msg := electionErrorCode(err)
			answers[tp] = electionAnswer{code, msg}
		}
	default:
		resp.ErrorCode = kerr.InvalidRequest.Code
		answerAll(kerr.InvalidRequest.Code, fmt.Sprintf("unknown election type %d: 0 is PREFERRED, 1 is UNCLEAN", r.ElectionType))
	}
	resp.Topics = electionResults(parts, answers, all)
	return done(resp)
}

// electionTargets lists the distinct partitions asked for, in request
// order; topics nil means every partition of every topic, by name.
func electionTargets(img *metadata.Image, topics []kmsg.ElectLeadersRequestTopic) []base.TopicPartition {
	var out []base.TopicPartition
	if topics == nil {
		names := make([]string, 0, len(img.Topics))
		for name := range img.Topics {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			for _, p := range img.Topics[name].Partitions {
				out = append(out, base.TopicPartition{Topic: name, Partition: p.Index})
			}
		}
		return out
	}
	seen := map[base.TopicPartition]bool{}
	for _, t := range topics {
		for _, p := range t.Partitions {
			tp := base.TopicPartition{Topic: t.Topic, Partition: p}
			if !seen[tp] {
				seen[tp] = true
				out = append(out, tp)
			}
		}
	}
	return out
}

// electionErrorCode maps an election's answer for one partition.
// The metadata errors of elections are mapped here rather than in
// errorCode, as only this API meets them.
func electionErrorCode(err error) (int16, string) {
	switch {
	case errors.Is(err, metadata.ErrElectionNotNeeded):
		return kerr.ElectionNotNeeded.Code, err.Error()
	case errors.Is(err, metadata.ErrPreferredLeaderNotAvailable):
		return kerr.PreferredLeaderNotAvailable.Code, err.Error()
	case errors.Is(err, metadata.ErrEligibleLeadersNotAvailable):
		return kerr.EligibleLeadersNotAvailable.Code, err.Error()
	}
	return controllerAnswerCode(err)
}

// electionResults builds the response topics in the order of parts; with
// all, partitions that needed no election are left out, and so are topics
// left without partitions.
func electionResults(parts []base.TopicPartition, answers map[base.TopicPartition]electionAnswer, all bool) []kmsg.ElectLeadersResponseTopic {
	var out []kmsg.ElectLeadersResponseTopic
	index := map[string]int{}
	for _, tp := range parts {
		a := answers[tp]
		if all && a.code == kerr.ElectionNotNeeded.Code {
			continue
		}
		i, ok := index[tp.Topic]
		if !ok {
			t := kmsg.NewElectLeadersResponseTopic()
			t.Topic = tp.Topic
			out = append(out, t)
			i = len(out) - 1
			index[tp.Topic] = i
		}
		p := kmsg.NewElectLeadersResponseTopicPartition()
		p.Partition, p.ErrorCode, p.ErrorMessage = tp.Partition, a.code, strPtr(a.msg)
		out[i].Partitions = append(out[i].Partitions, p)
	}
	return out
}

package broker

import (
	"context"
	"fmt"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/replication"
	"github.com/strata-broker/strata/internal/tier"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// TierState is what a follower rebuilds its state from when it skips the
// offsets its leader's remote tier holds (replication.TierState, KIP-405):
// the remote segments of the metadata quorum's current image and the
// objects of the remote tier, read through Reader. It needs no Broker, so
// cmd can give it to the fetchers before the broker exists.
type TierState struct {
	Meta   Metadata
	Reader *tier.Reader
}

var _ replication.TierState = TierState{}

// FinishedSegments returns the COPY_FINISHED remote segments of tp in the
// current image; ok is false when they do not form a valid view (which
// plans nothing, as the tier loop's views do).
func (s TierState) FinishedSegments(topicID base.TopicID, tp base.TopicPartition) ([]remotemeta.RemoteSegment, bool) {
	view, err := tier.NewPartitionView(s.Meta.Image().RemoteSegments(topicID, tp.Partition))
	if err != nil {
		return nil, false
	}
	var out []remotemeta.RemoteSegment
	for _, seg := range view.Segments() {
		if seg.State == remotemeta.CopyFinished && seg.TP == tp {
			out = append(out, seg)
		}
	}
	return out, true
}

// SegmentState downloads seg's leader-epoch checkpoint and producer
// snapshot (tier.Reader.SegmentState).
func (s TierState) SegmentState(ctx context.Context, seg remotemeta.RemoteSegment) ([]base.EpochStart, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, remoteOpTimeout)
	defer cancel()
	epochs, snapshot, err := s.Reader.SegmentState(ctx, seg)
	if err != nil {
		return nil, nil, fmt.Errorf("remote state of %v segment %v: %w", seg.TP, seg.ID, err)
	}
	return epochs, snapshot, nil
}

// AbortedTxns returns the entries of seg's transaction index
// (tier.Reader.TxnIndex) as the partition's aborted transactions.
func (s TierState) AbortedTxns(ctx context.Context, seg remotemeta.RemoteSegment) ([]partition.AbortedTxn, error) {
	ctx, cancel := context.WithTimeout(ctx, remoteOpTimeout)
	defer cancel()
	ts, err := s.Reader.TxnIndex(ctx, seg)
	if err != nil {
		return nil, fmt.Errorf("transaction index of %v segment %v: %w", seg.TP, seg.ID, err)
	}
	out := make([]partition.AbortedTxn, len(ts))
	for i, t := range ts {
		out[i] = partition.AbortedTxn(t)
	}
	return out, nil
}

package replication

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// TierState is the remote tier as a follower rebuilds its state from it
// (KIP-405; Kafka's RemoteLogManager as TierStateMachine uses it): the
// metadata quorum's remote segments and the objects of one segment. The
// broker implements it over the metadata image and the tier's reader.
// Safe for concurrent use.
type TierState interface {
	// FinishedSegments returns the partition's COPY_FINISHED remote
	// segments, ascending by base offset; ok is false when the quorum's
	// metadata is not loaded (or does not validate), which is not the same
	// as nothing tiered.
	FinishedSegments(topicID base.TopicID, tp base.TopicPartition) (segs []remotemeta.RemoteSegment, ok bool)
	// SegmentState downloads seg's leader-epoch checkpoint and producer
	// snapshot, checked as objects read from the bucket are; the snapshot
	// is nil when the upload had none.
	SegmentState(ctx context.Context, seg remotemeta.RemoteSegment) (epochs []base.EpochStart, producerSnapshot []byte, err error)
	// AbortedTxns returns the entries of seg's transaction index: the
	// aborted transactions whose ABORT marker is in seg, ascending by
	// marker; nil when it has none.
	AbortedTxns(ctx context.Context, seg remotemeta.RemoteSegment) ([]partition.AbortedTxn, error)
}

// ErrNoRemoteState: the remote tier holds no segment of the leader's
// lineage to rebuild a follower's state from at the offset asked (nothing
// uploaded there yet, or it was deleted). The fetcher backs off and
// tries again.
var ErrNoRemoteState = errors.New("replication: no remote segment of the leader's lineage to rebuild the follower's state from")

// startPhase is where a newly followed partition begins: the tiered
// bootstrap for an empty follower of a tiered partition when KIP-1023 is
// on, else fetching.
func (f *fetcher) startPhase(r Replica) phase {
	if !f.opts.LastTieredOffsetBootstrap || f.opts.Tier == nil || !r.Tiered() {
		return phaseFetch
	}
	if off := r.Offsets(); !EmptyFollower(off.LogStart, off.LogEnd) {
		return phaseFetch
	}
	return phaseBootstrap
}

// bootstrapReady runs the tiered bootstrap of the partitions of batch in
// phaseBootstrap, one at a time, and returns the others. A failed
// bootstrap backs its partition off; it stays in phaseBootstrap.
func (f *fetcher) bootstrapReady(ctx context.Context, batch map[base.TopicPartition]*followed) map[base.TopicPartition]*followed {
	for tp, fl := range batch {
		if fl.phase != phaseBootstrap {
			continue
		}
		delete(batch, tp)
		if err := f.bootstrap(ctx, fl); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			f.log.Warn("bootstrapping a follower from the tiered offset failed (retried)", "partition", tp.String(), "err", err)
			f.backoff(map[base.TopicPartition]*followed{tp: fl})
		}
	}
	return batch
}

// bootstrap is KIP-1023 for one empty follower: it asks the leader for
// its earliest pending upload offset, log start and earliest local offset
// (TieredBootstrap) and either rebuilds its state from the remote tier at
// that offset or fetches from the log start as without the feature. If
// the tier holds no segment of the leader's lineage ending there, the
// follower fetches from the log start too (where the leader's answers
// lead it back to the tier as KIP-405 says).
func (f *fetcher) bootstrap(ctx context.Context, fl *followed) error {
	pending, known, err := f.listLeaderOffset(ctx, fl, -6)
	if err != nil {
		return err
	}
	logStart, err := f.leaderOffset(ctx, fl, -2)
	if err != nil {
		return err
	}
	local, err := f.leaderOffset(ctx, fl, -4)
	if err != nil {
		return err
	}
	kind, at := TieredBootstrap(pending, known, logStart, local)
	tp := fl.r.TP().String()
	switch kind {
	case BootstrapRetry:
		return fmt.Errorf("leader %d has tiered segments of %s but does not know its earliest pending upload yet (log start %d, local log start %d)",
			f.leader, tp, logStart, local)
	case BootstrapFromTier:
		err := f.rebuildFromTier(ctx, fl, at, logStart)
		if errors.Is(err, ErrNoRemoteState) {
			f.log.Warn("no remote state at the leader's tiered offset: fetching from its log start", "partition", tp,
				"earliest_pending_upload", at, "log_start", logStart, "err", err)
			break
		}
		if err != nil {
			return err
		}
		f.log.Info("empty follower bootstrapped from the tiered offset (KIP-1023); it holds no local copy of the tiered offsets",
			"partition", tp, "local_log_start", fl.r.Offsets().LocalStart, "leader_log_start", logStart, "leader_local_log_start", local)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if cur, ok := f.parts[fl.r.TP()]; ok && cur.r == fl.r && cur.leaderEpoch == fl.leaderEpoch {
		cur.phase = phaseFetch
	}
	return nil
}

// startFromTier handles OFFSET_MOVED_TO_TIERED_STORAGE (Kafka's
// AbstractFetcherThread.handleOffsetsMovedToTieredStorage and
// TierStateMachine.start): the follower asks the leader for its earliest
// local offset and log start and rebuilds its state at the former from
// the remote tier. Without a remote tier it cannot, and backs off.
func (f *fetcher) startFromTier(ctx context.Context, fl *followed) error {
	if f.opts.Tier == nil {
		return fmt.Errorf("leader %d answered %w and this broker has no remote tier", f.leader, kerr.OffsetMovedToTieredStorage)
	}
	local, err := f.leaderOffset(ctx, fl, -4)
	if err != nil {
		return err
	}
	logStart, err := f.leaderOffset(ctx, fl, -2)
	if err != nil {
		return err
	}
	if local <= logStart {
		return fmt.Errorf("leader %d answered %w, but its local log starts at its log start %d", f.leader, kerr.OffsetMovedToTieredStorage, logStart)
	}
	return f.rebuildFromTier(ctx, fl, local, logStart)
}

// rebuildFromTier rebuilds fl's state at target (above the leader's log
// start) from the remote tier: it plans with PlanAuxState, asking the
// leader what the plan needs, downloads the top segment's leader-epoch
// checkpoint (which must be the quorum's epochs of that segment) and
// producer snapshot, and starts the follower over there
// (StartOverFromTier), if it is still followed as it was.
func (f *fetcher) rebuildFromTier(ctx context.Context, fl *followed, target, leaderLogStart base.Offset) error {
	tp := fl.r.TP()
	segs, ok := f.opts.Tier.FinishedSegments(fl.r.TopicID(), tp)
	if !ok {
		return fmt.Errorf("the remote segment metadata of %v is not loaded", tp)
	}
	// PlanAuxState asks about each epoch of the segments at most once:
	// one more round than that is a broken promise, not a slow leader.
	rounds := 2
	for _, s := range segs {
		rounds += len(s.LeaderEpochs)
	}
	answers := map[base.Epoch]LeaderAnswer{}
	for range rounds {
		plan := PlanAuxState(segs, leaderLogStart, target, answers)
		switch plan.Kind {
		case AuxAsk:
			a, err := f.leaderEpochEnd(ctx, fl, plan.Ask)
			if err != nil {
				return err
			}
			answers[plan.Ask] = a
			continue
		case AuxMissing:
			return fmt.Errorf("%w: %v at offset %d (%d remote segments)", ErrNoRemoteState, tp, target-1, len(segs))
		}
		epochs, snapshot, err := f.opts.Tier.SegmentState(ctx, plan.Top)
		if err != nil {
			return err
		}
		if !slices.Equal(epochs, plan.Top.LeaderEpochs) {
			return fmt.Errorf("remote segment %v of %v: its leader-epoch checkpoint %v is not the quorum's %v",
				plan.Top.ID, tp, epochs, plan.Top.LeaderEpochs)
		}
		if snapshot == nil {
			f.log.Warn("remote segment has no producer snapshot: the follower starts with no producer state",
				"partition", tp.String(), "segment", plan.Top.ID.String(), "range", plan.Top.Range.String())
		}
		var aborted []partition.AbortedTxn
		for _, s := range plan.Chain {
			ts, err := f.opts.Tier.AbortedTxns(ctx, s)
			if err != nil {
				return err
			}
			aborted = append(aborted, ts...)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if !f.currentLocked(fl) {
			return nil
		}
		f.log.Info("rebuilding the follower's state from the remote tier", "partition", tp.String(),
			"local_log_start", plan.Top.Range.End, "log_start", plan.LogStart, "leader_log_start", leaderLogStart,
			"epochs", len(plan.Lineage), "remote_segments", len(plan.Chain), "aborted_txns", len(aborted),
			"segment", plan.Top.ID.String())
		return fl.r.StartOverFromTier(partition.TierStart{
			LocalStart: plan.Top.Range.End, LogStart: plan.LogStart, Lineage: plan.Lineage,
			ProducerSnapshot: snapshot, Aborted: aborted,
		})
	}
	panic(fmt.Sprintf("replication: rebuilding %v from the remote tier asked leader %d more than %d questions", tp, f.leader, rounds))
}

// leaderEpochEnd asks the leader, as a replica, OffsetForLeaderEpoch
// about epoch: the largest epoch at or below it in the leader's lineage
// and that epoch's end offset.
func (f *fetcher) leaderEpochEnd(ctx context.Context, fl *followed, epoch base.Epoch) (LeaderAnswer, error) {
	client, err := f.opts.Client(f.leader, f.id)
	if err != nil {
		return LeaderAnswer{}, err
	}
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.ReplicaID = f.opts.NodeID
	t := kmsg.NewOffsetForLeaderEpochRequestTopic()
	t.Topic = fl.r.TP().Topic
	p := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
	p.Partition = fl.r.TP().Partition
	p.CurrentLeaderEpoch = int32(fl.leaderEpoch)
	p.LeaderEpoch = int32(epoch)
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	rctx, cancel := context.WithTimeout(ctx, f.opts.RequestTimeout)
	defer cancel()
	resp, err := req.RequestWith(rctx, client)
	if err != nil {
		return LeaderAnswer{}, err
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return LeaderAnswer{}, fmt.Errorf("broker %d answered OffsetForLeaderEpoch for %d topics", f.leader, len(resp.Topics))
	}
	rp := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
		return LeaderAnswer{}, fmt.Errorf("broker %d answered OffsetForLeaderEpoch with %w", f.leader, err)
	}
	switch {
	case rp.EndOffset < 0:
		return UndefinedAnswer(), nil
	case rp.LeaderEpoch < 0:
		return OffsetOnlyAnswer(base.Offset(rp.EndOffset)), nil
	}
	return EpochEndAnswer(EpochEnd{Epoch: base.Epoch(rp.LeaderEpoch), End: base.Offset(rp.EndOffset)}), nil
}

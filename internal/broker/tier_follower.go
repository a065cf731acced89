package broker

import (
	"errors"

	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/tier"
)

// followerLocalRetentionPass is the local retention of the follower
// partitions of tiered topics hosted here (DESIGN §4 rule 5: "Followers
// decide the same from the quorum's metadata"). The tier loop, which
// applies a tiered partition's retention, runs only where the partition
// is led, and ApplyRetention leaves tiered partitions to it; without this
// pass a follower's local log would grow without bound.
//
// It runs every Tier.Interval (remote.log.manager.task.interval.ms), the
// cadence of the leaders' tier loops, rather than every
// log.retention.check.interval.ms: the leader deletes its local copies of
// tiered segments at that cadence, and the follower, which learns what is
// tiered from the same quorum, then keeps about as much on disk as its
// leader (Kafka's followers, whose local deletion runs with the log
// cleanup, trail their leader by up to the retention check interval, five
// minutes by default). One goroutine serves every follower partition: a
// pass per partition is a plan on an immutable snapshot and, rarely, a
// few renames and unlinks.
func (b *Broker) followerLocalRetentionPass() {
	now := b.opts.Clock.Now().UnixMilli()
	for _, p := range b.Partitions() {
		if p.IsLeader() || !p.Tiered() {
			continue // a leader's tier loop applies its retention
		}
		b.followerLocalRetention(p, now)
	}
}

// followerLocalRetention plans (tier.PlanFollowerLocal) and applies
// (DeleteTieredLocalBefore) the local retention of follower p, and logs
// what it deleted. A failure is retried by the next pass.
func (b *Broker) followerLocalRetention(p *partition.Partition, nowMs int64) {
	// The offsets first: a log read after them only grew, so the snapshot
	// keeps highWatermark <= logEnd while the fetcher appends.
	off := p.Offsets()
	in := tier.FollowerLocalInput{
		Local:         p.TierLocal().Segments(),
		Lineage:       p.Lineage(),
		HighWatermark: off.HighWatermark,
		LogStart:      off.LogStart,
		Policy:        p.Config().Retention,
		NowMs:         nowMs,
	}
	tp := p.TP().String()
	plan, err := tier.PlanFollowerLocal(in, b.views(p).View())
	if err != nil {
		// A truncation between the reads above can make the snapshot
		// inconsistent; the next pass reads it again.
		b.logger.Warn("follower local retention not planned (retried)", "partition", tp, "err", err)
		return
	}
	if len(plan.Deletions) == 0 {
		return
	}
	err = p.DeleteTieredLocalBefore(plan.DeleteLocalBefore)
	switch {
	case errors.Is(err, partition.ErrClosed), errors.Is(err, partition.ErrNotFollower), errors.Is(err, partition.ErrFollowerNotTiered):
		return // it closed, leads or stopped tiering since the snapshot
	case err != nil:
		b.logger.Warn("follower local retention (retried)", "partition", tp, "err", err)
		return
	}
	reasons := make([]string, len(plan.Reasons))
	for i, r := range plan.Reasons {
		reasons[i] = r.String()
	}
	b.logger.Info("follower deleted tiered local segments", "partition", tp, "segments", len(plan.Deletions),
		"local_log_start_from", in.Local[0].BaseOffset, "to", p.Offsets().LocalStart,
		"tiered_next", plan.Tiered.Next, "log_start", in.LogStart, "reasons", reasons)
}

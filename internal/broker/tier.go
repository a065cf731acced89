package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/tier"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// TierDeps are the executors of the remote tier (DESIGN §4). A nil
// Options.Tier means tiering is off on this broker.
type TierDeps struct {
	Copier  *tier.Copier
	Deleter *tier.Deleter
	Reader  *tier.Reader
	// Interval is remote.log.manager.task.interval.ms: the cadence of each
	// partition's tier loop and of the deleted-topic cleanup.
	Interval time.Duration
	// RetryBackoff and RetryBackoffMax are
	// remote.log.manager.task.retry.backoff.ms and ….max.ms: after a failed
	// pass the loop retries sooner than Interval, backing off (tier_retry.go).
	RetryBackoff    time.Duration
	RetryBackoffMax time.Duration
	// Jitter draws uniformly from [0, 1) to spread retries; safe for
	// concurrent use (every tier loop calls it).
	Jitter func() float64
	// ListOffsetsTimeout is remote.list.offsets.request.timeout.ms: the
	// longest a ListOffsets searches the remote tier.
	ListOffsetsTimeout time.Duration
	// Orphans, when set, is the bucket reconciler, run every
	// OrphanScanInterval over the whole store (orphans.go); nil runs none.
	Orphans            *tier.Reconciler
	OrphanScanInterval time.Duration
}

// Validate reports the first unusable dependency.
func (d *TierDeps) Validate() error {
	switch {
	case d.Copier == nil || d.Deleter == nil || d.Reader == nil:
		return errors.New("broker: Tier needs Copier, Deleter and Reader")
	case d.Interval <= 0:
		return errors.New("broker: Tier.Interval must be positive")
	case d.RetryBackoff <= 0 || d.RetryBackoffMax <= 0 || d.Jitter == nil:
		return errors.New("broker: Tier needs a positive RetryBackoff and RetryBackoffMax, and Jitter")
	case d.ListOffsetsTimeout <= 0:
		return errors.New("broker: Tier.ListOffsetsTimeout must be positive")
	}
	return d.validateOrphans()
}

// remoteOpTimeout bounds one remote read of a request.
const remoteOpTimeout = 30 * time.Second

// tierLoop is the goroutine running tier.Pass for one partition; stop ends
// it and waits.
type tierLoop struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func (l *tierLoop) stop() {
	l.cancel()
	<-l.done
}

// syncTierLoopLocked starts h's tier loop if its topic is tiered and this
// node leads it, and stops it if either no longer holds: only a leader
// copies and expires remote segments (DESIGN §4).
func (b *Broker) syncTierLoopLocked(h *hosted) {
	want := b.opts.Tier != nil && h.role == roleLeader && h.p.Tiered()
	switch {
	case want && h.tier == nil:
		h.tier = b.startTierLoop(h.p)
	case !want && h.tier != nil:
		h.tier.stop()
		h.tier = nil
	}
}

// startTierLoop runs p's passes every Interval, and sooner, backing off,
// while they fail (tierRetry). The first pass runs at once, as Kafka's
// leader tasks start with no delay: a replica that has just become leader
// may hold a log start below what the last leader's retention left (it
// heard of the log start a fetch late), and its first pass moves it to the
// tier's first offset (retention.KindNeitherTier) before clients are told
// of offsets that no tier holds.
func (b *Broker) startTierLoop(p *partition.Partition) *tierLoop {
	ctx, cancel := context.WithCancel(context.Background())
	l := &tierLoop{cancel: cancel, done: make(chan struct{})}
	deps := b.opts.Tier
	pace := tierRetry{Interval: deps.Interval, Backoff: deps.RetryBackoff, BackoffMax: deps.RetryBackoffMax}
	go func() {
		defer close(l.done)
		t := time.NewTimer(0)
		defer t.Stop()
		failures := 0
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if b.tierPass(ctx, p) {
					failures = 0
				} else {
					failures++
				}
				t.Reset(pace.next(failures, deps.Jitter()))
			}
		}
	}()
	return l
}

// partitionViews is the quorum's view of one partition's remote segments.
type partitionViews struct {
	b       *Broker
	topicID base.TopicID
	tp      base.TopicPartition
}

func (v partitionViews) View() tier.PartitionView {
	view, err := v.b.viewCache.view(v.b.opts.Meta.Image(), v.topicID, v.tp.Partition)
	if err != nil {
		// An invalid view plans nothing: unloaded means no deletion.
		v.b.logger.Error("remote segment metadata", "partition", v.tp.String(), "err", err)
	}
	return view
}

func (b *Broker) views(p *partition.Partition) partitionViews {
	return partitionViews{b: b, topicID: p.TopicID(), tp: p.TP()}
}

// tierPass runs one pass of p's tier loop, logs what it did and reports
// whether it succeeded.
func (b *Broker) tierPass(ctx context.Context, p *partition.Partition) bool {
	off := p.Offsets()
	cfg := p.Config()
	in := tier.PassInput{
		TopicID:          p.TopicID(),
		TP:               p.TP(),
		LeaderEpoch:      off.LeaderEpoch,
		Lineage:          p.Lineage(),
		LastStableOffset: off.LastStable,
		HighWatermark:    off.HighWatermark,
		LogStart:         off.LogStart,
		Policy:           cfg.Retention,
		Copy: tier.CopyConfig{
			CopyDisabled: cfg.RemoteCopyDisabled,
			Lag:          tier.CopyLag{Ms: cfg.RemoteCopyLag.Milliseconds(), Bytes: cfg.RemoteCopyLagBytes},
		},
		NowMs: b.opts.Clock.Now().UnixMilli(),
	}
	rep := tier.Pass(ctx, in, tier.PassDeps{
		Local: p.TierLocal(), Views: b.views(p), Copier: b.opts.Tier.Copier, Deleter: b.opts.Tier.Deleter,
	})
	tp := p.TP().String()
	for _, s := range rep.Copied {
		b.logger.Debug("tiered segment", "partition", tp, "range", s.Range.String(), "bytes", s.SizeBytes, "segment", s.ID.String())
	}
	if rep.Decided && rep.LocalApplied && rep.Decision.NewLogStart > in.LogStart {
		for _, r := range rep.Decision.Reasons {
			b.logger.Info("tier pass moved the log start", "partition", tp, "from", in.LogStart,
				"to", rep.Decision.NewLogStart, "reason", r.String())
		}
	}
	for _, d := range rep.Deleted {
		b.logger.Debug("deleted remote segment", "partition", tp, "range", d.Segment.Range.String(), "reason", d.Reason.String())
	}
	if rep.Failed != nil && ctx.Err() == nil && !errors.Is(rep.Failed, partition.ErrClosed) {
		b.logger.Warn("tier pass (retried with backoff)", "partition", tp, "err", rep.Failed)
	}
	return rep.Failed == nil
}

// remoteDeletePass deletes the remote data of partitions whose tiering was
// turned off (deleteDisabledTiers) and of deleted topics, then finishes the
// latter's deletion in the quorum. A failure is retried next pass. The
// first is each partition leader's; the second runs on the controller
// only, so that one broker does each deletion.
func (b *Broker) remoteDeletePass() {
	ctx, cancel := context.WithTimeout(context.Background(), 4*b.opts.Tier.Interval+time.Minute)
	defer cancel()
	b.deleteDisabledTiers(ctx)
	if !b.opts.Meta.IsController() {
		return
	}
	// A deleted topic's counts went with its partitions (tier_stats.go):
	// these deletions count into no partition, not even one of a topic
	// created since under the same name, which counts from zero.
	deleter := *b.opts.Tier.Deleter
	deleter.Stats = nil
	for _, t := range b.opts.Meta.Image().PendingRemoteDeletes() {
		var errs []error
		for _, s := range t.Segments {
			idx := s.TP.Partition
			if idx < 0 || int(idx) >= len(t.Partitions) {
				errs = append(errs, fmt.Errorf("segment %v of %s: no partition %d", s.ID, t.Name, idx))
				continue
			}
			task := tier.DeleteTask{Segment: s, Reason: tier.DeleteTopic}
			if err := deleter.Delete(ctx, task, t.Partitions[idx].LeaderEpoch); err != nil {
				errs = append(errs, err)
			}
		}
		if err := errors.Join(errs...); err != nil {
			b.logger.Warn("deleting the remote data of a deleted topic (retried)", "topic", t.Name, "err", err)
			continue
		}
		if err := b.opts.Meta.FinishRemoteTopicDelete(ctx, t.TopicID); err != nil {
			b.logger.Warn("finishing the remote delete of a topic (retried)", "topic", t.Name, "err", err)
			continue
		}
		b.logger.Info("deleted the remote data of a deleted topic", "topic", t.Name, "segments", len(t.Segments))
	}
}

// RemoteRead is what a read of the remote tier returns: whole batches,
// either as bytes (Batches) or as a region of a cached chunk to send
// as it is (Region.File set; the receiver closes it).
type RemoteRead struct {
	Batches []byte
	Region  partition.Region
}

// Size is the bytes of batches read.
func (r RemoteRead) Size() int {
	if r.Region.File != nil {
		return int(r.Region.Size)
	}
	return len(r.Batches)
}

// ReadRemote serves a read of p below its local log start from the remote
// tier: whole batches from the one holding from, up to maxBytes but at
// least that batch, as a cached chunk region when the chunk cache can
// answer so, else as bytes. ErrOffsetOutOfRange when no remote segment
// holds from. The segments after the one read are named to the reader,
// for its read-ahead across segments.
func (b *Broker) ReadRemote(ctx context.Context, p *partition.Partition, from base.Offset, maxBytes int) (RemoteRead, error) {
	seg, following, ok := b.remoteSegmentsFrom(p, from)
	if !ok {
		return RemoteRead{}, fmt.Errorf("%w: offset %d of %v is in no remote segment", partition.ErrOffsetOutOfRange, from, p.TP())
	}
	ctx, cancel := context.WithTimeout(ctx, remoteOpTimeout)
	defer cancel()
	var read RemoteRead
	reg, ok, err := b.opts.Tier.Reader.ReadRegion(ctx, seg, from, maxBytes)
	if ok {
		read.Region = partition.Region{File: reg.File, Pos: reg.Pos, Size: reg.Size, Next: reg.Next, Release: reg.Release}
	} else if err == nil {
		read.Batches, err = b.opts.Tier.Reader.Read(ctx, seg, from, maxBytes)
	}
	if err == nil {
		b.opts.Tier.Reader.ReadAheadFollowing(seg, following)
	}
	return read, err
}

// remoteSegmentsFrom is the remote segment of p's lineage holding from,
// and the remote segments that follow it, in order, as many as the
// read-ahead can reach; all from one view of the metadata.
func (b *Broker) remoteSegmentsFrom(p *partition.Partition, from base.Offset) (seg remotemeta.RemoteSegment, following []remotemeta.RemoteSegment, ok bool) {
	if b.opts.Tier == nil {
		return seg, nil, false
	}
	view, lineage := b.views(p).View(), p.Lineage()
	if seg, ok = view.SegmentAt(lineage, from); !ok {
		return seg, nil, false
	}
	n := b.opts.Tier.Reader.ReadAheadObjects()
	for last := seg; len(following) < n; {
		next, found := view.SegmentAt(lineage, last.Range.End)
		if !found {
			break
		}
		following = append(following, next)
		last = next
	}
	return seg, following, true
}

// RemoteFetchThrottled reports whether reads from the remote tier are
// over remote.log.manager.fetch.max.bytes.per.second for now; a fetch then
// skips them and answers those partitions with no records and no error
// (KIP-956).
func (b *Broker) RemoteFetchThrottled() bool {
	return b.opts.Tier != nil && b.opts.Tier.Reader.FetchThrottled()
}

// LastTiered is ListOffsets -5: the last offset in the remote tier.
func (b *Broker) LastTiered(p *partition.Partition) (base.Offset, bool) {
	if b.opts.Tier == nil {
		return 0, false
	}
	return b.views(p).View().LastTiered(p.Lineage())
}

// EarliestPendingUpload is ListOffsets -6 (KIP-1023); ok is false when the
// tier is unknown. An untiered partition answers its local log start.
func (b *Broker) EarliestPendingUpload(p *partition.Partition) (base.Offset, bool) {
	local := p.Offsets().LocalStart
	if b.opts.Tier == nil || !p.Tiered() {
		return local, true
	}
	return b.views(p).View().EarliestPendingUpload(p.Lineage(), local)
}

// SetRemoteListOffsetsTimeout changes how long a ListOffsets search of the
// remote tier may take (remote.list.offsets.request.timeout.ms, dynamic as
// in Kafka), from the next search on.
func (b *Broker) SetRemoteListOffsetsTimeout(d time.Duration) {
	if d > 0 {
		b.listOffsetsTimeout.Store(int64(d))
	}
}

func (b *Broker) remoteListOffsetsTimeout() time.Duration {
	if d := b.listOffsetsTimeout.Load(); d > 0 {
		return time.Duration(d)
	}
	return b.opts.Tier.ListOffsetsTimeout
}

// RemoteOffsetForTimestamp searches the remote tier for the first record
// whose timestamp is >= ts, from the log start, within
// remote.list.offsets.request.timeout.ms; ok is false when the remote
// tier has none (search the local log then).
func (b *Broker) RemoteOffsetForTimestamp(ctx context.Context, p *partition.Partition, ts int64) (base.Offset, int64, bool, error) {
	if b.opts.Tier == nil {
		return 0, 0, false, nil
	}
	logStart := p.Offsets().LogStart
	ctx, cancel := context.WithTimeout(ctx, b.remoteListOffsetsTimeout())
	defer cancel()
	for _, s := range b.views(p).View().FinishedFrom(p.Lineage(), logStart) {
		if s.MaxTimestampMs < ts {
			continue
		}
		o, foundTs, ok, err := b.opts.Tier.Reader.OffsetForTimestamp(ctx, s, ts, logStart)
		if err != nil || ok {
			return o, foundTs, ok, err
		}
	}
	return 0, 0, false, nil
}

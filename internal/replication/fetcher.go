package replication

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition"
)

// Replica is the follower side of one local partition, as a fetcher drives
// it; *partition.Partition implements it.
type Replica interface {
	TP() base.TopicPartition
	TopicID() base.TopicID
	Offsets() partition.Offsets
	Lineage() []base.EpochStart
	LatestEpoch() (base.Epoch, bool)
	AppendAsFollower(batches []byte) (partition.FollowerAppend, error)
	SyncFollower() (base.Offset, error)
	SetHighWatermarkFromLeader(hw base.Offset) (base.Offset, error)
	SetLogStartFromLeader(start base.Offset) error
	TruncateTo(o base.Offset) error
	TruncateFullyAndStartAt(o base.Offset) error
	// Tiered and StartOverFromTier serve the rebuild from the remote
	// tier (fetcher_tier.go).
	Tiered() bool
	StartOverFromTier(s partition.TierStart) error
}

// followed is one partition a fetcher replicates, under the fetcher's lock.
type followed struct {
	r           Replica
	leaderEpoch base.Epoch
	retryAt     time.Time // zero: fetch now
	phase       phase
}

// phase is where a followed partition is in its fetcher. The zero value
// is invalid.
type phase uint8

const (
	// phaseFetch: fetch from the log end.
	phaseFetch phase = iota + 1
	// phaseBootstrap: an empty follower with KIP-1023 on asks its leader
	// for the tiered offset before its first fetch (fetcher_tier.go);
	// it moves to phaseFetch once it knows where to start.
	phaseBootstrap
)

// fetcher replicates the partitions led by one broker (all of them, or
// its share of them with num.replica.fetchers above 1), in one goroutine
// (Kafka's ReplicaFetcherThread): fetch, apply each partition's answer,
// make the appended bytes durable, fetch again.
type fetcher struct {
	opts   *FetchersOptions
	leader int32
	id     int // which of the leader's fetchers (num.replica.fetchers)
	log    *slog.Logger

	mu    sync.Mutex
	parts map[base.TopicPartition]*followed
	wake  chan struct{} // cap 1: a partition was added or its epoch changed
	stop  chan struct{}
	done  chan struct{}
}

func newFetcher(opts *FetchersOptions, key fetcherKey) *fetcher {
	f := &fetcher{
		opts: opts, leader: key.leader, id: key.id,
		log:   opts.Logger.With("leader", key.leader, "fetcher", key.id),
		parts: map[base.TopicPartition]*followed{},
		wake:  make(chan struct{}, 1),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	go f.run()
	return f
}

func (f *fetcher) nudge() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// set adds r or updates its leader epoch; a new epoch fetches at once,
// or first bootstraps from the tiered offset (startPhase).
func (f *fetcher) set(r Replica, epoch base.Epoch) {
	f.mu.Lock()
	defer f.mu.Unlock()
	tp := r.TP()
	if fl, ok := f.parts[tp]; ok && fl.r == r && fl.leaderEpoch == epoch {
		return
	}
	f.parts[tp] = &followed{r: r, leaderEpoch: epoch, phase: f.startPhase(r)}
	f.nudge()
}

// followed is the replica and leader epoch f follows tp in.
func (f *fetcher) followed(tp base.TopicPartition) (Replica, base.Epoch, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fl, ok := f.parts[tp]
	if !ok {
		return nil, 0, false
	}
	return fl.r, fl.leaderEpoch, true
}

// remove forgets tp; it reports whether the fetcher has nothing left.
func (f *fetcher) remove(tp base.TopicPartition) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.parts, tp)
	return len(f.parts) == 0
}

func (f *fetcher) close() {
	close(f.stop)
	<-f.done
}

func (f *fetcher) run() {
	defer close(f.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-f.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		batch, nextRetry := f.ready()
		if len(batch) == 0 {
			if !f.idle(nextRetry) {
				return
			}
			continue
		}
		batch = f.bootstrapReady(ctx, batch)
		if ctx.Err() != nil {
			return
		}
		if len(batch) == 0 {
			continue
		}
		if err := f.round(ctx, batch); err != nil {
			if ctx.Err() != nil {
				return
			}
			f.log.Warn("replica fetch failed", "err", err, "partitions", len(batch))
			f.backoff(batch)
		}
	}
}

// ready returns the partitions to fetch now and, when there are none, the
// earliest time one becomes ready (zero: none waits).
func (f *fetcher) ready() (map[base.TopicPartition]*followed, time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.opts.Clock.Now()
	out := map[base.TopicPartition]*followed{}
	var next time.Time
	for tp, fl := range f.parts {
		if fl.retryAt.IsZero() || !now.Before(fl.retryAt) {
			cp := *fl
			out[tp] = &cp
			continue
		}
		if next.IsZero() || fl.retryAt.Before(next) {
			next = fl.retryAt
		}
	}
	return out, next
}

// idle waits for a change, the next retry or the stop; false on stop.
func (f *fetcher) idle(until time.Time) bool {
	var timer <-chan time.Time
	if !until.IsZero() {
		t := time.NewTimer(until.Sub(f.opts.Clock.Now()))
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-f.stop:
		return false
	case <-f.wake:
	case <-timer:
	}
	return true
}

// backoff delays the given partitions by the fetch backoff, unless they
// changed meanwhile (a new epoch fetches at once).
func (f *fetcher) backoff(batch map[base.TopicPartition]*followed) {
	f.mu.Lock()
	defer f.mu.Unlock()
	at := f.opts.Clock.Now().Add(f.opts.Backoff)
	for tp, was := range batch {
		if fl, ok := f.parts[tp]; ok && fl.r == was.r && fl.leaderEpoch == was.leaderEpoch {
			fl.retryAt = at
		}
	}
}

// round is one fetch from the leader and the handling of its answer.
func (f *fetcher) round(ctx context.Context, batch map[base.TopicPartition]*followed) error {
	throttled := f.throttled(batch)
	if len(throttled) > 0 && f.opts.Throttle.Exceeded() {
		held := make(map[base.TopicPartition]*followed, len(throttled))
		for tp := range throttled {
			held[tp] = batch[tp]
			delete(batch, tp)
		}
		f.backoff(held)
		if len(batch) == 0 {
			return nil
		}
	}
	req := f.request(batch)
	client, err := f.opts.Client(f.leader, f.id)
	if err != nil {
		return fmt.Errorf("reaching broker %d: %w", f.leader, err)
	}
	rctx, cancel := context.WithTimeout(ctx, f.opts.MaxWait+f.opts.RequestTimeout)
	resp, err := req.RequestWith(rctx, client)
	cancel()
	if err != nil {
		return err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return err
	}
	byID := map[base.TopicID]string{}
	for _, fl := range batch {
		byID[fl.r.TopicID()] = fl.r.TP().Topic
	}
	var later, resets, tiered []*followed
	var appended []Replica
	var throttledBytes int64
	// Answers are applied under the lock, and only to a partition still
	// followed in the epoch it was fetched in: once Unfollow returns, or a
	// new epoch is set, no answer of an older fetch touches the partition.
	f.mu.Lock()
	for _, rt := range resp.Topics {
		name := rt.Topic
		if n, ok := byID[base.TopicID(rt.TopicID)]; ok && name == "" {
			name = n
		}
		for i := range rt.Partitions {
			rp := &rt.Partitions[i]
			fl, ok := batch[base.TopicPartition{Topic: name, Partition: rp.Partition}]
			if !ok || !f.currentLocked(fl) {
				continue
			}
			if throttled[fl.r.TP()] {
				throttledBytes += int64(len(rp.RecordBatches))
			}
			step, more, err := f.apply(fl, rp)
			switch {
			case err != nil:
				f.log.Warn("replicating a partition failed", "partition", fl.r.TP().String(), "err", err)
				later = append(later, fl)
			case step == StepOutOfRange:
				resets = append(resets, fl)
			case step == StepFromTier:
				tiered = append(tiered, fl)
			case more:
				appended = append(appended, fl.r)
			}
		}
	}
	f.mu.Unlock()
	if throttledBytes > 0 {
		f.opts.Throttle.Record(throttledBytes)
	}
	// Durable before the next fetch reports the new log end to the leader:
	// acks=all is then on disk on every in-sync replica.
	for _, r := range appended {
		if _, err := r.SyncFollower(); err != nil {
			f.log.Warn("syncing a follower failed", "partition", r.TP().String(), "err", err)
		}
	}
	for _, fl := range resets {
		if err := f.resetOutOfRange(ctx, fl); err != nil {
			f.log.Warn("resetting an out-of-range follower failed", "partition", fl.r.TP().String(), "err", err)
			later = append(later, fl)
		}
	}
	for _, fl := range tiered {
		if err := f.startFromTier(ctx, fl); err != nil {
			f.log.Warn("rebuilding a follower's state from the remote tier failed", "partition", fl.r.TP().String(), "err", err)
			later = append(later, fl)
		}
	}
	if len(later) > 0 {
		delayed := map[base.TopicPartition]*followed{}
		for _, fl := range later {
			delayed[fl.r.TP()] = fl
		}
		f.backoff(delayed)
	}
	return nil
}

// throttled is the partitions of batch the follower throttle names (nil
// without a throttle).
func (f *fetcher) throttled(batch map[base.TopicPartition]*followed) map[base.TopicPartition]bool {
	if f.opts.Throttle == nil {
		return nil
	}
	var out map[base.TopicPartition]bool
	for tp := range batch {
		if f.opts.Throttle.Throttled(tp) {
			if out == nil {
				out = map[base.TopicPartition]bool{}
			}
			out[tp] = true
		}
	}
	return out
}

// currentLocked reports whether fl is still followed as it was when its
// fetch was sent.
func (f *fetcher) currentLocked(fl *followed) bool {
	cur, ok := f.parts[fl.r.TP()]
	return ok && cur.r == fl.r && cur.leaderEpoch == fl.leaderEpoch
}

// request builds the follower's fetch: sessionless, from each partition's
// log end, with its last fetched epoch so the leader can detect divergence
// and its high watermark so the leader can tell it a newer one.
func (f *fetcher) request(batch map[base.TopicPartition]*followed) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = f.opts.NodeID
	req.ReplicaState.ID = f.opts.NodeID
	req.ReplicaState.Epoch = f.opts.BrokerEpoch()
	req.MaxWaitMillis = int32(f.opts.MaxWait.Milliseconds())
	req.MinBytes = f.opts.MinBytes
	req.MaxBytes = f.opts.MaxBytes
	req.SessionID, req.SessionEpoch = 0, -1 // sessionless full fetch
	topics := map[string]int{}
	for tp, fl := range batch {
		i, ok := topics[tp.Topic]
		if !ok {
			t := kmsg.NewFetchRequestTopic()
			t.Topic = tp.Topic
			t.TopicID = fl.r.TopicID()
			req.Topics = append(req.Topics, t)
			i = len(req.Topics) - 1
			topics[tp.Topic] = i
		}
		off := fl.r.Offsets()
		p := kmsg.NewFetchRequestTopicPartition()
		p.Partition = tp.Partition
		p.CurrentLeaderEpoch = int32(fl.leaderEpoch)
		p.FetchOffset = int64(off.LogEnd)
		p.LastFetchedEpoch = -1
		if e, ok := fl.r.LatestEpoch(); ok {
			p.LastFetchedEpoch = int32(e)
		}
		p.LogStartOffset = int64(off.LogStart)
		p.PartitionMaxBytes = f.opts.PartitionMaxBytes
		// The leader answers at once when its high watermark is past
		// this one (KIP-1166), so that consumers reading from this
		// follower (KIP-392) see records without waiting for the next
		// append.
		p.HighWatermark = int64(off.HighWatermark)
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
	}
	return req
}

// apply handles one partition's answer, under the fetcher's lock, except
// OFFSET_OUT_OF_RANGE, which needs the leader's offsets (resetOutOfRange,
// after the lock), and OFFSET_MOVED_TO_TIERED_STORAGE, which needs them
// and the remote tier (startFromTier, after the lock). appended reports
// whether bytes were appended (which the round then syncs).
func (f *fetcher) apply(fl *followed, rp *kmsg.FetchResponseTopicPartition) (step Step, appended bool, err error) {
	r := fl.r
	a := Answer{Err: kerr.ErrorForCode(rp.ErrorCode)}
	if rp.DivergingEpoch.Epoch >= 0 {
		a.Diverging = &EpochEnd{Epoch: base.Epoch(rp.DivergingEpoch.Epoch), End: base.Offset(rp.DivergingEpoch.EndOffset)}
	}
	off := r.Offsets()
	step, cut := Decide(a, FollowerState{Lineage: r.Lineage(), LogEnd: off.LogEnd, HighWatermark: off.HighWatermark})
	switch step {
	case StepTruncate:
		f.log.Info("follower diverged from its leader: truncating", "partition", r.TP().String(),
			"diverging_epoch", rp.DivergingEpoch.Epoch, "diverging_end", rp.DivergingEpoch.EndOffset,
			"log_end", off.LogEnd, "truncate_to", cut.Offset)
		return step, false, r.TruncateTo(cut.Offset)
	case StepOutOfRange, StepFromTier:
		return step, false, nil
	case StepBackoff:
		return step, false, fmt.Errorf("leader %d answered %w", f.leader, a.Err)
	}
	if len(rp.RecordBatches) > 0 {
		app, err := r.AppendAsFollower(rp.RecordBatches)
		if err != nil {
			return step, false, err
		}
		appended = app.Batches > 0
	}
	if _, err := r.SetHighWatermarkFromLeader(base.Offset(rp.HighWatermark)); err != nil {
		return step, appended, err
	}
	if err := r.SetLogStartFromLeader(base.Offset(rp.LogStartOffset)); err != nil && !errors.Is(err, partition.ErrOffsetOutOfRange) {
		return step, appended, err
	}
	return step, appended, nil
}

// resetOutOfRange asks the leader for its log end and start and moves the
// follower as OutOfRangeReset says, if it is still followed as fetched.
func (f *fetcher) resetOutOfRange(ctx context.Context, fl *followed) error {
	end, err := f.leaderOffset(ctx, fl, -1)
	if err != nil {
		return err
	}
	start, err := f.leaderOffset(ctx, fl, -2)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.currentLocked(fl) {
		return nil
	}
	logEnd := fl.r.Offsets().LogEnd
	to, startOver, changed := OutOfRangeReset(logEnd, end, start)
	switch {
	case !changed:
		return nil
	case startOver:
		f.log.Info("follower is behind its leader's log start: starting over", "partition", fl.r.TP().String(),
			"log_end", logEnd, "leader_log_start", start)
		return fl.r.TruncateFullyAndStartAt(to)
	default:
		f.log.Warn("leader's log ends below the follower's: truncating", "partition", fl.r.TP().String(),
			"log_end", logEnd, "leader_log_end", end)
		return fl.r.TruncateTo(to)
	}
}

// leaderOffset asks the leader, as a replica, for ListOffsets' answer to
// timestamp (-1 latest, -2 earliest, -4 earliest local); an answer of -1
// is an error.
func (f *fetcher) leaderOffset(ctx context.Context, fl *followed, timestamp int64) (base.Offset, error) {
	o, ok, err := f.listLeaderOffset(ctx, fl, timestamp)
	if err == nil && !ok {
		err = fmt.Errorf("broker %d answered ListOffsets %d for %v with no offset", f.leader, timestamp, fl.r.TP())
	}
	return o, err
}

// listLeaderOffset asks the leader, as a replica, for ListOffsets' answer
// to timestamp; ok is false when it answered -1 (unknown, as -6 may).
func (f *fetcher) listLeaderOffset(ctx context.Context, fl *followed, timestamp int64) (base.Offset, bool, error) {
	client, err := f.opts.Client(f.leader, f.id)
	if err != nil {
		return 0, false, err
	}
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = f.opts.NodeID
	t := kmsg.NewListOffsetsRequestTopic()
	t.Topic = fl.r.TP().Topic
	p := kmsg.NewListOffsetsRequestTopicPartition()
	p.Partition = fl.r.TP().Partition
	p.CurrentLeaderEpoch = int32(fl.leaderEpoch)
	p.Timestamp = timestamp
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	rctx, cancel := context.WithTimeout(ctx, f.opts.RequestTimeout)
	defer cancel()
	resp, err := req.RequestWith(rctx, client)
	if err != nil {
		return 0, false, err
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return 0, false, fmt.Errorf("broker %d answered ListOffsets for %d topics", f.leader, len(resp.Topics))
	}
	rp := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
		return 0, false, fmt.Errorf("broker %d answered ListOffsets with %w", f.leader, err)
	}
	if rp.Offset < 0 {
		return 0, false, nil
	}
	return base.Offset(rp.Offset), true, nil
}

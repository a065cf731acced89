package runtime

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
)

// queued is a request (req, done) or an event (event, doneEvent).
type queued struct {
	// arrived is when an op that came during a load was queued (zero for
	// the others): it is held at most Options.LoadHold.
	arrived time.Time

	req    kmsg.Request
	client Client
	done   func(kmsg.Response)

	event     any
	doneEvent func(error)
}

// fail answers q with an error code.
func (q queued) fail(rt *Runtime, code int16) {
	if q.doneEvent != nil {
		q.doneEvent(&CodeError{Code: code})
		return
	}
	q.done(rt.opts.ErrorResponse(q.req, code))
}

// reply answers q with the shard's reply.
func (q queued) reply(r Reply) {
	if q.doneEvent != nil {
		q.doneEvent(r.Err)
		return
	}
	q.done(r.Resp)
}

// partition is one coordinator partition's goroutine and its queue.
//
// Invariants: shard != nil exactly when loading is false (the state is
// loaded and current); every op in outstanding was handed to the current
// shard and has no reply yet; only run's goroutine touches the fields
// below mu.
type partition struct {
	rt      *Runtime
	id      int32
	stop    chan struct{}
	done    chan struct{}
	notify  chan struct{} // capacity 1: "the queue is not empty"
	loading atomic.Bool
	mu      struct {
		sync.Mutex
		queue  []queued
		closed bool
	}

	log         Log
	app         Appender
	shard       Shard
	nextToken   uint64
	outstanding map[uint64]queued
	// wake fires at the last tick's Result.WakeAt (nil: none pending).
	wake <-chan time.Time
}

func newPartition(rt *Runtime, id int32) *partition {
	p := &partition{
		rt: rt, id: id,
		stop:        make(chan struct{}),
		done:        make(chan struct{}),
		notify:      make(chan struct{}, 1),
		outstanding: map[uint64]queued{},
	}
	p.loading.Store(true)
	return p
}

// enqueue queues an op, or returns the code to refuse it with. While the
// partition loads, an op is held (Options.LoadHold) or refused.
func (p *partition) enqueue(q queued) int16 {
	if p.loading.Load() {
		if p.rt.opts.LoadHold == 0 {
			return kerr.CoordinatorLoadInProgress.Code
		}
		q.arrived = p.rt.opts.Clock.Now()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.mu.closed:
		return kerr.NotCoordinator.Code
	case len(p.mu.queue) >= p.rt.opts.MaxQueuedOps:
		return kerr.CoordinatorNotAvailable.Code
	}
	p.mu.queue = append(p.mu.queue, q)
	select {
	case p.notify <- struct{}{}:
	default:
	}
	return 0
}

func (p *partition) stopAndWait() {
	close(p.stop)
	<-p.done
}

func (p *partition) run() {
	defer close(p.done)
	defer p.shutdown()
	ticker := p.rt.opts.NewTicker()
	defer ticker.Stop()
	var err error
	if p.log, p.app, err = p.rt.opts.Open(p.id); err != nil {
		p.rt.log.Error("coordinator partition cannot be opened", "partition", p.id, "err", err)
		return
	}
	p.load()
	for {
		select {
		case <-p.stop:
			return
		case <-p.notify:
			p.mu.Lock()
			batch := p.mu.queue
			p.mu.queue = nil
			p.mu.Unlock()
			for _, q := range batch {
				p.handle(q)
			}
		case <-ticker.C():
			if p.shard == nil {
				p.load() // an earlier load failed: retry
				continue
			}
			p.tick()
		case <-p.wake:
			p.wake = nil
			if p.shard != nil {
				p.tick()
			}
		}
	}
}

// tick fires the shard's due timers and arms the wake-up for the soonest
// one still ahead (Result.WakeAt).
func (p *partition) tick() {
	now := p.rt.opts.Clock.Now()
	res := p.shard.Tick(now)
	p.apply(res)
	p.wake = nil
	if !res.WakeAt.IsZero() {
		// At least a millisecond: a timer the tick saw as ahead is not due
		// again at once, whatever the clock's resolution.
		p.wake = p.rt.opts.After(max(res.WakeAt.Sub(now), time.Millisecond))
	}
}

// load replays the partition into a new shard. On failure the partition
// stays loading (ops get COORDINATOR_LOAD_IN_PROGRESS) and the next tick
// retries.
func (p *partition) load() {
	p.loading.Store(true)
	p.shard = nil
	shard, err := p.rt.opts.NewShard(p.id)
	if err != nil {
		p.rt.log.Error("coordinator shard cannot be created", "partition", p.id, "err", err)
		return
	}
	var from base.Offset
	for {
		select {
		case <-p.stop:
			return
		default:
		}
		recs, next, err := p.log.ReadFrom(from)
		if err != nil {
			p.rt.log.Error("coordinator partition load failed", "partition", p.id, "offset", from, "err", err)
			return
		}
		if next == from {
			break
		}
		for _, r := range recs {
			if err := replay(shard, r); err != nil {
				p.rt.log.Error("coordinator partition has a bad record", "partition", p.id, "err", err)
				return
			}
		}
		from = next
		p.refuseHeldTooLong()
	}
	p.shard = shard
	p.loading.Store(false)
	p.tick()
}

// refuseHeldTooLong answers COORDINATOR_LOAD_IN_PROGRESS to the ops held
// through the load for Options.LoadHold or longer.
func (p *partition) refuseHeldTooLong() {
	now := p.rt.opts.Clock.Now()
	p.mu.Lock()
	var refused []queued
	p.mu.queue = slices.DeleteFunc(p.mu.queue, func(q queued) bool {
		if !q.arrived.IsZero() && now.Sub(q.arrived) >= p.rt.opts.LoadHold {
			refused = append(refused, q)
			return true
		}
		return false
	})
	p.mu.Unlock()
	for _, q := range refused {
		q.fail(p.rt, kerr.CoordinatorLoadInProgress.Code)
	}
}

// replay hands one record read back to the shard.
func replay(shard Shard, r Record) error {
	if r.Txn == nil && r.Marker == nil {
		return shard.Replay(r.Key, r.Value)
	}
	tr, ok := shard.(TxnReplayer)
	if !ok {
		return fmt.Errorf("runtime: a transactional record or marker in a partition whose shard (%T) does not read them", shard)
	}
	if r.Marker != nil {
		return tr.ReplayMarker(*r.Marker)
	}
	return tr.ReplayTxn(*r.Txn, r.Key, r.Value)
}

func (p *partition) handle(q queued) {
	if p.shard == nil {
		q.fail(p.rt, kerr.CoordinatorLoadInProgress.Code)
		return
	}
	p.nextToken++
	tok := p.nextToken
	p.outstanding[tok] = q
	op := Op{Token: tok, Req: q.req, Event: q.event, ClientID: q.client.ID, ClientHost: q.client.Host, TopicVisible: q.client.TopicVisible}
	p.apply(p.shard.Handle(op, p.rt.opts.Clock.Now()))
}

// apply makes res's records durable, then releases its replies. If the
// append fails, the shard's state is ahead of the log: every outstanding op
// fails, the shard is dropped and the next tick reloads the state from the
// log (not at once: an append that keeps failing must not recurse through
// the load's first Tick).
func (p *partition) apply(res Result) {
	if len(res.Records) > 0 || len(res.Markers) > 0 {
		if err := p.append(res); err != nil {
			code := kerr.CoordinatorNotAvailable.Code
			if errors.Is(err, ErrNotLeader) {
				code = kerr.NotCoordinator.Code
			}
			p.rt.log.Warn("coordinator append failed; reloading", "partition", p.id, "err", err)
			p.failOutstanding(code)
			p.shard = nil
			p.loading.Store(true)
			return
		}
	}
	if len(res.Effects) > 0 {
		if p.rt.opts.OnEffects == nil {
			panic("runtime: a shard returned effects and Options.OnEffects is nil")
		}
		p.rt.opts.OnEffects(p.id, res.Effects)
	}
	for _, r := range res.Replies {
		q, ok := p.outstanding[r.Token]
		if !ok {
			panic("runtime: shard replied to an op that is not outstanding")
		}
		delete(p.outstanding, r.Token)
		q.reply(r)
	}
}

// append makes res's records and markers durable: one batch for the
// records (transactional when res.Txn is set), then one per marker. Their
// syncs are waited for last, together.
func (p *partition) append(res Result) error {
	var waits []func() error
	if len(res.Records) > 0 {
		var wait func() error
		var err error
		if res.Txn != nil {
			wait, err = p.txnAppender().AppendTxn(*res.Txn, res.Records)
		} else {
			wait, err = p.app.Append(res.Records)
		}
		if err != nil {
			return err
		}
		waits = append(waits, wait)
	}
	for _, m := range res.Markers {
		wait, err := p.txnAppender().AppendMarker(m)
		if err != nil {
			return err
		}
		waits = append(waits, wait)
	}
	for _, wait := range waits {
		if err := wait(); err != nil {
			return err
		}
	}
	return nil
}

func (p *partition) txnAppender() TxnAppender {
	ta, ok := p.app.(TxnAppender)
	if !ok {
		panic(fmt.Sprintf("runtime: a shard wrote a transactional batch or marker through an Appender (%T) that cannot", p.app))
	}
	return ta
}

func (p *partition) failOutstanding(code int16) {
	for tok, q := range p.outstanding {
		delete(p.outstanding, tok)
		q.fail(p.rt, code)
	}
}

// shutdown answers everything still here with NOT_COORDINATOR and refuses
// later ops.
func (p *partition) shutdown() {
	p.loading.Store(false)
	p.mu.Lock()
	p.mu.closed = true
	rest := p.mu.queue
	p.mu.queue = nil
	p.mu.Unlock()
	p.failOutstanding(kerr.NotCoordinator.Code)
	for _, q := range rest {
		q.fail(p.rt, kerr.NotCoordinator.Code)
	}
	p.shard = nil
}

package group

import (
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// Transactional offset commits (transaction protocol v1, KIP-98/KIP-447),
// as Kafka's OffsetMetadataManager keeps them:
//
//   - TxnOffsetCommit writes ordinary OffsetCommitKey/Value records, in one
//     transactional batch of the producer (Result.Txn). They are pending:
//     kept per group and producer, invisible to OffsetFetch.
//   - When the transaction ends, the broker submits TxnCompleted. Its marker
//     is written (Result.Markers); a commit moves the producer's pending
//     offsets to the committed ones, an abort drops them. A pending offset
//     does not replace a committed one written after it (offsetEntry.order).
//   - An offset tombstone (OffsetDelete, DeleteGroups, expiry) drops every
//     pending offset of its partition too.
//   - Fencing: per producer id, the highest epoch written here (offset
//     batches and markers). A TxnOffsetCommit of a lower epoch is refused
//     with INVALID_PRODUCER_EPOCH, a TxnCompleted of a lower epoch with
//     ErrStaleMarker, as Kafka's log refuses such batches and markers.

// TxnCompleted is the event (runtime.Op.Event) the broker submits to a
// group's __consumer_offsets partition when a transaction that added offsets
// to it ends: a WriteTxnMarkers entry for this partition. Handling it
// appends the marker, as a control batch, then commits or aborts the
// producer's pending offsets. ProducerID and ProducerEpoch must not be
// negative (the broker validates the request they come from).
//
// The reply's Err is nil, or wraps ErrStaleMarker (and, for a fenced
// transaction coordinator, ErrFencedCoordinator); then nothing was written
// and no state changed. A producer without pending offsets here still gets
// its marker written, as Kafka does.
type TxnCompleted struct {
	ProducerID       int64
	ProducerEpoch    int16
	Commit           bool
	CoordinatorEpoch int32
}

var (
	// ErrStaleMarker answers a TxnCompleted whose producer epoch is below
	// the epoch known here for the producer (Kafka's log refuses such a
	// marker with INVALID_PRODUCER_EPOCH).
	ErrStaleMarker = errors.New("group: transaction marker of a stale producer epoch")
	// ErrFencedCoordinator answers a TxnCompleted whose coordinator epoch
	// is below that of the producer's last marker here (Kafka's log refuses
	// it with TRANSACTION_COORDINATOR_FENCED). Such an error matches
	// ErrStaleMarker too: either way the marker is obsolete.
	ErrFencedCoordinator = errors.New("group: transaction marker from a fenced transaction coordinator")
)

// producer is what the coordinator keeps of a transactional producer, as
// the producer state of Kafka's log does for fencing.
//
// Invariants: groups holds exactly the ids of the groups whose txnOffsets
// have an entry for this producer; epoch and coordinatorEpoch never
// decrease; a producer is forgotten only while groups is empty.
type producer struct {
	epoch            int16 // highest epoch of its batches and markers here
	coordinatorEpoch int32 // of its last marker; meaningful when hasMarker
	hasMarker        bool
	groups           map[string]bool
	// lastWrite is when it last wrote here: an entry without pending
	// offsets is forgotten producerIDExpiration after it. Unarmed after
	// Replay until the first Tick, which counts as its last write.
	lastWrite deadline
}

// producerIDExpiration is producer.id.expiration.ms as it is now: each
// check reads it, so a dynamic change applies to every idle producer at
// once, as Kafka's ProducerStateManager compares with the current value.
func (c *Coordinator) producerIDExpiration() time.Duration {
	if c.opts.ProducerIDExpirationNow != nil {
		return c.opts.ProducerIDExpirationNow()
	}
	return c.opts.ProducerIDExpiration
}

func (c *Coordinator) producerFor(id int64) *producer {
	p, ok := c.producers[id]
	if !ok {
		p = &producer{groups: map[string]bool{}}
		c.producers[id] = p
	}
	return p
}

// noteWrite records that producer id wrote a batch or marker of epoch.
func (c *Coordinator) noteWrite(id int64, epoch int16) *producer {
	p := c.producerFor(id)
	p.epoch = max(p.epoch, epoch)
	return p
}

// fenced reports whether epoch is below the producer's known epoch.
func (c *Coordinator) fenced(id int64, epoch int16) bool {
	p, ok := c.producers[id]
	return ok && epoch < p.epoch
}

func (c *Coordinator) txnOffsetCommit(op runtime.Op, req *kmsg.TxnOffsetCommitRequest, now time.Time, res *runtime.Result) {
	if code := producerCode(req); code != 0 {
		reply(res, op.Token, txnCommitError(req, code))
		return
	}
	g, verdict := c.validateTxnCommit(req, now)
	if verdict.code != 0 {
		reply(res, op.Token, txnCommitError(req, verdict.code))
		if g != nil {
			c.dropIfGarbage(g)
		}
		return
	}
	defer c.dropIfGarbage(g)
	type accepted struct {
		tp base.TopicPartition
		e  offsetEntry
	}
	var accept []accepted
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	for _, t := range req.Topics {
		rt := kmsg.TxnOffsetCommitResponseTopic{Topic: t.Topic, TopicID: t.TopicID}
		for _, p := range t.Partitions {
			rp := kmsg.TxnOffsetCommitResponseTopicPartition{Partition: p.Partition}
			rp.ErrorCode = verdict.partition(c.opts.Topics, t.Topic, p.Partition)
			if rp.ErrorCode == 0 && p.Metadata != nil && len(*p.Metadata) > c.opts.OffsetMetadataMaxBytes {
				rp.ErrorCode = kerr.OffsetMetadataTooLarge.Code
			}
			if rp.ErrorCode == 0 {
				e := offsetEntry{offset: base.Offset(p.Offset), committed: time.UnixMilli(now.UnixMilli())}
				if p.Metadata != nil {
					e.metadata = *p.Metadata
				}
				if req.Version >= 2 && p.LeaderEpoch >= 0 {
					e.leaderEpoch, e.hasEpoch = base.Epoch(p.LeaderEpoch), true
				}
				accept = append(accept, accepted{base.TopicPartition{Topic: t.Topic, Partition: p.Partition}, e})
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if len(accept) == 0 {
		reply(res, op.Token, resp)
		return
	}
	if c.fenced(req.ProducerID, req.ProducerEpoch) {
		// Kafka's log refuses the whole batch; every partition gets the
		// error (TxnOffsetCommit never answers PRODUCER_FENCED).
		reply(res, op.Token, txnCommitError(req, kerr.InvalidProducerEpoch.Code))
		return
	}
	p := c.noteWrite(req.ProducerID, req.ProducerEpoch)
	p.lastWrite = armAt(now)
	for _, a := range accept {
		a.e.order = c.nextOffsetOrder()
		c.putTxnOffset(g, req.ProducerID, a.tp, a.e)
		res.Records = append(res.Records, runtime.Record{Key: offsetKey(g.id, a.tp), Value: offsetValue(a.e)})
	}
	res.Txn = &runtime.Producer{ID: req.ProducerID, Epoch: req.ProducerEpoch}
	reply(res, op.Token, resp)
}

// producerCode refuses a request that names no producer: Kafka's log would
// take its batch as non-transactional.
func producerCode(req *kmsg.TxnOffsetCommitRequest) int16 {
	switch {
	case req.ProducerID < 0:
		return kerr.InvalidProducerIDMapping.Code
	case req.ProducerEpoch < 0:
		return kerr.InvalidProducerEpoch.Code
	}
	return 0
}

// validateTxnCommit is Kafka's validateTransactionalOffsetCommit with the
// classic group's validateOffsetCommit(isTransactional=true). Unlike
// OffsetCommit: an unknown group with a generation is ILLEGAL_GENERATION in
// every version; a commit without member id and generation is accepted
// whatever the group's state (transactional producers of v0-v2 send none);
// and CompletingRebalance is no obstacle. It returns the group to commit
// into (created for a simple commit), or the error code for every
// partition.
func (c *Coordinator) validateTxnCommit(req *kmsg.TxnOffsetCommitRequest, now time.Time) (*group, commitVerdict) {
	if req.Group == "" {
		return nil, refuse(kerr.InvalidGroupID.Code)
	}
	generation, memberID, instanceID := req.Generation, req.MemberID, req.InstanceID
	if req.Version < 3 {
		generation, memberID, instanceID = -1, "", nil // not on the wire
	}
	g, ok := c.groups[req.Group]
	if !ok {
		if generation >= 0 {
			return nil, refuse(kerr.IllegalGeneration.Code)
		}
		g = newGroup(req.Group, now)
		c.groups[req.Group] = g
	}
	if g.consumer != nil {
		return g, g.consumer.commitCheck(memberID, instanceID, generation, true, req.Version)
	}
	if generation < 0 && g.state == stateEmpty {
		return g, commitVerdict{}
	}
	if generation >= 0 || memberID != "" || instanceID != nil {
		if _, code := validMember(g, memberID, instanceID); code != 0 {
			return g, refuse(code)
		}
		if generation != g.generation {
			return g, refuse(kerr.IllegalGeneration.Code)
		}
	}
	return g, commitVerdict{}
}

// handleEvent applies an event of the broker's. Other event types than
// TxnCompleted are a programmer error.
func (c *Coordinator) handleEvent(op runtime.Op, now time.Time, res *runtime.Result) {
	switch ev := op.Event.(type) {
	case TxnCompleted:
		c.txnCompleted(op, ev, now, res)
	case *TxnCompleted:
		c.txnCompleted(op, *ev, now, res)
	default:
		panic(fmt.Sprintf("group: Handle of unserved event %T", op.Event))
	}
}

func (c *Coordinator) txnCompleted(op runtime.Op, ev TxnCompleted, now time.Time, res *runtime.Result) {
	if ev.ProducerID < 0 || ev.ProducerEpoch < 0 {
		panic(fmt.Sprintf("group: TxnCompleted of producer %d epoch %d", ev.ProducerID, ev.ProducerEpoch))
	}
	if p, ok := c.producers[ev.ProducerID]; ok {
		var err error
		switch {
		case ev.ProducerEpoch < p.epoch:
			err = fmt.Errorf("%w: producer %d epoch %d, known epoch %d", ErrStaleMarker, ev.ProducerID, ev.ProducerEpoch, p.epoch)
		case p.hasMarker && ev.CoordinatorEpoch < p.coordinatorEpoch:
			err = fmt.Errorf("%w (%w): producer %d coordinator epoch %d, last marker's %d", ErrFencedCoordinator, ErrStaleMarker, ev.ProducerID, ev.CoordinatorEpoch, p.coordinatorEpoch)
		}
		if err != nil {
			res.Replies = append(res.Replies, runtime.Reply{Token: op.Token, Err: err})
			return
		}
	}
	m := runtime.Marker{
		Producer:         runtime.Producer{ID: ev.ProducerID, Epoch: ev.ProducerEpoch},
		Commit:           ev.Commit,
		CoordinatorEpoch: ev.CoordinatorEpoch,
	}
	c.completeTxn(m).lastWrite = armAt(now)
	res.Markers = append(res.Markers, m)
	res.Replies = append(res.Replies, runtime.Reply{Token: op.Token})
}

// completeTxn applies a marker (written or replayed): the producer's
// pending offsets become committed, unless a committed offset of the same
// partition was written after them (Kafka keeps the most recent record), or
// are dropped. It returns the producer.
func (c *Coordinator) completeTxn(m runtime.Marker) *producer {
	p := c.noteWrite(m.Producer.ID, m.Producer.Epoch)
	if !p.hasMarker || m.CoordinatorEpoch > p.coordinatorEpoch {
		p.coordinatorEpoch = m.CoordinatorEpoch
	}
	p.hasMarker = true
	for id := range p.groups {
		g := c.groups[id]
		pending := g.txnOffsets[m.Producer.ID]
		delete(g.txnOffsets, m.Producer.ID)
		if m.Commit {
			for tp, e := range pending {
				if cur, ok := g.offsets[tp]; !ok || e.order > cur.order {
					g.offsets[tp] = e
				}
			}
		}
		c.dropIfGarbage(g)
	}
	clear(p.groups)
	return p
}

// putTxnOffset stores e as producer id's pending offset of tp in g.
func (c *Coordinator) putTxnOffset(g *group, id int64, tp base.TopicPartition, e offsetEntry) {
	pending, ok := g.txnOffsets[id]
	if !ok {
		pending = map[base.TopicPartition]offsetEntry{}
		g.txnOffsets[id] = pending
	}
	pending[tp] = e
	c.noteOffsetTopic(tp.Topic)
	c.producerFor(id).groups[g.id] = true
}

// dropTxnOffsetsAt drops every producer's pending offset of tp in g: what
// an offset tombstone does.
func (c *Coordinator) dropTxnOffsetsAt(g *group, tp base.TopicPartition) {
	for id, pending := range g.txnOffsets {
		delete(pending, tp)
		if len(pending) == 0 {
			delete(g.txnOffsets, id)
			delete(c.producers[id].groups, g.id)
		}
	}
}

// expireProducers forgets producers that hold no pending offsets and wrote
// nothing here for producerIDExpiration (Kafka's
// producer.id.expiration.ms). Entries loaded by Replay start their period
// at the first Tick.
func (c *Coordinator) expireProducers(now time.Time) {
	for id, p := range c.producers {
		switch {
		case len(p.groups) > 0:
		case !p.lastWrite.armed:
			p.lastWrite = armAt(now)
		case c.timers.due(armAt(p.lastWrite.at.Add(c.producerIDExpiration()))):
			delete(c.producers, id)
		}
	}
}

// hasTxnOffset reports whether some producer has a pending offset of tp.
func (g *group) hasTxnOffset(tp base.TopicPartition) bool {
	for _, pending := range g.txnOffsets {
		if _, ok := pending[tp]; ok {
			return true
		}
	}
	return false
}

// offsetPartitions lists, sorted, the partitions with a committed or a
// pending offset.
func (g *group) offsetPartitions() []base.TopicPartition {
	all := make(map[base.TopicPartition]offsetEntry, len(g.offsets))
	maps.Copy(all, g.offsets)
	for _, pending := range g.txnOffsets {
		maps.Copy(all, pending)
	}
	return sortedPartitions(all)
}

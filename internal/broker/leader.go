package broker

import (
	"errors"
	"slices"
	"sync"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/replication"
)

// ErrNotReplica refuses a follower fetch from a broker that is not one of
// the partition's other replicas (Kafka's NOT_LEADER_OR_FOLLOWER: "not a
// known follower"), including any fetch of a partition led here without
// followers.
var ErrNotReplica = errors.New("broker: the fetching broker is not a follower of the partition")

// ErrStaleBrokerEpoch refuses a follower fetch from an earlier incarnation
// of its broker (replication.StaleBrokerEpoch against the registration in
// the image). Kafka answers it NOT_LEADER_OR_FOLLOWER.
var ErrStaleBrokerEpoch = errors.New("broker: follower fetch from a stale broker epoch")

// ErrNotEnoughReplicasAfterAppend answers an acks=all produce whose batch
// the high watermark passed while the ISR (with any expansion in flight)
// was smaller than min.insync.replicas (Kafka's
// NOT_ENOUGH_REPLICAS_AFTER_APPEND): the batch is written, but not as
// durably as asked.
var ErrNotEnoughReplicasAfterAppend = errors.New("broker: the ISR shrank below min.insync.replicas after the append")

// noBrokerEpoch is what a follower's state records for a fetch that
// carried no broker epoch (Fetch < v15). Registrations have Raft indexes
// (>= 1) as epochs, so it never equals one: such a follower is never
// eligible for the ISR (replication.IsrEligible).
const noBrokerEpoch int64 = -1

// leaderState is the leader side of replication for one partition this
// node leads and that has other replicas: Kafka's Partition in its leader
// role. It keeps what each follower's fetches say (replication.Follower),
// the ISR as the image has it and the one ISR change in flight; from them
// it moves the partition's high watermark and proposes ISR changes. The
// decisions are replication's pure functions; this type applies them.
//
// Invariants: followers holds one entry per replica but this node, in
// replica order; isr is the image's, a subset of replicas holding this
// node; pending, when set, was planned against leaderEpoch and
// partitionEpoch. Once retired (the broker no longer leads with it) it
// changes nothing and proposes nothing. Lock order: the broker's lock,
// then mu, then the partition's.
type leaderState struct {
	tp       base.TopicPartition
	topicID  base.TopicID
	p        *partition.Partition
	nodeID   int32
	lagMaxMs int64

	mu struct {
		sync.Mutex
		retired        bool
		leaderEpoch    base.Epoch
		partitionEpoch int32
		// epochStart is where this node's leader epoch began: the log
		// end when it became leader in it. A follower joins the ISR only
		// once it has everything below it (replication.CanJoinISR).
		epochStart base.Offset
		replicas   []int32
		isr        []int32
		followers  []replication.Follower
		// pending is the ISR change proposed and not yet seen in an
		// image, nil when none is in flight.
		pending *isrChange
		// blockedThrough holds back new proposals until the image is
		// newer than this version: the controller refused one planned
		// against it, so this node's view is behind.
		blockedThrough uint64
		// told is the in-sync count the partition was last given
		// (SetInSyncReplicas), 0 before the first.
		told int
	}
}

// isrChange is one ISR change proposed to the controller.
type isrChange struct {
	isr            []int32 // the proposed ISR, in replica order
	leaderEpoch    base.Epoch
	partitionEpoch int32
	planned        uint64 // the image version it was planned against
}

// brokerLookup is what the image says about a broker (replication.Broker).
type brokerLookup func(id int32) replication.Broker

// brokersOf looks brokers up in img.
func brokersOf(img *metadata.Image) brokerLookup {
	return func(id int32) replication.Broker {
		b, ok := img.Brokers[id]
		if !ok {
			return replication.Broker{}
		}
		return replication.Broker{Registered: true, Epoch: b.Epoch, Fenced: b.Fenced}
	}
}

// newLeaderState is the leader state of p, which this node has just
// begun to lead as pa says: nothing is known of the followers, which
// count as caught up now if they are in the ISR (Kafka's
// resetReplicaState for a new leader).
func newLeaderState(p *partition.Partition, topicID base.TopicID, nodeID int32, lagMaxMs int64, pa metadata.Partition, nowMs int64) *leaderState {
	ls := &leaderState{tp: p.TP(), topicID: topicID, p: p, nodeID: nodeID, lagMaxMs: lagMaxMs}
	ls.mu.leaderEpoch = pa.LeaderEpoch
	ls.mu.partitionEpoch = pa.PartitionEpoch
	ls.mu.epochStart = epochStartOf(p, pa.LeaderEpoch)
	ls.mu.replicas = slices.Clone(pa.Replicas)
	ls.mu.isr = slices.Clone(pa.ISR)
	for _, r := range pa.Replicas {
		if r != nodeID {
			f := replication.Follower{ID: r}
			ls.mu.followers = append(ls.mu.followers, f.ResetForNewLeader(nowMs, slices.Contains(pa.ISR, r)))
		}
	}
	return ls
}

// epochStartOf is where leader epoch began in p's lineage; the log end if
// the lineage does not have it (a later start only delays ISR joins).
func epochStartOf(p *partition.Partition, epoch base.Epoch) base.Offset {
	for _, e := range p.Lineage() {
		if e.Epoch == epoch {
			return e.Start
		}
	}
	return p.Offsets().LogEnd
}

// applyImage takes the partition's state from a new image that still has
// this node leading it: a new leader epoch resets the followers (Kafka's
// resetReplicaState for a re-elected leader), a new partition epoch
// brings the ISR and ends the change in flight, new replicas get a
// follower state. The caller then tells the partition its in-sync count
// (tellInSync).
func (ls *leaderState) applyImage(pa metadata.Partition, nowMs int64) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if pa.LeaderEpoch != ls.mu.leaderEpoch {
		ls.mu.epochStart = epochStartOf(ls.p, pa.LeaderEpoch)
		for i, f := range ls.mu.followers {
			ls.mu.followers[i] = f.ResetForNewEpoch(nowMs, ls.mu.epochStart, slices.Contains(pa.ISR, f.ID))
		}
		ls.mu.leaderEpoch = pa.LeaderEpoch
	}
	if c := ls.mu.pending; c != nil && (c.leaderEpoch != pa.LeaderEpoch || c.partitionEpoch != pa.PartitionEpoch) {
		ls.mu.pending = nil // the image has the outcome
	}
	if !slices.Equal(ls.mu.replicas, pa.Replicas) {
		followers := make([]replication.Follower, 0, len(pa.Replicas))
		for _, r := range pa.Replicas {
			if r == ls.nodeID {
				continue
			}
			f, ok := ls.followerLocked(r)
			if !ok {
				f = replication.Follower{ID: r}
			}
			followers = append(followers, f)
		}
		ls.mu.followers = followers
		ls.mu.replicas = slices.Clone(pa.Replicas)
	}
	ls.mu.partitionEpoch = pa.PartitionEpoch
	ls.mu.isr = slices.Clone(pa.ISR)
}

// retire stops ls for good: this node no longer leads the partition with
// it. A proposal in flight is dropped; its outcome reaches nobody.
func (ls *leaderState) retire() {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.mu.retired = true
	ls.mu.pending = nil
}

// followerLocked is the state of follower id.
func (ls *leaderState) followerLocked(id int32) (replication.Follower, bool) {
	for _, f := range ls.mu.followers {
		if f.ID == id {
			return f, true
		}
	}
	return replication.Follower{}, false
}

// maximalISRLocked is the ISR the high watermark waits for: the image's
// plus a member being added (Kafka's maximalIsr). A shrink in flight
// removes no one until the image has it.
func (ls *leaderState) maximalISRLocked() []int32 {
	if ls.mu.pending == nil {
		return ls.mu.isr
	}
	return replication.InReplicaOrder(append(slices.Clone(ls.mu.isr), ls.mu.pending.isr...), ls.mu.replicas)
}

// tellInSyncLocked gives the partition its in-sync count when it changed:
// the maximal ISR's size. That is the image's ISR but while an expansion
// is in flight, when it counts the member being added, as the high
// watermark does: a leader alone in its ISR would otherwise commit its
// appends by itself (partition.SetInSyncReplicas(1)) past a follower that
// is about to join the ISR without them. Kafka's NOT_ENOUGH_REPLICAS
// gate counts the committed ISR; this one admits an acks=all append one
// member earlier, which the high watermark then holds until that member
// has it.
func (ls *leaderState) tellInSyncLocked() error {
	n := len(ls.maximalISRLocked())
	if n == ls.mu.told || ls.mu.retired {
		return nil
	}
	if err := ls.p.SetInSyncReplicas(n); err != nil {
		return err
	}
	ls.mu.told = n
	return nil
}

// tellInSync is tellInSyncLocked under the lock.
func (ls *leaderState) tellInSync() error {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.tellInSyncLocked()
}

// fetched records follower f's fetch, which the checks found to read from
// its offset, and returns the ISR change to propose, if any: the
// follower's state moves (OnFetch), an eligible follower that caught up
// joins the ISR (as Kafka's maybeExpandIsr, judged by the high watermark
// before this fetch moves it), and the high watermark moves.
func (ls *leaderState) fetchedLocked(i int, f ReplicaFetch, off partition.Offsets, brokers brokerLookup, imgVersion uint64, nowMs int64) *isrChange {
	epoch := noBrokerEpoch
	if f.HasBrokerEpoch {
		epoch = f.BrokerEpoch
	}
	ls.mu.followers[i] = ls.mu.followers[i].OnFetch(f.FetchOffset, f.LogStart, off.LogEnd, epoch, nowMs)
	c := ls.maybeExpandLocked(ls.mu.followers[i], off.HighWatermark, brokers, imgVersion)
	ls.advanceLocked(off, brokers, nowMs)
	return c
}

// maybeExpandLocked proposes that follower f join the ISR if it may
// (replication.CanJoinISR) and no change is in flight.
func (ls *leaderState) maybeExpandLocked(f replication.Follower, hw base.Offset, brokers brokerLookup, imgVersion uint64) *isrChange {
	if !ls.mayProposeLocked(imgVersion) || slices.Contains(ls.mu.isr, f.ID) {
		return nil
	}
	if !replication.CanJoinISR(f, hw, ls.mu.epochStart, replication.IsrEligible(f, brokers(f.ID))) {
		return nil
	}
	c := ls.proposeLocked(replication.ExpandISR(ls.mu.replicas, ls.mu.isr, f.ID), imgVersion)
	// Best effort: a partition that stopped leading refuses, and this
	// state is retired next.
	_ = ls.tellInSyncLocked()
	return c
}

// maybeShrinkLocked proposes that the ISR members out of sync
// (replication.OutOfSync) leave it, if no change is in flight (Kafka's
// maybeShrinkIsr).
func (ls *leaderState) maybeShrinkLocked(leaderEnd base.Offset, imgVersion uint64, nowMs int64) (*isrChange, []int32) {
	if !ls.mayProposeLocked(imgVersion) {
		return nil, nil
	}
	out := replication.OutOfSync(ls.mu.isr, ls.nodeID, ls.mu.followers, leaderEnd, nowMs, ls.lagMaxMs)
	if len(out) == 0 {
		return nil, nil
	}
	return ls.proposeLocked(replication.ShrinkISR(ls.mu.replicas, ls.mu.isr, ls.nodeID, out), imgVersion), out
}

func (ls *leaderState) mayProposeLocked(imgVersion uint64) bool {
	return !ls.mu.retired && ls.mu.pending == nil && imgVersion > ls.mu.blockedThrough
}

func (ls *leaderState) proposeLocked(isr []int32, imgVersion uint64) *isrChange {
	c := &isrChange{isr: isr, leaderEpoch: ls.mu.leaderEpoch, partitionEpoch: ls.mu.partitionEpoch, planned: imgVersion}
	ls.mu.pending = c
	return c
}

// advanceLocked moves the partition's high watermark as
// replication.HighWatermark decides from off, a snapshot of its offsets.
func (ls *leaderState) advanceLocked(off partition.Offsets, brokers brokerLookup, nowMs int64) {
	if ls.mu.retired {
		return
	}
	in := replication.HighWatermarkInput{
		Current:           off.HighWatermark,
		LeaderID:          ls.nodeID,
		LeaderEnd:         off.LogEnd,
		ISR:               ls.mu.isr,
		MaximalISR:        ls.maximalISRLocked(),
		Followers:         ls.mu.followers,
		MinInsyncReplicas: ls.p.Config().MinInsyncReplicas,
		Eligible: func(id int32) bool {
			f, _ := ls.followerLocked(id)
			return replication.IsrEligible(f, brokers(id))
		},
		NowMs:    nowMs,
		LagMaxMs: ls.lagMaxMs,
	}
	if hw := replication.HighWatermark(in); hw > off.HighWatermark {
		ls.p.AdvanceHighWatermark(hw)
	}
}

// advance is advanceLocked with a fresh snapshot of the offsets.
func (ls *leaderState) advance(brokers brokerLookup, nowMs int64) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.p.IsLeader() {
		ls.advanceLocked(ls.p.Offsets(), brokers, nowMs)
	}
}

// answered settles change c with the controller's answer, if c is still
// the one in flight. A change that changed nothing (the ISR was already
// that) ends now; an applied one ends when the image has it
// (applyImage); a refused one ends now and holds back proposals until
// the image is newer than the one it was planned against.
func (ls *leaderState) answered(c *isrChange, applied metadata.Partition, err error) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.mu.pending != c {
		return
	}
	switch {
	case err != nil:
		ls.mu.pending = nil
		ls.mu.blockedThrough = max(ls.mu.blockedThrough, c.planned)
	case applied.PartitionEpoch == c.partitionEpoch:
		ls.mu.pending = nil
	}
	_ = ls.tellInSyncLocked() // best effort, as in maybeExpandLocked
}

// current reports whether c is still the change in flight.
func (ls *leaderState) current(c *isrChange) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.mu.pending == c
}

// sizes is the maximal ISR's size and the number of replicas.
func (ls *leaderState) sizes() (maximalISR, replicas int) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return len(ls.maximalISRLocked()), len(ls.mu.replicas)
}

// epochStart is where this node's leader epoch began.
func (ls *leaderState) epochStart() base.Offset {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.mu.epochStart
}

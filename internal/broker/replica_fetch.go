package broker

import (
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/replication"
)

// ReplicaFetch is one partition of a follower's Fetch, with the wire's
// sentinels (-1: not given) turned into flags by the api layer.
type ReplicaFetch struct {
	TP        base.TopicPartition
	ReplicaID int32
	// BrokerEpoch is the follower's broker epoch (Fetch v15+
	// ReplicaState.Epoch), when HasBrokerEpoch.
	BrokerEpoch    int64
	HasBrokerEpoch bool
	// FetchOffset is the follower's log end: the first offset it asks for.
	FetchOffset base.Offset
	// LastFetchedEpoch is the epoch of the follower's last batch (Fetch
	// v12+), when HasLastFetchedEpoch.
	LastFetchedEpoch    base.Epoch
	HasLastFetchedEpoch bool
	// LogStart is the follower's log start.
	LogStart base.Offset
}

// ReplicaFetchResult is the leader's verdict on a follower fetch:
// replication.FetchFromOffset (serve records from FetchOffset, up to the
// log end), FetchDiverging (answer Diverging, Fetch's DivergingEpoch, and
// no records) or FetchOutOfRange (OFFSET_OUT_OF_RANGE).
type ReplicaFetchResult struct {
	Verdict   replication.FetchVerdict
	Diverging replication.EpochEnd
}

// DivergingEpoch is the answer to a diverging follower: the leader's
// epoch and that epoch's end offset, for Fetch's DivergingEpoch.
func (r ReplicaFetchResult) DivergingEpoch() (base.Epoch, base.Offset, bool) {
	return r.Diverging.Epoch, r.Diverging.End, r.Verdict == replication.FetchDiverging
}

// OutOfRange reports whether the fetch is answered OFFSET_OUT_OF_RANGE.
func (r ReplicaFetchResult) OutOfRange() bool { return r.Verdict == replication.FetchOutOfRange }

// ReplicaFetch checks a follower's fetch of a partition led here and, when
// it reads from its offset, records it, as Kafka's Partition.fetchRecords
// and updateFollowerFetchState do: the follower's state moves, the high
// watermark may move, and a follower that caught up is proposed to join
// the ISR. It is refused with partition.ErrNotLeader when this node does
// not lead the partition (or is between roles), ErrNotReplica when the
// fetching broker is not one of its other replicas, and
// ErrStaleBrokerEpoch when the fetch comes from an earlier incarnation of
// that broker. A diverging or out-of-range fetch is an answer, not an
// error, and is not recorded.
func (b *Broker) ReplicaFetch(f ReplicaFetch) (ReplicaFetchResult, error) {
	return b.replicaFetch(f, true)
}

// CheckReplicaFetch is ReplicaFetch without recording anything: the
// checks again, for a parked fetch that reads once more before it is
// answered (Kafka's DelayedFetch reads without updating the follower).
func (b *Broker) CheckReplicaFetch(f ReplicaFetch) (ReplicaFetchResult, error) {
	return b.replicaFetch(f, false)
}

func (b *Broker) replicaFetch(f ReplicaFetch, record bool) (ReplicaFetchResult, error) {
	ls, err := b.leaderStateOf(f.TP)
	if err != nil {
		return ReplicaFetchResult{}, err
	}
	img := b.opts.Meta.Image()
	brokers := brokersOf(img)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	i := followerIndex(ls.mu.followers, f.ReplicaID)
	switch {
	case ls.mu.retired:
		return ReplicaFetchResult{}, partition.ErrNotLeader
	case i < 0:
		return ReplicaFetchResult{}, ErrNotReplica
	case f.HasBrokerEpoch && replication.StaleBrokerEpoch(f.BrokerEpoch, brokers(f.ReplicaID)):
		return ReplicaFetchResult{}, ErrStaleBrokerEpoch
	}
	// The lineage first: a leader's log only grows, so every start in it
	// is within the log end read after it.
	lineage := ls.p.Lineage()
	off := ls.p.Offsets()
	if !ls.p.IsLeader() || off.LeaderEpoch != ls.mu.leaderEpoch {
		return ReplicaFetchResult{}, partition.ErrNotLeader
	}
	res := checkReplicaFetch(lineage, off, f)
	if res.Verdict != replication.FetchFromOffset || !record {
		return res, nil
	}
	if c := ls.fetchedLocked(i, f, off, brokers, img.Version, b.nowMs()); c != nil {
		b.submitISRChange(ls, c)
	}
	return res, nil
}

// checkReplicaFetch is the leader's verdict on f against its lineage and
// offsets: replication.CheckFetch for a fetch that names its last fetched
// epoch; for one that does not, only the range [log start, log end] is
// checked, as the log's read does in Kafka.
func checkReplicaFetch(lineage []base.EpochStart, off partition.Offsets, f ReplicaFetch) ReplicaFetchResult {
	if f.HasLastFetchedEpoch {
		c := replication.CheckFetch(lineage, off.LogStart, off.LogEnd, f.LastFetchedEpoch, f.FetchOffset)
		return ReplicaFetchResult{Verdict: c.Verdict, Diverging: c.Diverging}
	}
	if f.FetchOffset < off.LogStart || f.FetchOffset > off.LogEnd {
		return ReplicaFetchResult{Verdict: replication.FetchOutOfRange}
	}
	return ReplicaFetchResult{Verdict: replication.FetchFromOffset}
}

// followerIndex is the position of follower id in followers, -1 if absent.
func followerIndex(followers []replication.Follower, id int32) int {
	for i, f := range followers {
		if f.ID == id {
			return i
		}
	}
	return -1
}

// leaderStateOf is the leader state of tp: partition.ErrNotLeader when
// this node does not lead it, ErrNotReplica when it leads it alone.
func (b *Broker) leaderStateOf(tp base.TopicPartition) (*leaderState, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	h, ok := b.mu.parts[tp]
	switch {
	case !ok || h.role != roleLeader:
		return nil, partition.ErrNotLeader
	case h.leader == nil:
		return nil, ErrNotReplica
	}
	return h.leader, nil
}

// AcksAllDone is Kafka's Partition.checkEnoughReplicasReachOffset for an
// acks=all batch appended to p that ends (exclusive) at end: done once the
// high watermark has reached end, with ErrNotEnoughReplicasAfterAppend if
// the ISR, with any expansion in flight, is then smaller than the
// effective min.insync.replicas (at most the number of replicas). A
// partition this node no longer leads (or that was replaced) is done with
// partition.ErrNotLeader: the batch may be truncated by the new leader.
func (b *Broker) AcksAllDone(p *partition.Partition, end base.Offset) (bool, error) {
	b.mu.Lock()
	h, ok := b.mu.parts[p.TP()]
	led := ok && h.p == p && h.role == roleLeader
	var ls *leaderState
	if led {
		ls = h.leader
	}
	b.mu.Unlock()
	if !led || !p.IsLeader() {
		return true, partition.ErrNotLeader
	}
	if p.Offsets().HighWatermark < end {
		return false, nil
	}
	if ls == nil {
		return true, nil // the only replica
	}
	maximal, replicas := ls.sizes()
	if maximal < min(p.Config().MinInsyncReplicas, replicas) {
		return true, ErrNotEnoughReplicasAfterAppend
	}
	return true, nil
}

// LeaderEpochStart is where p's current leader epoch began, for a
// partition led here with followers: a client's ListOffsets is answered
// OFFSET_NOT_AVAILABLE while the high watermark is below it (a new leader
// whose high watermark has not caught up). ok is false for any other
// partition, whose high watermark never lags so.
func (b *Broker) LeaderEpochStart(p *partition.Partition) (base.Offset, bool) {
	ls, err := b.leaderStateOf(p.TP())
	if err != nil || ls.p != p {
		return 0, false
	}
	return ls.epochStart(), true
}

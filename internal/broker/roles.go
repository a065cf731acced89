package broker

import (
	"fmt"
	"slices"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
)

// replicaRole is what the image asks of this node for a partition it
// hosts. The zero value is a partition just opened, not given a role yet.
type replicaRole int8

const (
	roleLeader replicaRole = iota + 1
	roleFollower
)

// removalReason is why a hosted partition's local data goes.
type removalReason int8

const (
	// removeTopicGone: the image holds no topic with its topic id (the
	// topic was deleted, perhaps recreated under the same name).
	removeTopicGone removalReason = iota + 1
	// removeNotReplica: its topic is there, but this node is no longer one
	// of the partition's replicas.
	removeNotReplica
)

func (r removalReason) String() string {
	switch r {
	case removeTopicGone:
		return "its topic is gone"
	case removeNotReplica:
		return "this node is no longer one of its replicas"
	}
	return fmt.Sprintf("removalReason(%d)", int8(r))
}

// hostingPlan is what brings the partitions hosted here in line with an
// image: the hosted ones whose data goes (first), and every partition
// with a replica here, to open or update.
type hostingPlan struct {
	remove map[base.TopicPartition]removalReason
	host   []assignment
}

// assignment is a partition of the image with a replica on this node.
type assignment struct {
	tp    base.TopicPartition
	topic *metadata.Topic
	part  metadata.Partition
}

// planHosting decides, purely, which partitions this node hosts under
// img, given those it hosts now (by topic id): every partition whose
// replicas include node, whoever leads it and whether anyone does. A
// hosted partition's data goes only when the image no longer holds its
// topic id, or holds it without node among the partition's replicas. A
// change of leader, leader epoch or ISR never removes anything: a
// follower keeps its log.
func planHosting(img *metadata.Image, hosted map[base.TopicPartition]base.TopicID, node int32) hostingPlan {
	plan := hostingPlan{remove: map[base.TopicPartition]removalReason{}}
	for tp, id := range hosted {
		t, ok := img.TopicsByID[id]
		switch {
		case !ok || t.Name != tp.Topic || int(tp.Partition) >= len(t.Partitions):
			plan.remove[tp] = removeTopicGone
		case !slices.Contains(t.Partitions[tp.Partition].Replicas, node):
			plan.remove[tp] = removeNotReplica
		}
	}
	for _, t := range img.Topics {
		for _, pa := range t.Partitions {
			if slices.Contains(pa.Replicas, node) {
				plan.host = append(plan.host, assignment{tp: base.TopicPartition{Topic: t.Name, Partition: pa.Index}, topic: t, part: pa})
			}
		}
	}
	return plan
}

// applyRoleLocked makes h what pa asks of this node: its leader, or a
// follower of pa.Leader (of nobody while it has NoLeader).
func (b *Broker) applyRoleLocked(h *hosted, pa metadata.Partition) error {
	var err error
	if pa.Leader == b.opts.NodeID {
		err = b.leadLocked(h, pa)
	} else {
		err = b.followLocked(h, pa)
	}
	b.syncTierLoopLocked(h)
	return err
}

// roleMove is a partition's side of a role change, which writes its
// leader-epoch checkpoint and so runs outside the broker's lock
// (hostAndApplyRoles).
type roleMove struct {
	h    *hosted
	pa   metadata.Partition
	lead bool
	err  error // take's
}

// prepareRoleLocked stops what must stop before h's partition takes the
// role pa asks of this node, as leadLocked and followLocked begin: a
// future leader's fetching, so nothing appends as a follower to a leader;
// a future follower's leadership (its tier loop, leader state, OnClose).
// A partition keeping its role stops nothing.
func (b *Broker) prepareRoleLocked(h *hosted, pa metadata.Partition) roleMove {
	m := roleMove{h: h, pa: pa, lead: pa.Leader == b.opts.NodeID}
	switch {
	case m.lead && h.role != roleLeader:
		b.unfollowLocked(h)
	case !m.lead && h.role != roleFollower:
		b.resignLocked(h)
		h.role = roleFollower
	}
	return m
}

// take makes the partition leader or follower in pa's epoch; it changes
// nothing when it already is.
func (m *roleMove) take() {
	if m.lead {
		m.err = m.h.p.BecomeLeader(m.pa.LeaderEpoch)
	} else {
		m.err = m.h.p.BecomeFollower(m.pa.LeaderEpoch)
	}
}

// leadLocked makes h the leader in pa's epoch. Its fetching stops first,
// so nothing appends as a follower to a leader; then the partition takes
// the epoch (BecomeLeader), with followers gets leader state, and learns
// its ISR's size (SetInSyncReplicas, on becoming leader and at every ISR
// change; see tellInSyncLocked for an expansion in flight); last, OnOpen
// hears of a new leader.
func (b *Broker) leadLocked(h *hosted, pa metadata.Partition) error {
	b.unfollowLocked(h)
	if err := h.p.BecomeLeader(pa.LeaderEpoch); err != nil {
		return err
	}
	now := b.nowMs()
	newLeader := h.role != roleLeader
	switch {
	case len(pa.Replicas) <= 1:
		if h.leader != nil {
			h.leader.retire()
			h.leader = nil
		}
		if newLeader || !slices.Equal(h.isr, pa.ISR) {
			if err := h.p.SetInSyncReplicas(len(pa.ISR)); err != nil {
				return err
			}
		}
	case h.leader == nil:
		h.leader = newLeaderState(h.p, h.topicID, b.opts.NodeID, b.opts.ReplicaLagTimeMax.Milliseconds(), pa, now)
	default:
		h.leader.applyImage(pa, now)
	}
	h.isr = slices.Clone(pa.ISR)
	if h.leader != nil {
		if err := h.leader.tellInSync(); err != nil {
			return err
		}
		h.leader.advance(brokersOf(b.opts.Meta.Image()), now)
	}
	if newLeader {
		h.role = roleLeader
		if b.opts.OnOpen != nil {
			b.opts.OnOpen(h.p)
		}
	}
	return nil
}

// followLocked makes h a follower in pa's epoch: a leader first resigns
// (OnClose, its leader state retired), then the partition follows
// (BecomeFollower) and Followers is told whom to fetch from, when that
// changed. A partition without a leader follows nobody.
func (b *Broker) followLocked(h *hosted, pa metadata.Partition) error {
	b.resignLocked(h)
	h.role = roleFollower
	if err := h.p.BecomeFollower(pa.LeaderEpoch); err != nil {
		return err
	}
	target := followTarget{leader: pa.Leader, leaderEpoch: pa.LeaderEpoch, ok: pa.Leader != metadata.NoLeader}
	switch {
	case target == h.following:
	case !target.ok:
		b.unfollowLocked(h)
	default:
		if b.opts.Followers != nil {
			b.opts.Followers.Follow(h.p, pa.Leader, pa.LeaderEpoch)
		}
		h.following = target
	}
	return nil
}

// resignLocked ends h's leadership here, if it had one: its tier loop
// stops, OnClose hears of it and its leader state is retired.
func (b *Broker) resignLocked(h *hosted) {
	if h.tier != nil {
		h.tier.stop()
		h.tier = nil
	}
	if h.leader != nil {
		h.leader.retire()
		h.leader = nil
	}
	h.isr = nil
	if h.role != roleLeader {
		return
	}
	h.role = 0
	if b.opts.OnClose != nil {
		b.opts.OnClose(h.p)
	}
}

// unfollowLocked stops h's fetching, if Followers was told to fetch it.
func (b *Broker) unfollowLocked(h *hosted) {
	if !h.following.ok {
		return
	}
	if b.opts.Followers != nil {
		b.opts.Followers.Unfollow(h.p.TP())
	}
	h.following = followTarget{}
}

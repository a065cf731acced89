package reconcile

import (
	"errors"

	"github.com/strata-broker/strata/internal/coordinator/assignor"
)

// ErrFencedMemberEpoch is FENCED_MEMBER_EPOCH: the member must give up
// its partitions and join again.
var ErrFencedMemberEpoch = errors.New("fenced member epoch")

// Next is m's next state given in (see the package contract). It
// modifies neither m nor in; partition lists are values never changed in
// place, which the result may share with both.
func Next(m Member, in Input) (Member, error) {
	switch m.State {
	case Stable:
		switch {
		case m.Epoch != in.TargetEpoch:
			return computeNext(m, in, m.Epoch, m.Assigned), nil
		case in.SubscriptionChanged:
			return dropUnsubscribed(m, in), nil
		}
		return m, nil
	case UnrevokedPartitions:
		if in.ownsAnyOf(m.PendingRevocation) {
			if in.SubscriptionChanged {
				return dropUnsubscribed(m, in), nil
			}
			return m, nil
		}
		// Revoked: on to the next epoch, but not past the target (a
		// revocation for a subscription change has no new target yet).
		return computeNext(m, in, min(m.Epoch+1, in.TargetEpoch), m.Assigned), nil
	case UnreleasedPartitions:
		return computeNext(m, in, m.Epoch, m.Assigned), nil
	}
	if !in.OwnedReported || in.Owned.Size() != 0 {
		return m, ErrFencedMemberEpoch
	}
	return computeNext(m, in, in.TargetEpoch, m.Assigned), nil
}

// dropUnsubscribed takes the partitions of topics m no longer subscribes
// to out of Assigned (Kafka's updateCurrentAssignment): to revoke while
// the heartbeat may still own one, at once otherwise. Epoch and target
// are untouched.
func dropUnsubscribed(m Member, in Input) Member {
	assigned := assignor.Assignment{}
	pending := m.PendingRevocation.Clone()
	dropped := false
	for t, ps := range m.Assigned {
		if in.Subscribed(t) {
			assigned[t] = ps
			continue
		}
		dropped = true
		put(pending, t, union(pending[t], ps))
	}
	if !dropped {
		return m
	}
	m.Assigned = assigned.Clone()
	if len(pending) != 0 && in.ownsAnyOf(pending) {
		m.State, m.PendingRevocation = UnrevokedPartitions, pending
	}
	return m
}

// computeNext reconciles m, at epoch, towards in.Target (Kafka's
// computeNextAssignment).
func computeNext(m Member, in Input, epoch int32, assigned assignor.Assignment) Member {
	newAssigned, revoke := assignor.Assignment{}, assignor.Assignment{}
	toAssign := assignor.Assignment{}
	unreleased := false
	for _, t := range topicsOf(in.Target, assigned) {
		var target []int32
		if in.Subscribed(t) {
			target = in.Target[t]
		}
		keep := intersect(assigned[t], target)
		put(newAssigned, t, keep)
		put(revoke, t, minus(assigned[t], keep))
		var free []int32
		for _, p := range minus(target, keep) {
			// A partition the member itself is revoking is not another's.
			if in.PartitionEpoch(t, p) != -1 && !m.PendingRevocation.Contains(t, p) {
				unreleased = true
				continue
			}
			free = append(free, p)
		}
		put(toAssign, t, free)
	}
	next := m
	switch {
	case len(revoke) != 0 && in.ownsAnyOf(revoke):
		next = m.withEpoch(epoch)
		next.State, next.Assigned, next.PendingRevocation = UnrevokedPartitions, newAssigned, revoke
		return next
	case len(toAssign) != 0:
		for t, ps := range toAssign {
			put(newAssigned, t, union(newAssigned[t], ps))
		}
	}
	next = m.withEpoch(in.TargetEpoch)
	next.State, next.Assigned, next.PendingRevocation = Stable, newAssigned, assignor.Assignment{}
	if unreleased {
		next.State = UnreleasedPartitions
	}
	return next
}

// CheckEpoch is the epoch check of a heartbeat or an offset commit that
// says epoch and, if ownedReported, owns owned: m's epoch passes; its
// previous one passes only with owned a part of what m has, for the
// response that moved the member on may have been lost.
func CheckEpoch(m Member, epoch int32, owned assignor.Assignment, ownedReported bool) error {
	switch {
	case epoch == m.Epoch:
		return nil
	case epoch < m.Epoch && epoch == m.PreviousEpoch && ownedReported && subset(owned, m.Assigned):
		return nil
	}
	return ErrFencedMemberEpoch
}

func subset(a, of assignor.Assignment) bool {
	for t, ps := range a {
		if len(minus(ps, of[t])) != 0 {
			return false
		}
	}
	return true
}

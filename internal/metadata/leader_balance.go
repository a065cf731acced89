package metadata

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/strata-broker/strata/internal/base"
)

// Preferred leader election (Kafka's PREFERRED election and
// auto.leader.rebalance.enable): failover moves leadership within the ISR
// and nothing moves it back, so once a broker returns, the controller gives
// each partition back to its preferred replica, the first of its replicas,
// when that replica is in the ISR and eligible. Deciding is pure
// (preferredElection, leaderImbalance); electPreferredCmd carries the
// decision and its apply decides again against the image of the moment.

// maxPreferredElectionsPerCommand bounds the partitions one
// electPreferredCmd names (about 100 bytes each in JSON, far below
// maxCommandBytes); larger batches take several commands.
const maxPreferredElectionsPerCommand = 10_000

// maxLoggedMoves bounds the leadership moves one log line lists.
const maxLoggedMoves = 20

// preferredState is what a preferred election would do to a partition.
// The zero value is invalid.
type preferredState int

const (
	// preferredLeads: the preferred replica leads already.
	preferredLeads preferredState = iota + 1
	// preferredOutOfSync: the preferred replica is not in the ISR (it may
	// miss acknowledged records).
	preferredOutOfSync
	// preferredIneligible: the preferred replica is in the ISR but fenced
	// or unregistered.
	preferredIneligible
	// preferredElectable: an election would make the preferred replica lead.
	preferredElectable
)

// preferredStateOf classifies p's preferred replica, p.Replicas[0].
func preferredStateOf(p Partition, eligible func(int32) bool) preferredState {
	preferred := p.Replicas[0] // Partition invariant: Replicas is non-empty
	switch {
	case p.Leader == preferred:
		return preferredLeads
	case !slices.Contains(p.ISR, preferred):
		return preferredOutOfSync
	case !eligible(preferred):
		return preferredIneligible
	}
	return preferredElectable
}

// preferredElection is p led by its preferred replica, keeping the ISR
// (the leader epoch and partition epoch grow). changed is false, and p is
// returned as is, when the preferred replica leads already or cannot lead:
// outside the ISR or not eligible. It never elects outside the ISR.
func preferredElection(p Partition, eligible func(int32) bool) (Partition, bool) {
	if preferredStateOf(p, eligible) != preferredElectable {
		return p, false
	}
	return withLeaderAndISR(p, p.Replicas[0], p.ISR)
}

// partitionRef names a partition by topic id, so that a command planned
// against one topic never changes another one later created with its name.
type partitionRef struct {
	TopicID   base.TopicID `json:"topic_id"`
	Partition int32        `json:"partition"`
}

// leaderImbalance is the controller's periodic decision (Kafka's
// KafkaController.checkAndTriggerAutoLeaderRebalance): for each broker b,
// of the partitions whose preferred replica is b, the share not led by b
// is its imbalance; when it exceeds percentage/100, every such partition
// whose preferred election would change it is to be elected. The result
// lists them by topic name, then partition index; it is empty when nothing
// is to be done. percentage is in 0..100: 0 elects whatever can be elected,
// 100 never anything.
func leaderImbalance(img *Image, percentage int) []partitionRef {
	type share struct{ preferred, notLed int }
	shares := map[int32]*share{}
	for _, t := range img.Topics {
		for _, p := range t.Partitions {
			b := p.Replicas[0]
			s := shares[b]
			if s == nil {
				s = &share{}
				shares[b] = s
			}
			s.preferred++
			if p.Leader != b {
				s.notLed++
			}
		}
	}
	// notLed/preferred > percentage/100, in integers.
	imbalanced := func(b int32) bool {
		s := shares[b]
		return s.notLed*100 > percentage*s.preferred
	}
	var out []partitionRef
	for _, name := range slices.Sorted(maps.Keys(img.Topics)) {
		t := img.Topics[name]
		for _, p := range t.Partitions {
			if imbalanced(p.Replicas[0]) && preferredStateOf(p, img.Eligible) == preferredElectable {
				out = append(out, partitionRef{TopicID: t.ID, Partition: p.Index})
			}
		}
	}
	return out
}

// electPreferredCmd elects the preferred replica of each of Partitions
// (Kafka's PartitionChangeRecord of a PREFERRED election). Apply decides
// again against the image it applies to, so a partition whose preferred
// replica leads by then, or left the ISR, or was fenced, or whose topic was
// deleted, is left as it is.
type electPreferredCmd struct {
	Partitions []partitionRef `json:"partitions"`
}

func (*electPreferredCmd) isCommand() {}

func applyElectPreferred(img *Image, c *electPreferredCmd, index uint64) (*Image, error) {
	return applyElections(img, "preferred", c.Partitions, index, func(_ *Topic, p Partition, eligible func(int32) bool) (Partition, bool) {
		return preferredElection(p, eligible)
	})
}

// applyElections applies elect to each partition of refs, in img's
// successor stamped with index; a partition of a deleted topic, one past
// the topic's end, or one elect leaves as it is, stays as it is. kind
// names the election in errors.
func applyElections(img *Image, kind string, refs []partitionRef, index uint64,
	elect func(*Topic, Partition, func(int32) bool) (Partition, bool)) (*Image, error) {
	if n := len(refs); n == 0 || n > maxPreferredElectionsPerCommand {
		return nil, fmt.Errorf("%w: %s election of %d partitions, want 1..%d", ErrInvalidCommand, kind, n, maxPreferredElectionsPerCommand)
	}
	for _, r := range refs {
		if r.Partition < 0 {
			return nil, fmt.Errorf("%w: %s election of partition %d", ErrInvalidCommand, kind, r.Partition)
		}
	}
	// Each changed topic is copied once; a partition named twice is
	// elected once, as the second look finds the first election done.
	changed := map[base.TopicID]*Topic{}
	for _, r := range refs {
		t, ok := changed[r.TopicID]
		if !ok {
			if t, ok = img.TopicsByID[r.TopicID]; !ok {
				continue
			}
		}
		if int(r.Partition) >= len(t.Partitions) {
			continue
		}
		p, ok := elect(t, t.Partitions[r.Partition], img.Eligible)
		if !ok {
			continue
		}
		if _, copied := changed[r.TopicID]; !copied {
			grown := *t
			grown.Partitions = slices.Clone(t.Partitions)
			t = &grown
			changed[r.TopicID] = t
		}
		t.Partitions[r.Partition] = p
	}
	next := img.with(index)
	if len(changed) == 0 {
		return next, nil
	}
	next.Topics = copyMap(img.Topics, 0)
	next.TopicsByID = copyMap(img.TopicsByID, 0)
	for _, t := range changed {
		next.Topics[t.Name] = t
		next.TopicsByID[t.ID] = t
	}
	return next, nil
}

// inTerm reports whether term is still this node's current term in
// office.
func (h *heartbeatBook) inTerm(term uint64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.term == term
}

// leaderBalanceLoop runs leaderImbalance every
// Options.LeaderImbalanceCheckInterval while term lasts and proposes the
// elections it picks. A node where no broker has registered has nothing to
// balance. It is owned by the Store (loopWG) and ends with the term or
// Close.
func (s *Store) leaderBalanceLoop(term uint64) {
	defer s.loopWG.Done()
	tick := time.NewTicker(s.opts.LeaderImbalanceCheckInterval)
	defer tick.Stop()
	for {
		select {
		case <-s.stopCh:
			return
		case <-tick.C:
		}
		if !s.hb.inTerm(term) || !s.inOffice.Load() {
			return
		}
		img := s.Image()
		if len(img.Brokers) == 0 {
			continue
		}
		refs := leaderImbalance(img, s.opts.LeaderImbalancePercentage)
		for batch := range slices.Chunk(refs, maxPreferredElectionsPerCommand) {
			before := s.Image()
			next, err := s.proposeNoCtx(&electPreferredCmd{Partitions: batch})
			if err != nil {
				s.log.Warn("moving leadership back to preferred replicas failed", "partitions", len(batch), "err", err)
				break
			}
			if moves := leadershipMoves(before, next, batch); len(moves) > 0 {
				s.log.Info("moved leadership back to preferred replicas", "partitions", len(moves),
					"moves", summarizeMoves(moves), "imbalance_percentage", s.opts.LeaderImbalancePercentage)
			}
		}
	}
}

// leadershipMove is one partition's leader before and after an election.
type leadershipMove struct {
	tp       base.TopicPartition
	from, to int32
}

// leadershipMoves lists the partitions of refs whose leader differs from
// before to after.
func leadershipMoves(before, after *Image, refs []partitionRef) []leadershipMove {
	var out []leadershipMove
	for _, r := range refs {
		bt, ok1 := before.TopicsByID[r.TopicID]
		at, ok2 := after.TopicsByID[r.TopicID]
		if !ok1 || !ok2 || int(r.Partition) >= len(bt.Partitions) || int(r.Partition) >= len(at.Partitions) {
			continue
		}
		from, to := bt.Partitions[r.Partition].Leader, at.Partitions[r.Partition].Leader
		if from != to {
			out = append(out, leadershipMove{tp: base.TopicPartition{Topic: at.Name, Partition: r.Partition}, from: from, to: to})
		}
	}
	return out
}

// summarizeMoves is "t-0: 2→1, t-3: 3→1", at most maxLoggedMoves of them.
func summarizeMoves(moves []leadershipMove) string {
	var b strings.Builder
	for i, m := range moves {
		if i == maxLoggedMoves {
			fmt.Fprintf(&b, ", and %d more", len(moves)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %d→%d", m.tp, m.from, m.to)
	}
	return b.String()
}

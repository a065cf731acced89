package metadata

import (
	"slices"
	"strings"
	"time"
)

// Automatic unclean leader election (Kafka's unclean.leader.election.enable):
// a partition of a topic that enables it does not wait for its last
// in-sync replica to return. When it has no leader and a live replica
// outside the ISR could lead, the controller elects that replica, as an
// operator's UNCLEAN election would (electUncleanCmd, uncleanElection):
// records only the lost ISR held are gone, the topic's owner having chosen
// availability over them. Kafka elects so when it fences the leader and
// every 5 minutes (unclean.leader.election.interval.ms); Strata's
// controller looks each time the image changes (a fence, a replica that
// comes back, the config turned on), so the partition is led again within
// one proposal.

// uncleanElectionKey is the topic config, and the broker config of its
// default, that enables automatic unclean election.
const uncleanElectionKey = "unclean.leader.election.enable"

// uncleanElectionRetry is how soon the controller tries again after a
// proposal of unclean elections failed.
const uncleanElectionRetry = time.Second

// uncleanElectionEnabled resolves unclean.leader.election.enable for t as
// Kafka's controller does (ConfigurationControlManager.getTopicConfig): the
// topic's own config, else the controller node's dynamic broker config,
// else the dynamic cluster-wide default, else the controller's static
// config (static). A value that is not true or false counts as false:
// configs are validated when set.
func uncleanElectionEnabled(img *Image, controller int32, t *Topic, static bool) bool {
	for _, configs := range []map[string]string{t.Configs, img.NodeConfigs[controller], img.BrokerConfigs} {
		if v, ok := configs[uncleanElectionKey]; ok {
			return strings.EqualFold(v, "true")
		}
	}
	return static
}

// uncleanCandidates lists the partitions the controller elects uncleanly
// on its own: those without a leader, of topics enabled says enable it,
// not tiered (uncleanElectionErr), where uncleanElection would elect a
// replica. By topic name, then partition index.
// It runs on every image change, so it sorts only the topics it picks.
func uncleanCandidates(img *Image, enabled func(*Topic) bool) []partitionRef {
	var picked []*Topic
	for _, t := range img.Topics {
		if leaderless(t) && !tiered(t) && enabled(t) {
			picked = append(picked, t)
		}
	}
	slices.SortFunc(picked, func(a, b *Topic) int { return strings.Compare(a.Name, b.Name) })
	var out []partitionRef
	for _, t := range picked {
		for _, p := range t.Partitions {
			if _, ok := uncleanElection(p, img.Eligible, img.brokerLostLogs); ok {
				out = append(out, partitionRef{TopicID: t.ID, Partition: p.Index})
			}
		}
	}
	return out
}

// outsideISR keeps the moves whose new leader was not in the partition's
// ISR in before: another command applied meanwhile may have elected from
// the ISR (a member back), which is no unclean election.
func outsideISR(before *Image, moves []leadershipMove) []leadershipMove {
	return slices.DeleteFunc(moves, func(m leadershipMove) bool {
		t, ok := before.Topics[m.tp.Topic]
		return ok && int(m.tp.Partition) < len(t.Partitions) && slices.Contains(t.Partitions[m.tp.Partition].ISR, m.to)
	})
}

// leaderless reports whether a partition of t has no leader.
func leaderless(t *Topic) bool {
	return slices.ContainsFunc(t.Partitions, func(p Partition) bool { return p.Leader == NoLeader })
}

// UncleanElections is how many leaders this node, as controller, has
// elected outside the ISR on its own (unclean.leader.election.enable)
// since it started (Kafka's ControllerStats UncleanLeaderElectionsPerSec
// counts an operator's too; those the operator knows of).
func (s *Store) UncleanElections() uint64 { return s.uncleanElections.Load() }

// uncleanElectionLoop elects, while term lasts, what uncleanCandidates
// picks, looking again each time the image changes. It is owned by the
// Store (loopWG) and ends with the term or Close.
func (s *Store) uncleanElectionLoop(term uint64) {
	defer s.loopWG.Done()
	changed, stopWatching := s.Watch()
	defer stopWatching()
	var retry <-chan time.Time
	for {
		if !s.hb.inTerm(term) || !s.inOffice.Load() {
			return
		}
		retry = nil
		img := s.Image()
		refs := uncleanCandidates(img, func(t *Topic) bool {
			return uncleanElectionEnabled(img, s.opts.NodeID, t, s.opts.UncleanLeaderElection)
		})
		for batch := range slices.Chunk(refs, maxPreferredElectionsPerCommand) {
			before := s.Image()
			next, err := s.proposeNoCtx(&electUncleanCmd{Partitions: batch})
			if err != nil {
				s.log.Warn("unclean leader election failed; trying again", "partitions", len(batch), "err", err)
				retry = time.After(uncleanElectionRetry)
				break
			}
			if moves := outsideISR(before, leadershipMoves(before, next, batch)); len(moves) > 0 {
				s.uncleanElections.Add(uint64(len(moves)))
				s.log.Error("elected leaders outside the ISR (unclean.leader.election.enable): records only the lost in-sync replicas held are gone",
					"partitions", len(moves), "moves", summarizeMoves(moves))
			}
		}
		select {
		case <-s.stopCh:
			return
		case <-changed:
		case <-retry:
		}
	}
}

package metadata

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/raft"
)

// A voter change takes effect on each node when the node appends its
// configuration entry, and commits once a majority of the new voters hold
// it. Raft (hashicorp/raft) refuses a vote to a candidate that is not a
// voter in the voter's own latest configuration, so a voter that has not
// yet received the entry refuses the new voters' votes: were the leader to
// stop then, a new voter holding the entry and an old voter without it
// could each be short of a majority for good (one voter grown to two, a
// third added while the second lagged: the third cannot win the second's
// vote, and the second, still at two voters, needs the stopped leader's).
// Kafka's voters do not check the candidate, so a controller's answer
// there means "committed". Here the controller answers a voter change
// once every voter holds the voter set it made, so that an operator who
// waits for the answer before stopping the old leader cannot stall the
// quorum. It asks each voter with forwardProbe, whose reply carries the
// voters of the node's latest configuration: what that node's votes go by.

// voterHoldPoll is how often the controller asks again the voters that do
// not hold its voter set yet.
const voterHoldPoll = 50 * time.Millisecond

// voterIDs lists the ids of the voters of servers, ascending; a server id
// that is not a node id is left out.
func voterIDs(servers []raft.Server) []int32 {
	var out []int32
	for _, srv := range servers {
		if id, ok := parseServerID(srv.ID); ok && srv.Suffrage == raft.Voter {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// votersLacking lists, in the order of servers, the voters of servers
// other than self whose latest voter set (reported; absent: not heard) is
// not that of servers.
func votersLacking(servers []raft.Server, self raft.ServerID, reported map[raft.ServerID][]int32) []raft.Server {
	want := voterIDs(servers)
	var out []raft.Server
	for _, srv := range servers {
		if srv.Suffrage != raft.Voter || srv.ID == self {
			continue
		}
		if got, ok := reported[srv.ID]; !ok || !slices.Equal(got, want) {
			out = append(out, srv)
		}
	}
	return out
}

// awaitVotersHold waits until every voter of the latest configuration
// holds its voter set, or ctx ends: then it says which do not
// (ErrVoterNotReady), and that the change itself is committed.
func (s *Store) awaitVotersHold(ctx context.Context) error {
	reported := map[raft.ServerID][]int32{}
	for {
		cf := s.raft.GetConfiguration()
		if err := cf.Error(); err != nil {
			return raftFutureError(err)
		}
		servers := cf.Configuration().Servers
		lacking := votersLacking(servers, nodeServerID(s.opts.NodeID), reported)
		if len(lacking) == 0 {
			return nil
		}
		maps.Copy(reported, s.probeVoterSets(ctx, lacking))
		if len(votersLacking(servers, nodeServerID(s.opts.NodeID), reported)) == 0 {
			continue // confirm against the configuration as it is now
		}
		if err := s.pause(ctx, voterHoldPoll); err != nil {
			var names []string
			for _, srv := range votersLacking(servers, nodeServerID(s.opts.NodeID), reported) {
				names = append(names, fmt.Sprintf("%s@%s", srv.ID, srv.Address))
			}
			return fmt.Errorf("%w: the voter change is committed, but voters %s have not received it yet: until they have, stopping the controller can leave the quorum without a leader; start them or wait, and check with DescribeQuorum: %w",
				ErrVoterNotReady, strings.Join(names, ", "), err)
		}
	}
}

// probeVoterSets asks each of servers at once for the voters of its latest
// configuration; one that does not answer is left out.
func (s *Store) probeVoterSets(ctx context.Context, servers []raft.Server) map[raft.ServerID][]int32 {
	addrs := make([]raft.ServerAddress, len(servers))
	for i, srv := range servers {
		addrs[i] = srv.Address
	}
	replies, _ := s.probeAll(ctx, addrs)
	out := make(map[raft.ServerID][]int32, len(servers))
	for i, r := range replies {
		if r != nil {
			out[servers[i].ID] = r.Voters
		}
	}
	return out
}

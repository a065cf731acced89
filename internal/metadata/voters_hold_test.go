package metadata

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

func TestVotersLacking(t *testing.T) {
	servers := []raft.Server{
		{Suffrage: raft.Voter, ID: "3", Address: "a3"},
		{Suffrage: raft.Voter, ID: "1", Address: "a1"},
		{Suffrage: raft.Nonvoter, ID: "4", Address: "a4"},
		{Suffrage: raft.Voter, ID: "2", Address: "a2"},
	}
	ids := func(list []raft.Server) string {
		var out []string
		for _, s := range list {
			out = append(out, string(s.ID))
		}
		return strings.Join(out, ",")
	}
	for name, tc := range map[string]struct {
		reported map[raft.ServerID][]int32
		want     string
	}{
		"nobody heard":            {nil, "3,2"},
		"all hold it":             {map[raft.ServerID][]int32{"2": {1, 2, 3}, "3": {1, 2, 3}}, ""},
		"one behind":              {map[raft.ServerID][]int32{"2": {1, 2}, "3": {1, 2, 3}}, "2"},
		"one ahead":               {map[raft.ServerID][]int32{"2": {1, 2, 3}, "3": {1, 2, 3, 4}}, "3"},
		"the non-voter is moot":   {map[raft.ServerID][]int32{"2": {1, 2, 3}, "3": {1, 2, 3}, "4": nil}, ""},
		"self is not asked":       {map[raft.ServerID][]int32{"2": {1, 2, 3}, "3": {1, 2, 3}, "1": nil}, ""},
		"no configuration at all": {map[raft.ServerID][]int32{"2": nil, "3": {1, 2, 3}}, "2"},
	} {
		if got := ids(votersLacking(servers, "1", tc.reported)); got != tc.want {
			t.Errorf("%s: lacking %q, want %q", name, got, tc.want)
		}
	}
	if got := voterIDs(servers); !slices.Equal(got, []int32{1, 2, 3}) {
		t.Errorf("voterIDs: %v, want [1 2 3]", got)
	}
}

// TestClusterVoterChangeWaitsForEveryVoter: with a voter stopped, AddVoter
// commits (a majority of the new voters holds it) but answers that the
// stopped voter has not received it, so the operator knows not to stop the
// controller yet; once every voter runs, a change answers plainly, and two
// at once are planned one after the other.
func TestClusterVoterChangeWaitsForEveryVoter(t *testing.T) {
	c := newTestCluster(t, 3, 1)
	stores := c.openAll(1, 2, 3, 4)
	for _, s := range stores {
		registerWithDir(t, s)
	}
	leader := c.leader()
	var stopped *Store
	for _, s := range stores[:3] {
		if s != leader {
			stopped = s
		}
	}
	c.close(stopped)
	fourth := stores[3]
	addr := []string{string(fourth.trans.LocalAddr())}
	var err error
	waitFor(t, "AddVoter(4) to commit", func() bool {
		err = leader.AddVoter(t.Context(), 4, [16]byte{4}, addr, 2*time.Second)
		return !errors.Is(err, ErrVoterNotReady) || strings.Contains(err.Error(), "is committed")
	})
	if !errors.Is(err, ErrVoterNotReady) || !strings.Contains(err.Error(), fmt.Sprintf("voters %d@", stopped.opts.NodeID)) {
		t.Fatalf("AddVoter(4) with voter %d stopped: %v; want ErrVoterNotReady naming it", stopped.opts.NodeID, err)
	}
	if conf := configuration(t, leader); conf[4].Suffrage != raft.Voter {
		t.Fatalf("configuration %+v: the change did not commit", conf)
	}

	c.openAll(stopped.opts.NodeID)
	if err := leader.RemoveVoter(t.Context(), 4, [16]byte{4}, 10*time.Second); err != nil {
		t.Fatalf("RemoveVoter(4) with every voter running: %v", err)
	}
	for _, s := range c.open() {
		if conf := configuration(t, s); s.opts.NodeID != 4 && conf[4].Suffrage != raft.Nonvoter {
			t.Errorf("RemoveVoter(4) answered before node %d held it: %+v", s.opts.NodeID, conf)
		}
	}

	// Two changes at once are planned one after the other: one adds the
	// voter, the other finds it added.
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { errs[i] = leader.AddVoter(t.Context(), 4, [16]byte{4}, addr, 10*time.Second) })
	}
	wg.Wait()
	if slices.ContainsFunc(errs, func(err error) bool { return err != nil && !errors.Is(err, ErrDuplicateVoter) }) ||
		(errs[0] == nil) == (errs[1] == nil) {
		t.Fatalf("two AddVoter(4) at once: %v; want one to add it and one ErrDuplicateVoter", errs)
	}
}

package metadata

import (
	"strings"
	"testing"

	"github.com/hashicorp/raft"
)

func TestOptionsBootstrapChecked(t *testing.T) {
	for name, tc := range map[string]struct {
		opts Options
		want string // "" for valid
	}{
		"bootstrap servers":      {Options{NodeID: 4, BindAddr: "127.0.0.1:0", AdvertiseAddr: "127.0.0.1:9004", Bootstrap: []string{"127.0.0.1:9001", "127.0.0.1:9002"}}, ""},
		"naming itself too":      {Options{NodeID: 4, BindAddr: "127.0.0.1:9004", Bootstrap: []string{"127.0.0.1:9004", "127.0.0.1:9002"}}, ""},
		"no listener":            {Options{NodeID: 4, Bootstrap: []string{"127.0.0.1:9001"}}, "need a TCP Options.BindAddr"},
		"with voters":            {Options{NodeID: 4, BindAddr: "127.0.0.1:9004", Voters: map[int32]string{1: "127.0.0.1:9001"}, Bootstrap: []string{"127.0.0.1:9001"}}, "exclusive"},
		"an address without one": {Options{NodeID: 4, BindAddr: "127.0.0.1:9004", Bootstrap: []string{"127.0.0.1"}}, "Options.Bootstrap"},
	} {
		err := tc.opts.validateQuorum()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error with %q", name, err, tc.want)
		}
	}
	o := Options{Bootstrap: []string{"b:1", "a:2"}}
	if got := o.contacts(); len(got) != 2 || got[0] != "b:1" || got[1] != "a:2" {
		t.Errorf("contacts %v, want the bootstrap servers in order", got)
	}
	o.Voters, o.Bootstrap = map[int32]string{2: "v2:1", 1: "v1:1"}, nil
	if got := o.contacts(); len(got) != 2 || got[0] != "v1:1" || got[1] != "v2:1" {
		t.Errorf("contacts %v, want the voters by id", got)
	}
}

// TestClusterNodeJoinsByBootstrapServers: a node that knows the quorum
// only by one member's address (Kafka's controller.quorum.bootstrap.servers)
// joins as a non-voter, may be made a voter, and comes back from a
// restart as one.
func TestClusterNodeJoinsByBootstrapServers(t *testing.T) {
	c := newTestCluster(t, 2, 0)
	stores := c.openAll(1, 2)
	leader := c.leader()
	o := c.opts[1]
	o.Dir, o.NodeID, o.Voters = t.TempDir(), 3, nil
	o.BindAddr = freeAddrs(t, 1)[0]
	o.Bootstrap = []string{"127.0.0.1:1", c.voters[c.follower(leader).opts.NodeID]} // one unreachable, one a follower
	c.opts[3] = o
	joiner := c.openAll(3)[0]
	waitFor(t, "node 3 to join", func() bool { _, ok := configuration(t, leader)[3]; return ok })
	if conf := configuration(t, leader); conf[3].Suffrage != raft.Nonvoter {
		t.Fatalf("configuration %+v: node 3 joined as a voter", conf)
	}
	for _, s := range append(stores, joiner) {
		registerWithDir(t, s)
	}
	addVoter(t, leader, joiner)

	c.close(joiner)
	back := c.openAll(3)[0]
	want := populate(t, back, "joined")
	c.converge(want)
	if conf := configuration(t, back); conf[3].Suffrage != raft.Voter || len(conf) != 3 {
		t.Fatalf("configuration %+v after the restart: want three voters", conf)
	}
}

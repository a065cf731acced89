package e2e

import (
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestClusterUnregisterBroker is decommissioning a broker, as
// `kafka-cluster unregister --id 3` does: a running broker is refused; once
// stopped it is unregistered, and DescribeCluster no longer lists it even
// with fenced brokers included; started again, it registers anew.
func TestClusterUnregisterBroker(t *testing.T) {
	t.Parallel()
	testUnregisterBroker(t, startCluster(t, 3))
}

// TestClusterUnregisterNonVoter is TestClusterUnregisterBroker for a node
// outside controller.quorum.voters: the unregistration also takes it out
// of the metadata quorum, and started again at the same addresses (its own
// copy of the quorum still names it) it must join again, or it never
// catches up and never registers.
func TestClusterUnregisterNonVoter(t *testing.T) {
	t.Parallel()
	testUnregisterBroker(t, startClusterOfVoters(t, 3, 2))
}

// testUnregisterBroker unregisters node 3 of c and starts it again.
func testUnregisterBroker(t *testing.T, c *Cluster) {
	cl := newClient(t, c.Node(1).Addr)
	unregister := func(id int32) *kmsg.UnregisterBrokerResponse {
		t.Helper()
		req := kmsg.NewPtrUnregisterBrokerRequest()
		req.BrokerID = id
		resp, err := req.RequestWith(testContext(t, 30*time.Second), cl)
		if err != nil {
			t.Fatalf("UnregisterBroker %d: %v", id, err)
		}
		return resp
	}
	registered := func() []int32 {
		t.Helper()
		req := kmsg.NewPtrDescribeClusterRequest()
		req.IncludeFencedBrokers = true
		resp, err := req.RequestWith(testContext(t, 10*time.Second), cl)
		if err != nil || resp.ErrorCode != 0 {
			t.Fatalf("DescribeCluster: %v, %+v", err, resp)
		}
		var ids []int32
		for _, b := range resp.Brokers {
			ids = append(ids, b.NodeID)
		}
		slices.Sort(ids)
		return ids
	}

	if resp := unregister(3); resp.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("unregistering running node 3: %+v", resp)
	}
	c.Node(3).Stop() // a controlled shutdown fences it
	deadline := time.Now().Add(clusterSettleTimeout)
	for {
		resp := unregister(3)
		if resp.ErrorCode == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("unregistering stopped node 3: %+v", resp)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got := registered(); !slices.Equal(got, []int32{1, 2}) {
		t.Fatalf("registered brokers after unregistering node 3: %v", got)
	}
	if resp := unregister(3); resp.ErrorCode != kerr.BrokerIDNotRegistered.Code {
		t.Fatalf("unregistering node 3 again: %+v", resp)
	}
	c.Node(3).Restart()
	c.waitBrokers(1, 2, 3)
	if got := registered(); !slices.Equal(got, []int32{1, 2, 3}) {
		t.Fatalf("registered brokers after node 3 came back: %v", got)
	}
}

// TestClusterUnregisterPausedBroker: a broker that is fenced while its
// process still exists (paused here, as a long GC pause or a hung host
// would) can be unregistered; when it resumes, its next heartbeat finds
// its registration gone and it exits saying so, and started again (at the
// same addresses, outside the voters, so it must rejoin the metadata
// quorum it was taken out of) it registers anew.
func TestClusterUnregisterPausedBroker(t *testing.T) {
	t.Parallel()
	c := startClusterOfVoters(t, 3, 2)
	cl := newClient(t, c.Node(1).Addr)
	n3 := c.Node(3)
	n3.signal(syscall.SIGSTOP)
	deadline := time.Now().Add(clusterSettleTimeout)
	for {
		req := kmsg.NewPtrUnregisterBrokerRequest()
		req.BrokerID = 3
		resp, err := req.RequestWith(testContext(t, 30*time.Second), cl)
		if err == nil && resp.ErrorCode == 0 {
			break
		}
		if time.Now().After(deadline) {
			n3.signal(syscall.SIGCONT)
			t.Fatalf("unregistering paused node 3: %+v, %v", resp, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	n3.setStopping() // it is to exit by itself
	n3.signal(syscall.SIGCONT)
	_, exited := n3.current()
	select {
	case <-exited:
	case <-time.After(clusterSettleTimeout):
		t.Fatal("node 3 still runs after its registration was removed")
	}
	if out := n3.output.String(); !strings.Contains(out, "it was unregistered") {
		t.Fatalf("node 3 exited without saying it was unregistered:\n%s", out)
	}
	n3.Restart()
	c.waitBrokers(1, 2, 3)
}

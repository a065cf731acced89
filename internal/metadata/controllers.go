package metadata

import (
	"cmp"
	"slices"

	"github.com/hashicorp/raft"
)

// Controller is a voter of the metadata quorum and the address of its
// controller listener, where it serves Raft, forwarding and the admin
// requests of clients bootstrapped from the controllers (KIP-919).
type Controller struct {
	NodeID int32
	Addr   string // host:port
}

// Controllers lists the voters of the latest Raft configuration this node
// knows, by node id: Kafka's controllers, which DescribeCluster names to a
// client of the controller listener. Empty on a single node (no controller
// listener), after Close, or while the configuration cannot be read.
func (s *Store) Controllers() []Controller {
	if s.closing() || s.mux == nil {
		return nil
	}
	f := s.raft.GetConfiguration()
	if f.Error() != nil {
		return nil
	}
	return controllersOf(f.Configuration())
}

// controllersOf lists the voters of conf with their addresses, by node id;
// servers whose id is not a node id are left out.
func controllersOf(conf raft.Configuration) []Controller {
	var out []Controller
	for _, srv := range conf.Servers {
		id, ok := parseServerID(srv.ID)
		if !ok || srv.Suffrage != raft.Voter {
			continue
		}
		out = append(out, Controller{NodeID: id, Addr: string(srv.Address)})
	}
	slices.SortFunc(out, func(a, b Controller) int { return cmp.Compare(a.NodeID, b.NodeID) })
	return out
}

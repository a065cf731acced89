package config

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
)

// Kafka 4 finds a node's controllers by controller.quorum.bootstrap.servers
// (KIP-853's dynamic quorum). On a node without controller.quorum.voters,
// Strata reads the list two ways:
//
//   - naming this node's own controller listener and nothing else (Kafka's
//     standalone quorum, `kafka-storage format --standalone`, the shape of
//     Kafka 4's own server.properties): the node is the first voter of a
//     quorum that may grow, as controller.quorum.voters=<node.id>@<its
//     controller address> would make it;
//   - naming any other address: the node joins the quorum of the
//     controllers there as a non-voter (Broker.QuorumBootstrap); it never
//     starts a quorum of its own, and AddRaftVoter may make it a voter.
//
// Telling the two apart decides whether a node may start a quorum, so an
// address counts as this node's only when it surely is (namesThisNode):
// when unsure, the node joins, and a node that waits to join is safe where
// a second quorum is not.

// validBootstrapServers allows a list of host:port with a specific host and
// a port in [1, 65535].
func validBootstrapServers(v string) error {
	for _, s := range splitList(v) {
		port, host, err := parseHostPort(s)
		if err != nil || host == "" || port == 0 {
			return errors.New("must be a comma-separated list of host:port, e.g. localhost:9093")
		}
	}
	return nil
}

// setQuorumBootstrap reads controller.quorum.bootstrap.servers on a node
// without voters: a standalone quorum sets b.QuorumVoters to this node
// alone, any other list sets b.QuorumBootstrap.
func (b *Broker) setQuorumBootstrap(g getter) error {
	bootstrap := splitList(g.str("controller.quorum.bootstrap.servers"))
	if len(bootstrap) == 0 {
		return nil
	}
	listeners, err := parseListeners(g.str("listeners"))
	if err != nil {
		panic("config: unvalidated listeners") // checked by the listeners validator
	}
	var advertised []Listener
	if v, ok := g("advertised.listeners"); ok {
		if advertised, err = parseListeners(v); err != nil {
			panic("config: unvalidated advertised.listeners")
		}
	}
	byName := func(ls []Listener) (Listener, bool) {
		i := slices.IndexFunc(ls, func(l Listener) bool { return l.Name == b.ControllerListenerName })
		if i < 0 {
			return Listener{}, false
		}
		return ls[i], true
	}
	ctrl, hasCtrl := byName(listeners)
	adv, hasAdv := byName(advertised)
	own := func(s string) bool { return hasCtrl && namesThisNode(s, ctrl, adv, hasAdv, localIPs()) }
	if !slices.ContainsFunc(bootstrap, func(s string) bool { return !own(s) }) {
		if !slices.Contains(b.ProcessRoles, RoleController) {
			return &Error{Key: "process.roles", Value: g.str("process.roles"),
				Msg: fmt.Sprintf("has no controller, but controller.quorum.bootstrap.servers (%s) names only this node's own controller listener: a standalone quorum's node is its controller; set process.roles=broker,controller, or name the cluster's controllers in controller.quorum.bootstrap.servers", strings.Join(bootstrap, ","))}
		}
		addr := bootstrap[0]
		if hasAdv {
			addr = adv.Addr()
		}
		b.QuorumVoters = map[int32]string{b.NodeID: addr}
		b.StandaloneQuorum = true
		return nil
	}
	b.QuorumBootstrap = bootstrap
	return nil
}

// namesThisNode reports whether hostPort (a valid
// controller.quorum.bootstrap.servers entry) surely is ctrl, this node's
// controller listener: the same port, and a host that is the advertised
// controller entry's (adv, if hasAdv), the listener's own, a loopback name
// for a loopback or every-interface listener, or, on an every-interface
// listener, an IP of this machine (local). Another name is not taken for
// this node's without DNS.
func namesThisNode(hostPort string, ctrl, adv Listener, hasAdv bool, local []net.IP) bool {
	port, host, err := parseHostPort(hostPort)
	switch {
	case err != nil || port != ctrl.Port:
		return false
	case hasAdv && adv.Port == port && strings.EqualFold(host, adv.Host):
		return true
	case specificHost(ctrl.Host):
		return strings.EqualFold(host, ctrl.Host) || (loopbackHost(host) && loopbackHost(ctrl.Host))
	case loopbackHost(host):
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && slices.ContainsFunc(local, ip.Equal)
}

func loopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// localIPs are the IPs of this machine's interfaces; none when they cannot
// be listed.
func localIPs() []net.IP {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []net.IP
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			out = append(out, n.IP)
		}
	}
	return out
}

package config

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
)

// Kafka 4's own server.properties runs a node as a quorum of itself found
// through controller.quorum.bootstrap.servers (KIP-853's dynamic quorum,
// formatted with `kafka-storage format --standalone`). Strata's quorum is
// static, and a node without controller.quorum.voters is already a quorum of
// itself, so it takes that form for what it is: a single node. Its
// controller listener serves nothing there and stays closed.

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

// cutStandaloneController handles the controller listener of a node without
// voters. Without controller.quorum.bootstrap.servers it must have none;
// with them, they must all name it (the standalone quorum), and it is taken
// out of b.Listeners into b.StandaloneController.
func (b *Broker) cutStandaloneController(g getter, names []string) error {
	listeners := g.str("listeners")
	bootstrap := splitList(g.str("controller.quorum.bootstrap.servers"))
	i := slices.IndexFunc(b.Listeners, func(l Listener) bool { return slices.Contains(names, l.Name) })
	switch {
	case i < 0 && len(bootstrap) == 0:
		return nil
	case i < 0:
		return &Error{Key: "controller.quorum.bootstrap.servers", Value: g.str("controller.quorum.bootstrap.servers"),
			Msg: fmt.Sprintf("names controllers, but listeners (%s) has no controller listener (controller.listener.names): a Strata cluster finds its metadata quorum by controller.quorum.voters; on a single node remove controller.quorum.bootstrap.servers, for a cluster list its voters in controller.quorum.voters (id@host:port,...)", listeners)}
	case len(bootstrap) == 0:
		return &Error{Key: "listeners", Value: listeners,
			Msg: fmt.Sprintf("%s is the controller listener (controller.listener.names), which only a cluster uses; set controller.quorum.voters or remove it from listeners", b.Listeners[i].Name)}
	}
	ctrl := b.Listeners[i]
	for _, s := range bootstrap {
		if !namesListener(s, ctrl) {
			return &Error{Key: "controller.quorum.bootstrap.servers", Value: g.str("controller.quorum.bootstrap.servers"),
				Msg: fmt.Sprintf("names %s, not this node's controller listener %s: a Strata cluster finds its metadata quorum by controller.quorum.voters; for a cluster list its voters in controller.quorum.voters (id@host:port,...), for a single node name only its own controller listener or nothing", s, ctrl)}
		}
	}
	if slices.ContainsFunc(b.Listeners[i+1:], func(l Listener) bool { return slices.Contains(names, l.Name) }) {
		return &Error{Key: "listeners", Value: listeners,
			Msg: "has more than one controller listener (controller.listener.names); keep one"}
	}
	b.StandaloneController = ctrl
	b.Listeners = slices.Delete(b.Listeners, i, i+1)
	if len(b.Listeners) == 0 {
		return &Error{Key: "listeners", Value: listeners,
			Msg: fmt.Sprintf("has only the controller listener %s, which serves no client; add a listener for clients, e.g. PLAINTEXT://<host>:9092", ctrl.Name)}
	}
	return nil
}

// namesListener reports whether hostPort (a valid controller.quorum.bootstrap.servers
// entry) can reach l on this machine: the same port, and the same host, or a
// loopback name for a loopback listener, or any host for a listener on
// every interface (which no name can be told apart from without DNS).
func namesListener(hostPort string, l Listener) bool {
	port, host, err := parseHostPort(hostPort)
	if err != nil || port != l.Port {
		return false
	}
	switch {
	case strings.EqualFold(host, l.Host), !specificHost(l.Host):
		return true
	default:
		return loopbackHost(host) && loopbackHost(l.Host)
	}
}

func loopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

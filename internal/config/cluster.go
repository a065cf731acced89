package config

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/strata-broker/strata/internal/base"
)

// The roles of process.roles. Every Strata node is a broker; a voter of
// controller.quorum.voters (and a single node) is a controller too.
const (
	RoleBroker     = "broker"
	RoleController = "controller"
)

// maxRackBytes bounds broker.rack, as the metadata quorum does for a broker
// registration: refused here, a long rack never fails a registration.
const maxRackBytes = 255

// ReplicaFetch are the replica.* settings of this broker's followers, the
// fetchers that copy partitions from their leaders. Sizes are at least 1;
// MaxWait <= SocketTimeout and MaxWait <= Broker.ReplicaLagTimeMax.
type ReplicaFetch struct {
	MaxBytes         int32         // replica.fetch.max.bytes (per partition)
	ResponseMaxBytes int32         // replica.fetch.response.max.bytes
	MinBytes         int32         // replica.fetch.min.bytes
	MaxWait          time.Duration // replica.fetch.wait.max.ms
	Backoff          time.Duration // replica.fetch.backoff.ms
	SocketTimeout    time.Duration // replica.socket.timeout.ms
	Fetchers         int           // num.replica.fetchers, per leader broker
}

// Clustered reports whether the node is a member of a cluster's quorum
// (controller.quorum.voters, or controller.quorum.bootstrap.servers).
// Otherwise it is a single node, its own quorum, without a controller
// listener.
func (b *Broker) Clustered() bool { return len(b.QuorumVoters) > 0 || len(b.QuorumBootstrap) > 0 }

// setCluster fills the cluster fields that do not depend on listeners and
// checks the rules between them: process.roles against
// controller.quorum.voters, the heartbeat against the session, and the
// replica fetch wait against the socket timeout and the ISR lag.
func (b *Broker) setCluster(g getter) error {
	voters, err := parseVoters(g.str("controller.quorum.voters"))
	if err != nil {
		panic("config: unvalidated controller.quorum.voters") // checked by validVoters
	}
	b.QuorumVoters = voters
	b.ProcessRoles = splitList(g.str("process.roles"))
	b.ControllerListenerName = splitList(g.str("controller.listener.names"))[0] // validListenerNames: not empty
	if len(voters) == 0 {
		if err := b.setQuorumBootstrap(g); err != nil {
			return err
		}
	}
	b.BrokerRack = g.str("broker.rack")
	b.BrokerSessionTimeout = msDuration(g.i64("broker.session.timeout.ms"))
	b.BrokerHeartbeatInterval = msDuration(g.i64("broker.heartbeat.interval.ms"))
	b.AutoLeaderRebalance = g.flag("auto.leader.rebalance.enable")
	b.LeaderImbalanceCheckInterval = secondsDuration(g.i64("leader.imbalance.check.interval.seconds"))
	b.LeaderImbalancePercentage = g.i32("leader.imbalance.per.broker.percentage")
	b.UncleanLeaderElection = g.flag("unclean.leader.election.enable")
	b.ReplicaFetch = ReplicaFetch{
		MaxBytes:         g.i32("replica.fetch.max.bytes"),
		ResponseMaxBytes: g.i32("replica.fetch.response.max.bytes"),
		MinBytes:         g.i32("replica.fetch.min.bytes"),
		MaxWait:          msDuration(g.i64("replica.fetch.wait.max.ms")),
		Backoff:          msDuration(g.i64("replica.fetch.backoff.ms")),
		Fetchers:         int(g.i32("num.replica.fetchers")),
		SocketTimeout:    msDuration(g.i64("replica.socket.timeout.ms")),
	}
	if err := b.checkRoles(g); err != nil {
		return err
	}
	return b.checkTimeouts(g)
}

// checkRoles checks process.roles against controller.quorum.voters: with
// voters, a voter is a controller; a controller outside them joins as a
// non-voter until AddRaftVoter (kafka-metadata-quorum add-controller)
// makes it a voter; without voters, a node is its own controller.
func (b *Broker) checkRoles(g getter) error {
	roles := g.str("process.roles")
	controller := slices.Contains(b.ProcessRoles, RoleController)
	if !b.Clustered() {
		if !controller {
			return &Error{Key: "process.roles", Value: roles,
				Msg: "has no controller while controller.quorum.voters and controller.quorum.bootstrap.servers are empty: a broker-only node needs one of them to find its controllers; set controller.quorum.bootstrap.servers (host:port of the controllers) or controller.quorum.voters, or process.roles=broker,controller for a single node"}
		}
		return nil
	}
	addr, voter := b.QuorumVoters[b.NodeID]
	switch {
	case !controller && voter:
		return &Error{Key: "process.roles", Value: roles,
			Msg: fmt.Sprintf("has no controller, but node.id %d is a voter in controller.quorum.voters (%d@%s); set process.roles=broker,controller, or remove %d from controller.quorum.voters",
				b.NodeID, b.NodeID, addr, b.NodeID)}
	}
	return nil
}

// checkTimeouts checks the rules between the cluster's timeouts. The
// replica fetch rules are Kafka's (KafkaConfig.validateValues); the
// heartbeat rule is Strata's: Kafka only logs it.
func (b *Broker) checkTimeouts(g getter) error {
	switch {
	case b.BrokerHeartbeatInterval >= b.BrokerSessionTimeout:
		return &Error{Key: "broker.heartbeat.interval.ms", Value: g.str("broker.heartbeat.interval.ms"),
			Msg: fmt.Sprintf("must be less than broker.session.timeout.ms (%s), or the controller fences this broker between two heartbeats; lower it or raise broker.session.timeout.ms",
				g.str("broker.session.timeout.ms"))}
	case b.ReplicaFetch.MaxWait > b.ReplicaFetch.SocketTimeout:
		return &Error{Key: "replica.fetch.wait.max.ms", Value: g.str("replica.fetch.wait.max.ms"),
			Msg: fmt.Sprintf("must be at most replica.socket.timeout.ms (%s), or a fetch that waits its full time times out; lower it or raise replica.socket.timeout.ms",
				g.str("replica.socket.timeout.ms"))}
	case b.ReplicaFetch.MaxWait > b.ReplicaLagTimeMax:
		return &Error{Key: "replica.fetch.wait.max.ms", Value: g.str("replica.fetch.wait.max.ms"),
			Msg: fmt.Sprintf("must be at most replica.lag.time.max.ms (%s), or followers of idle partitions leave the ISR while their fetches wait; lower it or raise replica.lag.time.max.ms",
				g.str("replica.lag.time.max.ms"))}
	}
	return nil
}

// cutControllerListener takes the controller listener out of b.Listeners,
// which keeps the Kafka listeners only, into b.ControllerListener. Without
// voters no listener may be a controller listener. The controller listener
// is PLAINTEXT, whether listener.security.protocol.map names it or not (as
// Kafka 3.x does for controller listeners), so setListeners does not look it
// up there.
func (b *Broker) cutControllerListener(g getter, protocols map[string]string) error {
	names := splitList(g.str("controller.listener.names"))
	listeners := g.str("listeners")
	if !b.Clustered() {
		if i := slices.IndexFunc(b.Listeners, func(l Listener) bool { return slices.Contains(names, l.Name) }); i >= 0 {
			return &Error{Key: "listeners", Value: listeners,
				Msg: fmt.Sprintf("%s is the controller listener (controller.listener.names), which only a cluster uses; set controller.quorum.voters or controller.quorum.bootstrap.servers, or remove it from listeners", b.Listeners[i].Name)}
		}
		return nil
	}
	name := b.ControllerListenerName
	for _, l := range b.Listeners {
		if l.Name != name && slices.Contains(names, l.Name) {
			return &Error{Key: "listeners", Value: listeners,
				Msg: fmt.Sprintf("%s is a controller listener name (controller.listener.names) after %s, and Strata uses only the first; remove it from listeners or from controller.listener.names", l.Name, name)}
		}
	}
	i := slices.IndexFunc(b.Listeners, func(l Listener) bool { return l.Name == name })
	if i < 0 {
		return &Error{Key: "listeners", Value: listeners,
			Msg: fmt.Sprintf("has no listener %s, the controller listener (controller.listener.names) that every member of a cluster (controller.quorum.voters or controller.quorum.bootstrap.servers) needs for Raft and forwarding; add one, e.g. %s://<host>:9093", name, name)}
	}
	if p, ok := protocols[name]; ok && p != ProtocolPlaintext {
		return &Error{Key: "listener.security.protocol.map", Value: g.str("listener.security.protocol.map"),
			Msg: fmt.Sprintf("maps the controller listener %s to %s, but the controller listener (Raft and forwarding) supports PLAINTEXT only; map %s:PLAINTEXT or remove its entry", name, p, name)}
	}
	b.ControllerListener = b.Listeners[i]
	b.ControllerListener.Protocol = ProtocolPlaintext
	b.Listeners = slices.Delete(b.Listeners, i, i+1)
	if len(b.Listeners) == 0 {
		return &Error{Key: "listeners", Value: listeners,
			Msg: fmt.Sprintf("has only the controller listener %s, which serves no client; add a listener for clients and other brokers, e.g. PLAINTEXT://<host>:9092", name)}
	}
	return nil
}

// cutControllerAdvertised takes the controller listener's entry out of
// b.AdvertisedListeners and returns it; ok is false when there is none or
// the node is not clustered.
func (b *Broker) cutControllerAdvertised() (adv Listener, ok bool) {
	if !b.Clustered() {
		return Listener{}, false
	}
	i := slices.IndexFunc(b.AdvertisedListeners, func(l Listener) bool { return l.Name == b.ControllerListenerName })
	if i < 0 {
		return Listener{}, false
	}
	adv = b.AdvertisedListeners[i]
	b.AdvertisedListeners = slices.Delete(b.AdvertisedListeners, i, i+1)
	return adv, true
}

// setControllerAdvertised sets b.ControllerAdvertised from adv, the
// controller listener's entry in advertised.listeners if ok. A voter
// advertises its entry in controller.quorum.voters, which adv must then
// equal; a non-voter advertises adv, else its controller listener, which
// must be an address another node can dial and no voter's.
func (b *Broker) setControllerAdvertised(g getter, adv Listener, ok bool) error {
	if !b.Clustered() {
		return nil
	}
	advertised := g.str("advertised.listeners")
	if ok && !specificHost(adv.Host) {
		return &Error{Key: "advertised.listeners", Value: advertised, Msg: "must name a host that other nodes can reach, not " + adv.String()}
	}
	if addr, voter := b.QuorumVoters[b.NodeID]; voter {
		if ok && base.CanonicalAddr(adv.Addr()) != base.CanonicalAddr(addr) {
			return &Error{Key: "advertised.listeners", Value: advertised,
				Msg: fmt.Sprintf("advertises the controller listener as %s, but node.id %d is the voter %d@%s in controller.quorum.voters; make them equal, or drop %s from advertised.listeners",
					adv.Addr(), b.NodeID, b.NodeID, addr, adv.Name)}
		}
		b.ControllerAdvertised = addr
		return nil
	}
	a, from := b.ControllerListener, "listeners"
	if ok {
		a, from = adv, "advertised.listeners"
	}
	if !specificHost(a.Host) || a.Port == 0 {
		return &Error{Key: "advertised.listeners", Value: advertised,
			Msg: fmt.Sprintf("must give the address other nodes dial for the controller listener of node.id %d, a non-voter: %s in %s is none (it needs a specific host and a port other than 0); add %s://<host>:<port>",
				b.NodeID, a, from, a.Name)}
	}
	for _, id := range slices.Sorted(maps.Keys(b.QuorumVoters)) {
		if addr := b.QuorumVoters[id]; base.CanonicalAddr(addr) == base.CanonicalAddr(a.Addr()) {
			return &Error{Key: "advertised.listeners", Value: advertised,
				Msg: fmt.Sprintf("must give node.id %d, a non-voter, its own controller address: %s is voter %d's in controller.quorum.voters; add %s://<host>:<port>",
					b.NodeID, a.Addr(), id, a.Name)}
		}
	}
	b.ControllerAdvertised = a.Addr()
	return nil
}

// setInterBrokerListener sets b.InterBrokerListener: inter.broker.listener.name,
// which must name one of b.Listeners, or the listener named after
// security.inter.broker.protocol (Kafka's older key; one of the two at
// most), or else the first of them.
func (b *Broker) setInterBrokerListener(g getter) error {
	v, ok := g("inter.broker.listener.name")
	protocol, byProtocol := g("security.inter.broker.protocol")
	switch {
	case ok && byProtocol:
		return &Error{Key: "security.inter.broker.protocol", Value: protocol,
			Msg: "and inter.broker.listener.name are both set; set only one of them (Kafka refuses both too)"}
	case byProtocol:
		v, ok = protocol, true
	case !ok:
		b.InterBrokerListener = b.Listeners[0].Name
		return nil
	}
	if slices.ContainsFunc(b.Listeners, func(l Listener) bool { return l.Name == v }) {
		b.InterBrokerListener = v
		return nil
	}
	names := make([]string, len(b.Listeners))
	for i, l := range b.Listeners {
		names[i] = l.Name
	}
	why := "is not a listener of listeners"
	if b.Clustered() && v == b.ControllerListenerName {
		why = "is the controller listener (controller.listener.names), which brokers do not use for each other"
	}
	key := "inter.broker.listener.name"
	if byProtocol {
		key, why = "security.inter.broker.protocol", "names no listener of listeners (the inter-broker listener is the one named after the protocol)"
	}
	return &Error{Key: key, Value: v,
		Msg: fmt.Sprintf("%s; name one of: %s", why, strings.Join(names, ", "))}
}

// parseVoters parses controller.quorum.voters, "id@host:port,...", into node
// id → host:port; "" is nil. Ids are distinct and at least 0; hosts are
// specific (not empty or a wildcard) and ports in [1, 65535], so that each
// address is one another node can dial; addresses are distinct.
func parseVoters(v string) (map[int32]string, error) {
	const form = "must be a comma-separated list of id@host:port, e.g. 1@ctrl-1:9093,2@ctrl-2:9093,3@ctrl-3:9093"
	items := splitList(v)
	if len(items) == 0 {
		return nil, nil
	}
	voters := make(map[int32]string, len(items))
	byAddr := make(map[string]int32, len(items))
	for _, it := range items {
		if it == "" {
			return nil, errors.New(form + ", without empty elements")
		}
		ids, addr, ok := strings.Cut(it, "@")
		id, err := strconv.ParseInt(ids, 10, 32)
		if !ok || err != nil {
			return nil, fmt.Errorf("%s; %q is not", form, it)
		}
		host, p, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("%s; %q is not", form, it)
		}
		port, err := strconv.Atoi(p)
		switch {
		case id < 0:
			return nil, fmt.Errorf("must give node ids of at least 0, not %s", it)
		case voters[int32(id)] != "":
			return nil, fmt.Errorf("must name each voter once: node %d is given twice", id)
		case !specificHost(host):
			return nil, fmt.Errorf("must give each voter a host that other nodes can dial, not an empty or wildcard one: %s", it)
		case err != nil || port < 1 || port > 65535:
			return nil, fmt.Errorf("must give each voter a port between 1 and 65535: %s", it)
		}
		a := net.JoinHostPort(host, strconv.Itoa(port))
		if other, dup := byAddr[base.CanonicalAddr(a)]; dup {
			return nil, fmt.Errorf("must give each voter its own address: nodes %d and %d are both at %s", other, id, a)
		}
		voters[int32(id)], byAddr[base.CanonicalAddr(a)] = a, int32(id)
	}
	return voters, nil
}

func validVoters(v string) error {
	_, err := parseVoters(v)
	return err
}

// validRoles allows process.roles with broker: Strata has no controller-only
// nodes.
func validRoles(v string) error {
	if err := listOf(RoleBroker, RoleController)(v); err != nil {
		return err
	}
	if !slices.Contains(splitList(v), RoleBroker) {
		return errors.New("must include broker: Strata has no controller-only nodes; every node is a broker")
	}
	return nil
}

// validListenerNames allows a non-empty list of distinct upper-case
// listener names, as listeners requires of its names.
func validListenerNames(v string) error {
	items := splitList(v)
	bad := errors.New("must be a comma-separated list of distinct upper-case listener names, e.g. CONTROLLER")
	if len(items) == 0 {
		return bad
	}
	seen := make(map[string]bool, len(items))
	for _, it := range items {
		if it == "" || it != strings.ToUpper(it) || strings.ContainsAny(it, ":/ ") || seen[it] {
			return bad
		}
		seen[it] = true
	}
	return nil
}

// validRack allows a rack the metadata quorum registers: UTF-8 of at most
// maxRackBytes bytes.
func validRack(v string) error {
	if len(v) > maxRackBytes || !utf8.ValidString(v) {
		return fmt.Errorf("must be UTF-8 of at most %d bytes", maxRackBytes)
	}
	return nil
}

// specificHost reports whether host names one machine: not empty (every
// interface) and not a wildcard address (0.0.0.0, ::).
func specificHost(host string) bool {
	if host == "" {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsUnspecified()
}

// RackAwareReplicaSelector is the one replica.selector.class Strata
// serves: Kafka's rack-aware selector, by its class name (KIP-392).
const RackAwareReplicaSelector = "org.apache.kafka.common.replica.RackAwareReplicaSelector"

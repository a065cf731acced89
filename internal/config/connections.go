package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// connectionDefs are Kafka's socket and connection limits, applied by every
// listener's server.
var connectionDefs = []Def{
	def("socket.send.buffer.bytes", Int, "-1", "", atLeast(-1),
		"SO_SNDBUF of every connection a listener accepts, in bytes; -1 leaves it to the OS, which grows it as the connection needs (Kafka's default is 102400, which turns that growth off)."),
	def("socket.receive.buffer.bytes", Int, "-1", "", atLeast(-1),
		"SO_RCVBUF of every connection a listener accepts, in bytes; -1 leaves it to the OS, which grows it as the connection needs (Kafka's default is 102400, which turns that growth off)."),
	def("connections.max.idle.ms", Long, "600000", "", atLeast(1),
		"A connection that has sent nothing and has no request in flight for this long is closed; clients connect again when they need to."),
	def(maxConnectionsKey, Int, strconv.Itoa(math.MaxInt32), "", atLeast(1),
		"Most connections open at once over every listener; dynamic. At the limit the listeners stop accepting until one closes, except the inter-broker listener (inter.broker.listener.name) of a broker with several listeners, which still accepts, as in Kafka. At least 1 (Kafka allows 0)."),
	def("max.connections.per.ip", Int, strconv.Itoa(math.MaxInt32), "", atLeast(0),
		"Most connections open at once from one IP address, over every listener; dynamic. A connection over it is closed as soon as it is accepted. 0 needs max.connections.per.ip.overrides, the only addresses then allowed."),
	def(maxCreationRateKey, Int, strconv.Itoa(math.MaxInt32), "", atLeast(1),
		"New connections a second, over every listener but the inter-broker one (KIP-612); dynamic. A quiet broker admits a burst of the connections quota.window.num - 1 windows of quota.window.size.seconds allow at the rate; past it, the listeners accept each new connection when its turn comes (the kernel's backlog holds the others), as Kafka's acceptor throttles. At least 1 (Kafka allows 0)."),
	def("max.connections.per.ip.overrides", String, "", "", validPerIPOverrides,
		"Comma-separated host:count pairs whose count replaces max.connections.per.ip for that host, e.g. 127.0.0.1:200,app-1.example.com:100 (an IPv6 address is written without brackets: ::1:50). A host name is resolved when the value takes effect (at start, or when set dynamically); a count of 0 refuses every connection from that host."),
}

// The connection limit keys a listener may also have its own of
// (listener.name.<listener>.<key>).
const (
	maxConnectionsKey  = "max.connections"
	maxCreationRateKey = "max.connection.creation.rate"
)

// Connections are the connection settings of every listener.
type Connections struct {
	SendBufferBytes    int           // socket.send.buffer.bytes; -1: the OS's
	ReceiveBufferBytes int           // socket.receive.buffer.bytes; -1: the OS's
	MaxIdle            time.Duration // connections.max.idle.ms
	// ConnectionLimits are the static limits; the dynamic configs may
	// replace them at run time (Broker.ConnectionLimits).
	ConnectionLimits
}

// ConnectionLimits are the limits on open connections, dynamic broker
// configs as in Kafka (KIP-226).
type ConnectionLimits struct {
	Max             int // max.connections
	MaxPerIP        int // max.connections.per.ip
	MaxCreationRate int // max.connection.creation.rate, a second
	// PerIPOverrides is max.connections.per.ip.overrides: host (an IP
	// address or a name to resolve) → count, in the order given.
	PerIPOverrides []HostLimit
	// PerListener are the listener-level limits, by listener name, of the
	// listeners that have one (listener.name.<listener>.max.connections,
	// ....max.connection.creation.rate).
	PerListener map[string]ListenerLimits
}

// ListenerLimits are one listener's own connection limits; 0: none.
type ListenerLimits struct {
	Max             int
	MaxCreationRate int
}

// HostLimit is one entry of max.connections.per.ip.overrides.
type HostLimit struct {
	Host  string
	Count int
}

// connectionLimitKeys are the dynamic connection limits.
var connectionLimitKeys = []string{"max.connections", "max.connections.per.ip", "max.connections.per.ip.overrides", "max.connection.creation.rate"}

// ConnectionLimits are b's connection limits with its dynamic configs. The
// error is Kafka's rule between the per-IP keys, which a set of dynamic
// configs may break where each value is valid alone, or a dynamic
// listener-level limit naming a listener b does not have.
func (b *Broker) ConnectionLimits() (ConnectionLimits, error) {
	c, err := connectionLimits(b.value)
	c.PerListener = b.listenerLimits()
	if err == nil {
		err = b.checkDynamicListenerLimits()
	}
	return c, err
}

// listenerLimits reads the listener-level limits through the dynamic
// layers (this broker's, the cluster-wide, then the static configs); nil
// when no listener has one.
func (b *Broker) listenerLimits() map[string]ListenerLimits {
	var out map[string]ListenerLimits
	l := layersOf(b)
	for _, lis := range b.Listeners {
		o := overridesOf(b, lis)
		var ll ListenerLimits
		if v, _, ok := brokerValue(l, o.key(maxConnectionsKey)); ok {
			ll.Max = int(mustInt(v))
		}
		if v, _, ok := brokerValue(l, o.key(maxCreationRateKey)); ok {
			ll.MaxCreationRate = int(mustInt(v))
		}
		if ll != (ListenerLimits{}) {
			if out == nil {
				out = make(map[string]ListenerLimits)
			}
			out[lis.Name] = ll
		}
	}
	return out
}

// checkDynamicListenerLimits refuses a dynamic listener-level limit that
// names a listener b does not have, which would limit nothing (the static
// ones were checked at start: checkListenerTLS).
func (b *Broker) checkDynamicListenerLimits() error {
	return b.checkDynamicListenerKeys(listenerConnKeys)
}

// connectionLimits reads the limits from validated values and checks Kafka's
// rule between the per-IP keys: a default of 0 refuses everyone unless some
// host is allowed.
func connectionLimits(value func(key string) string) (ConnectionLimits, error) {
	overrides, err := parsePerIPOverrides(value("max.connections.per.ip.overrides"))
	if err != nil {
		panic("config: unvalidated max.connections.per.ip.overrides") // checked by validPerIPOverrides
	}
	c := ConnectionLimits{
		Max:             int(mustInt(value("max.connections"))),
		MaxPerIP:        int(mustInt(value("max.connections.per.ip"))),
		MaxCreationRate: int(mustInt(value("max.connection.creation.rate"))),
		PerIPOverrides:  overrides,
	}
	if c.MaxPerIP == 0 && len(overrides) == 0 {
		return c, &Error{Key: "max.connections.per.ip", Value: "0",
			Msg: "refuses every connection unless max.connections.per.ip.overrides allows some hosts; set it above 0, or list the allowed hosts in max.connections.per.ip.overrides"}
	}
	return c, nil
}

// setConnections fills b.Connections with the static values and checks
// the rules between keys.
func (b *Broker) setConnections(g getter) error {
	limits, err := connectionLimits(g.str)
	if err != nil {
		return err
	}
	limits.PerListener = b.listenerLimits()
	b.Connections = Connections{
		SendBufferBytes:    int(g.i32("socket.send.buffer.bytes")),
		ReceiveBufferBytes: int(g.i32("socket.receive.buffer.bytes")),
		MaxIdle:            msDuration(g.i64("connections.max.idle.ms")),
		ConnectionLimits:   limits,
	}
	if b.FailedAuthenticationDelay >= b.Connections.MaxIdle {
		return &Error{Key: "connection.failed.authentication.delay.ms", Value: g.str("connection.failed.authentication.delay.ms"),
			Msg: fmt.Sprintf("must be less than connections.max.idle.ms (%s), or the connection is closed as idle while its failed authentication is held back; lower it or raise connections.max.idle.ms",
				g.str("connections.max.idle.ms"))}
	}
	return nil
}

func validPerIPOverrides(v string) error {
	_, err := parsePerIPOverrides(v)
	return err
}

// parsePerIPOverrides parses "host:count,host:count". The count follows the
// last colon, so an IPv6 address needs no brackets (Kafka's form); brackets
// are accepted too. Hosts are distinct.
func parsePerIPOverrides(v string) ([]HostLimit, error) {
	const form = "must be a comma-separated list of host:count, e.g. 127.0.0.1:200,app-1.example.com:100"
	items := splitList(v)
	out := make([]HostLimit, 0, len(items))
	seen := make(map[string]bool, len(items))
	for _, it := range items {
		i := strings.LastIndexByte(it, ':')
		if i <= 0 {
			return nil, errors.New(form)
		}
		host := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(it[:i], "["), "]"))
		n, err := strconv.ParseInt(strings.TrimSpace(it[i+1:]), 10, 32)
		if err != nil || n < 0 || host == "" {
			return nil, errors.New(form + ", each count at least 0")
		}
		key := strings.ToLower(host)
		if seen[key] {
			return nil, fmt.Errorf("%s; %s is listed twice", form, host)
		}
		seen[key] = true
		out = append(out, HostLimit{Host: host, Count: int(n)})
	}
	return out, nil
}

package metadata

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"unicode/utf8"
)

// Limits on a broker registration.
const (
	// maxBrokerEndpoints bounds the listeners one broker registers.
	maxBrokerEndpoints = 64
	// maxRackLen bounds broker.rack.
	maxRackLen = 255
	// maxListenerNameLen bounds a listener name (Kafka leaves it unbounded;
	// this keeps one registration small).
	maxListenerNameLen = 255
)

// NoLeader is the Leader of a partition that has none (Kafka's -1): its only
// in-sync replica is fenced.
const NoLeader int32 = -1

// securityProtocols are the protocols an endpoint may name (Kafka's
// SecurityProtocol).
var securityProtocols = []string{"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"}

// Broker is one registered broker, as Kafka's BrokerRegistrationRecord plus
// its fencing state. Immutable once part of a published Image.
//
// Invariants: ID ≥ 0; Epoch is the Raft index of the command that
// registered this incarnation (Kafka's broker epoch), so a re-registration
// always gets a larger one; Endpoints pass validateEndpoints.
type Broker struct {
	ID int32 `json:"id"`
	// Incarnation is drawn by the broker process at start: a registration
	// with a new incarnation replaces the old one (a restart), the same
	// incarnation again is a retry.
	Incarnation [16]byte `json:"incarnation"`
	// LogDir identifies the broker's log directory (drawn when the
	// directory was made, kept in it); zero when unknown. A registration
	// with another one means the broker lost its partitions' logs.
	LogDir    [16]byte   `json:"log_dir,omitzero"`
	Epoch     int64      `json:"epoch"`
	Endpoints []Endpoint `json:"endpoints"`
	Rack      string     `json:"rack,omitempty"`
	// LostLogs: this broker came back with another log directory than it
	// had (and kept it since): its replicas started over empty. An
	// UNCLEAN election passes it over for a live replica that may hold
	// more (uncleanElection).
	LostLogs bool `json:"lost_logs,omitempty"`
	// Fenced brokers lead nothing and join no ISR. A broker registers
	// fenced and is unfenced once it has caught up with the metadata log.
	Fenced bool `json:"fenced"`
	// ProducerIDsEnd is the end (exclusive) of the latest block of
	// producer ids this broker was given (AllocateProducerIDs); 0: none.
	ProducerIDsEnd int64 `json:"producer_ids_end,omitempty"`
}

// Endpoint is one listener of a broker, as clients reach it.
type Endpoint struct {
	Listener         string `json:"listener"`
	Host             string `json:"host"`
	Port             int32  `json:"port"`
	SecurityProtocol string `json:"security_protocol"`
}

// Endpoint returns the endpoint of listener, if b has it.
func (b *Broker) Endpoint(listener string) (Endpoint, bool) {
	for _, e := range b.Endpoints {
		if e.Listener == listener {
			return e, true
		}
	}
	return Endpoint{}, false
}

// Address is the endpoint's host:port.
func (e Endpoint) Address() string {
	return net.JoinHostPort(e.Host, fmt.Sprint(e.Port))
}

// Eligible reports whether broker id may lead or join an ISR in img: it is
// registered and not fenced. An image without registrations (a single node
// that never registered) treats every broker as eligible.
func (img *Image) Eligible(id int32) bool {
	if len(img.Brokers) == 0 {
		return true
	}
	b, ok := img.Brokers[id]
	return ok && !b.Fenced
}

// UnfencedBrokers lists the ids of registered, unfenced brokers, ascending.
func (img *Image) UnfencedBrokers() []int32 {
	ids := make([]int32, 0, len(img.Brokers))
	for id, b := range img.Brokers {
		if !b.Fenced {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

func validateBroker(b *Broker) error {
	if b.ID < 0 {
		return fmt.Errorf("%w: broker id %d", ErrInvalidBrokerRegistration, b.ID)
	}
	if len(b.Rack) > maxRackLen || !utf8.ValidString(b.Rack) {
		return fmt.Errorf("%w: broker %d: rack is not UTF-8 of at most %d bytes", ErrInvalidBrokerRegistration, b.ID, maxRackLen)
	}
	if err := validateEndpoints(b.Endpoints); err != nil {
		return fmt.Errorf("%w: broker %d: %v", ErrInvalidBrokerRegistration, b.ID, err)
	}
	return nil
}

func validateEndpoints(eps []Endpoint) error {
	if len(eps) == 0 || len(eps) > maxBrokerEndpoints {
		return fmt.Errorf("%d endpoints, want 1..%d", len(eps), maxBrokerEndpoints)
	}
	for i, e := range eps {
		switch {
		case e.Listener == "" || len(e.Listener) > maxListenerNameLen || !utf8.ValidString(e.Listener):
			return fmt.Errorf("endpoint %d: listener name %q", i, e.Listener)
		case e.Host == "" || strings.ContainsAny(e.Host, " \t\r\n") || !utf8.ValidString(e.Host):
			return fmt.Errorf("listener %s: host %q", e.Listener, e.Host)
		case e.Port < 1 || e.Port > 65535:
			return fmt.Errorf("listener %s: port %d, want 1..65535", e.Listener, e.Port)
		case !slices.Contains(securityProtocols, e.SecurityProtocol):
			return fmt.Errorf("listener %s: security protocol %q, want one of %s",
				e.Listener, e.SecurityProtocol, strings.Join(securityProtocols, ", "))
		}
		for _, prev := range eps[:i] {
			if prev.Listener == e.Listener {
				return fmt.Errorf("listener %s registered twice", e.Listener)
			}
		}
	}
	return nil
}

// withBroker returns a copy of img stamped with version with b added or
// replaced, copying the broker map.
func (img *Image) withBroker(b *Broker, version uint64) *Image {
	next := img.with(version)
	next.Brokers = copyMap(img.Brokers, 1)
	next.Brokers[b.ID] = b
	return next
}

// encodeBrokers lists img's brokers ascending by id, for a snapshot.
func encodeBrokers(img *Image) []*Broker {
	out := make([]*Broker, 0, len(img.Brokers))
	for _, b := range img.Brokers {
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b *Broker) int { return int(a.ID) - int(b.ID) })
	return out
}

// restoreBrokers puts a snapshot's brokers into img, validating each.
func restoreBrokers(img *Image, brokers []*Broker) error {
	for _, b := range brokers {
		if b == nil {
			return fmt.Errorf("%w: snapshot holds a null broker", ErrInvalidCommand)
		}
		if err := validateBroker(b); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		if _, dup := img.Brokers[b.ID]; dup {
			return fmt.Errorf("snapshot: %w: broker %d twice", ErrInvalidBrokerRegistration, b.ID)
		}
		img.Brokers[b.ID] = b
	}
	return nil
}

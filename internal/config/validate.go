package config

import (
	"errors"
	"fmt"
	"math"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// checkType reports whether v parses as a value of type t, the way Kafka's
// ConfigDef parses it (values are already trimmed).
func checkType(t Type, v string) error {
	switch t {
	case Boolean:
		if _, err := parseBool(v); err != nil {
			return err
		}
	case Int:
		if _, err := strconv.ParseInt(v, 10, 32); err != nil {
			return errors.New("must be a 32-bit integer")
		}
	case Short:
		if _, err := strconv.ParseInt(v, 10, 16); err != nil {
			return errors.New("must be a 16-bit integer")
		}
	case Long:
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return errors.New("must be a 64-bit integer")
		}
	case Double:
		if _, err := parseDouble(v); err != nil {
			return err
		}
	case String, List, Class, Password:
	default:
		panic(fmt.Sprintf("config: unknown type %d", t))
	}
	return nil
}

// parseBool accepts true and false in any case, as Kafka does.
func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, errors.New("must be true or false")
}

func parseDouble(v string) (float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, errors.New("must be a finite number")
	}
	return f, nil
}

// splitList splits a LIST value on commas and trims each element. An empty
// value is an empty list, as in Kafka.
func splitList(v string) []string {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	parts := strings.Split(v, ",")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts
}

// atLeast allows integers >= lo.
func atLeast(lo int64) func(string) error {
	return func(v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < lo {
			return fmt.Errorf("must be at least %d", lo)
		}
		return nil
	}
}

// between allows integers in [lo, hi].
func between(lo, hi int64) func(string) error {
	return func(v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("must be between %d and %d", lo, hi)
		}
		return nil
	}
}

// ratio allows numbers in [lo, hi].
func ratio(lo, hi float64) func(string) error {
	return func(v string) error {
		f, err := parseDouble(v)
		if err != nil || f < lo || f > hi {
			return fmt.Errorf("must be a number between %g and %g", lo, hi)
		}
		return nil
	}
}

// oneOf allows exactly one of the given strings (case-sensitive, as Kafka's
// ValidString).
func oneOf(allowed ...string) func(string) error {
	return func(v string) error {
		for _, a := range allowed {
			if v == a {
				return nil
			}
		}
		return fmt.Errorf("must be one of: %s", strings.Join(allowed, ", "))
	}
}

// listOf allows a non-empty comma-separated list of distinct allowed strings.
func listOf(allowed ...string) func(string) error {
	one := oneOf(allowed...)
	return func(v string) error {
		items := splitList(v)
		bad := fmt.Errorf("must be a comma-separated list of: %s", strings.Join(allowed, ", "))
		if len(items) == 0 {
			return bad
		}
		seen := make(map[string]bool, len(items))
		for _, it := range items {
			if one(it) != nil || seen[it] {
				return bad
			}
			seen[it] = true
		}
		return nil
	}
}

// nonEmpty allows any string except the empty one.
func nonEmpty(v string) error {
	if v == "" {
		return errors.New("must not be empty")
	}
	return nil
}

// nonEmptyList allows a list with at least one non-empty element and no empty
// ones.
func nonEmptyList(v string) error {
	items := splitList(v)
	if len(items) == 0 {
		return errors.New("must be a non-empty comma-separated list")
	}
	for _, it := range items {
		if it == "" {
			return errors.New("must be a comma-separated list without empty elements")
		}
	}
	return nil
}

// Listener is one parsed entry of listeners or advertised.listeners.
type Listener struct {
	Name     string // e.g. PLAINTEXT, SASL_SSL, INTERNAL
	Host     string // "" means every interface
	Port     int
	Protocol string // from listener.security.protocol.map: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL
}

// Addr is host:port, ready for net.Listen or a client.
func (l Listener) Addr() string { return net.JoinHostPort(l.Host, strconv.Itoa(l.Port)) }

func (l Listener) String() string { return l.Name + "://" + l.Addr() }

// parseListeners parses "NAME://host:port,NAME2://[::1]:port". Names must be
// distinct and upper case, as Kafka requires.
func parseListeners(v string) ([]Listener, error) {
	const form = "must be a comma-separated list of NAME://host:port, e.g. PLAINTEXT://127.0.0.1:9092"
	items := splitList(v)
	if len(items) == 0 {
		return nil, errors.New(form)
	}
	out := make([]Listener, 0, len(items))
	seen := make(map[string]bool, len(items))
	for _, it := range items {
		name, addr, ok := strings.Cut(it, "://")
		if !ok || name == "" || name != strings.ToUpper(name) || seen[name] {
			return nil, errors.New(form + ", with distinct upper-case names")
		}
		port, host, err := parseHostPort(addr)
		if err != nil {
			return nil, errors.New(form)
		}
		seen[name] = true
		out = append(out, Listener{Name: name, Host: host, Port: port})
	}
	return out, nil
}

// parseHostPort splits host:port with a port in [0, 65535].
func parseHostPort(addr string) (port int, host string, err error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, "", err
	}
	port, err = strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return 0, "", errors.New("bad port")
	}
	return port, host, nil
}

// optionalHostPort allows "" (off) or host:port.
func optionalHostPort(v string) error {
	if v == "" {
		return nil
	}
	if _, _, err := parseHostPort(v); err != nil {
		return errors.New(`must be host:port, e.g. 127.0.0.1:9644, or "" for off`)
	}
	return nil
}

// validEndpointIdentification allows Kafka's values of
// ssl.endpoint.identification.algorithm: https, in any case, or empty.
func validEndpointIdentification(v string) error {
	if v == "" || strings.EqualFold(v, "https") {
		return nil
	}
	return errors.New("must be https (check the host name) or empty (do not)")
}

// gzipLevel allows Deflater's levels: -1 (its default) or 1 to 9.
func gzipLevel(v string) error {
	if n, err := strconv.ParseInt(v, 10, 32); err == nil && (n == -1 || n >= 1 && n <= 9) {
		return nil
	}
	return errors.New("must be -1 (the default level) or between 1 and 9")
}

// kafkaVersion is a Kafka release or metadata version as Kafka 3 parses
// message.format.version: 0.10.2, 2.8, 3.0-IV1.
var kafkaVersion = regexp.MustCompile(`^[0-9]+\.[0-9]+(\.[0-9]+)?(-IV[0-9]+)?$`)

func validKafkaVersion(v string) error {
	if kafkaVersion.MatchString(v) {
		return nil
	}
	return errors.New("must be a Kafka version, e.g. 2.8 or 3.0-IV1")
}

// groupProtocols is group.coordinator.rebalance.protocols: Kafka's rule
// (known protocols, classic kept), and Strata's: no share or streams
// groups, which it does not serve.
func groupProtocols(v string) error {
	if err := listOf("classic", "consumer", "share", "streams")(v); err != nil {
		return err
	}
	items := splitList(v)
	if !slices.Contains(items, "classic") {
		return errors.New("must include classic: disabling the classic protocol is not supported (as in Kafka)")
	}
	if slices.Contains(items, "streams") {
		return errors.New("names streams, and Strata has no streams groups; remove it (classic, consumer and share are served)")
	}
	return nil
}

package clientmetrics

import (
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Selector is a client property that a match pattern tests. The zero
// value is invalid.
type Selector uint8

// The selectors of Kafka's ClientMetricsConfigs.ALLOWED_MATCH_PARAMS.
const (
	SelectorClientInstanceID Selector = iota + 1
	SelectorClientID
	SelectorClientSoftwareName
	SelectorClientSoftwareVersion
	SelectorClientSourceAddress
	SelectorClientSourcePort
	selectorEnd // one past the last selector
)

var selectorNameTable = [selectorEnd]string{
	SelectorClientInstanceID:      "client_instance_id",
	SelectorClientID:              "client_id",
	SelectorClientSoftwareName:    "client_software_name",
	SelectorClientSoftwareVersion: "client_software_version",
	SelectorClientSourceAddress:   "client_source_address",
	SelectorClientSourcePort:      "client_source_port",
}

// String is the selector's name in a match pattern.
func (s Selector) String() string {
	if s == 0 || s >= selectorEnd {
		return fmt.Sprintf("selector(%d)", uint8(s))
	}
	return selectorNameTable[s]
}

func selectorNames() []string { return selectorNameTable[1:] }

func parseSelector(name string) (Selector, bool) {
	for s := SelectorClientInstanceID; s < selectorEnd; s++ {
		if selectorNameTable[s] == name {
			return s, true
		}
	}
	return 0, false
}

// unknownSoftware is what Kafka reports for a client that did not name its
// software (ClientInformation.UNKNOWN_NAME_OR_VERSION).
const unknownSoftware = "unknown"

// Selectors are what a broker knows of a client connection, as Kafka's
// ClientMetricsInstanceMetadata gathers them from the request context.
type Selectors struct {
	// ClientID is the request header's client id (null on the wire is "").
	ClientID string
	// SoftwareName and SoftwareVersion come from ApiVersions v3+. Empty
	// means the client did not send them; it matches as "unknown", as
	// Kafka's ClientInformation records it.
	SoftwareName    string
	SoftwareVersion string
	// Source is the client's address and port. The zero value means
	// unknown: then client_source_address and client_source_port patterns
	// never match, as Kafka does for a null attribute.
	Source netip.AddrPort
}

// value is the selector's value for a client with instance id id, and
// false when it is unknown.
func (s Selectors) value(sel Selector, id InstanceID) (string, bool) {
	switch sel {
	case SelectorClientInstanceID:
		return id.String(), true
	case SelectorClientID:
		return s.ClientID, true
	case SelectorClientSoftwareName:
		return orUnknown(s.SoftwareName), true
	case SelectorClientSoftwareVersion:
		return orUnknown(s.SoftwareVersion), true
	case SelectorClientSourceAddress:
		if !s.Source.Addr().IsValid() {
			return "", false
		}
		return javaHostAddress(s.Source.Addr()), true
	case SelectorClientSourcePort:
		if !s.Source.Addr().IsValid() {
			return "", false
		}
		return strconv.Itoa(int(s.Source.Port())), true
	}
	panic(fmt.Sprintf("clientmetrics: invalid selector %d", sel))
}

func orUnknown(s string) string {
	if s == "" {
		return unknownSoftware
	}
	return s
}

// javaHostAddress is Java's InetAddress.getHostAddress, which Kafka
// matches client_source_address against: dotted quad for IPv4 (an
// IPv4-mapped IPv6 address is IPv4 in Java), and for IPv6 all eight groups
// in lowercase hex without leading zeros and without "::" compression,
// then "%zone" for a scoped address.
func javaHostAddress(a netip.Addr) string {
	a = a.Unmap()
	if a.Is4() {
		return a.String()
	}
	b := a.As16()
	var sb strings.Builder
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			sb.WriteByte(':')
		}
		sb.WriteString(strconv.FormatUint(uint64(b[i])<<8|uint64(b[i+1]), 16))
	}
	if z := a.Zone(); z != "" {
		sb.WriteString("%" + z)
	}
	return sb.String()
}

// MatchPattern is one selector=regex pattern of a subscription's match
// list. The regex must match the whole selector value, as Java's
// Matcher.matches does.
type MatchPattern struct {
	Selector Selector
	Regex    string // as configured, trimmed
	full     *regexp.Regexp
}

// Matches reports whether the pattern matches the client.
func (p MatchPattern) Matches(id InstanceID, sel Selectors) bool {
	v, ok := sel.value(p.Selector, id)
	return ok && p.full.MatchString(v)
}

// Matches reports whether the subscription applies to the client: every
// match pattern matches, and a subscription without patterns applies to
// every client (Kafka's ClientMetricsInstanceMetadata.isMatch).
func (s Subscription) Matches(id InstanceID, sel Selectors) bool {
	for _, p := range s.Match {
		if !p.Matches(id, sel) {
			return false
		}
	}
	return true
}

// parseMatchPatterns is Kafka's ClientMetricsConfigs.parseMatchingPatterns.
// A later pattern for the same selector replaces an earlier one, as
// Kafka's HashMap does. The result is sorted by selector.
//
// Regexes are Go's RE2 syntax, not Java's java.util.regex. The common
// subset (classes, alternation, quantifiers, anchors, \Q..\E) means the
// same. Java-only constructs (lookaround, backreferences, possessive
// quantifiers, atomic groups) do not compile here, so such a subscription
// is INVALID_CONFIG where Kafka accepts it; a Java class intersection like
// [a-z&&[^b]] compiles in RE2 with another meaning.
func parseMatchPatterns(list []string) ([]MatchPattern, error) {
	var bySelector [selectorEnd]*MatchPattern
	for _, pattern := range list {
		p, err := parseMatchPattern(pattern)
		if err != nil {
			return nil, err
		}
		bySelector[p.Selector] = &p
	}
	var out []MatchPattern
	for _, p := range bySelector {
		if p != nil {
			out = append(out, *p)
		}
	}
	return out, nil
}

func parseMatchPattern(pattern string) (MatchPattern, error) {
	bad := func(why string) error {
		return &ConfigError{Key: ConfigMatch, Code: kerr.InvalidConfig.Code,
			Msg: fmt.Sprintf("illegal client matching pattern %q in %s: %s", pattern, ConfigMatch, why)}
	}
	parts := javaSplit(pattern, '=')
	if len(parts) != 2 {
		return MatchPattern{}, bad("want selector=regex with one '=', selector one of " + strings.Join(selectorNames(), ", "))
	}
	sel, ok := parseSelector(javaTrim(parts[0]))
	if !ok {
		return MatchPattern{}, bad("selector must be one of " + strings.Join(selectorNames(), ", "))
	}
	re := javaTrim(parts[1])
	// Compile the regex alone first: only a regex that is well formed on
	// its own can be wrapped in anchors without changing meaning ("a)|(b"
	// would otherwise escape the group).
	if _, err := regexp.Compile(re); err != nil {
		return MatchPattern{}, bad("regex does not compile (Go RE2 syntax): " + err.Error())
	}
	full, err := regexp.Compile(`\A(?:` + re + `)\z`)
	if err != nil {
		return MatchPattern{}, bad("regex does not compile (Go RE2 syntax): " + err.Error())
	}
	return MatchPattern{Selector: sel, Regex: re, full: full}, nil
}

// javaSplit is Java's String.split with a one-character literal and no
// limit: trailing empty strings are dropped, so "a=b=" splits in two and
// "a=" in one.
func javaSplit(s string, sep byte) []string {
	parts := strings.Split(s, string(sep))
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 0 {
		// Java returns the input itself when nothing is left ("" → [""],
		// "==" → []). Only the length matters to the caller.
		if s == "" {
			return []string{""}
		}
		return nil
	}
	return parts
}

package quota

import (
	"fmt"
	"net/netip"
	"strings"
)

// maxHostNameBytes is the longest DNS name (RFC 1035, without the root dot).
const maxHostNameBytes = 253

// ValidateIPName checks the name of an ip entity: an IP address, or a host
// name that could resolve to one (Kafka takes whatever
// InetAddress.getByName resolves; the caller checks that it does).
func ValidateIPName(name string) error {
	if _, err := netip.ParseAddr(name); err == nil {
		return nil
	}
	if !isHostName(name) {
		return fmt.Errorf("%w: ip %q is neither an IP address nor a host name; give the client's address", ErrInvalidEntity, name)
	}
	return nil
}

// IsIPAddress reports whether an ip entity's name is an address already
// (not a host name to resolve).
func IsIPAddress(name string) bool {
	_, err := netip.ParseAddr(name)
	return err == nil
}

// isHostName reports whether name is a DNS host name: dot-separated labels
// of letters, digits and inner hyphens, 1 to 63 bytes each, a trailing dot
// allowed.
func isHostName(name string) bool {
	name = strings.TrimSuffix(name, ".")
	if name == "" || len(name) > maxHostNameBytes {
		return false
	}
	for label := range strings.SplitSeq(name, ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

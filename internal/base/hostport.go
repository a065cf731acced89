package base

import (
	"net"
	"strconv"
	"strings"
)

// CanonicalAddr lower-cases the host of host:port and drops the port's
// leading zeros, so that two spellings of one address compare equal. What
// is not host:port is returned as it is.
func CanonicalAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if p, err := strconv.Atoi(port); err == nil {
		port = strconv.Itoa(p)
	}
	return net.JoinHostPort(strings.ToLower(host), port)
}

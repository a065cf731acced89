package server

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// apiVersionsKey is the ApiVersions api key, special in two ways: its
// responses always use header v0, and an unsupported version is answered
// rather than dropped.
const apiVersionsKey int16 = 18

// errUnsupportedVersionCode is Kafka's UNSUPPORTED_VERSION error code.
const errUnsupportedVersionCode int16 = 35

// Decoding errors; each one closes the connection.
var (
	errBadHeader          = errors.New("server: truncated or malformed request header")
	errUnknownKey         = errors.New("server: unknown api key")
	errUnsupportedVersion = errors.New("server: unsupported api version")
	errBadBody            = errors.New("server: malformed request body")
)

// header is a decoded request header (v1 or v2).
type header struct {
	key           int16
	version       int16
	correlationID int32
	clientID      *string
}

// decoded is one decoded frame. Exactly one holds: body != nil, or
// apiVersionsFallback (an ApiVersions request at a version that is not
// supported; its body was not decoded).
type decoded struct {
	header
	body                kmsg.Request
	apiVersionsFallback bool
}

// decodeRequest decodes one frame (without its size prefix). supported is
// asked only for keys and versions that kmsg knows. The returned body may
// alias frame. It never panics, whatever frame holds.
func decodeRequest(frame []byte, supported func(key, version int16) bool, ids *clientIDCache) (decoded, error) {
	var d decoded
	r := reader{b: frame}
	d.key = r.int16()
	d.version = r.int16()
	d.correlationID = r.int32()
	d.clientID = ids.read(&r)
	if r.bad {
		return d, errBadHeader
	}
	req := kmsg.RequestForKey(d.key)
	if req == nil {
		return d, fmt.Errorf("%w %d", errUnknownKey, d.key)
	}
	if d.version < 0 || d.version > req.MaxVersion() || !supported(d.key, d.version) {
		if d.key == apiVersionsKey {
			d.apiVersionsFallback = true
			return d, nil
		}
		return d, fmt.Errorf("%w: key %d version %d", errUnsupportedVersion, d.key, d.version)
	}
	req.SetVersion(d.version)
	if req.IsFlexible() {
		r.skipTags()
		if r.bad {
			return d, errBadHeader
		}
	}
	if err := req.ReadFrom(r.b); err != nil {
		return d, fmt.Errorf("%w: key %d version %d: %w", errBadBody, d.key, d.version, err)
	}
	d.body = req
	return d, nil
}

// clientIDCache remembers the last client id of a connection, so that a
// client that sends the same id on every request (all of them do) costs no
// allocation per request. Owned by the connection's reader goroutine.
type clientIDCache struct {
	last *string
}

// read reads a nullable string (int16 length, -1 for null).
func (c *clientIDCache) read(r *reader) *string {
	n := r.int16()
	if r.bad || n == -1 {
		return nil
	}
	b := r.span(int(n)) // a negative n other than -1 marks r bad
	if r.bad {
		return nil
	}
	if c.last != nil && *c.last == string(b) { // compiled without allocating
		return c.last
	}
	s := string(b)
	c.last = &s
	return c.last
}

// reader is a bounds-checking reader: it never trusts a length prefix, and
// once a read runs past the end every later read returns zero and bad stays
// set.
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) span(n int) []byte {
	if r.bad || n < 0 || n > len(r.b) {
		r.bad = true
		return nil
	}
	s := r.b[:n:n]
	r.b = r.b[n:]
	return s
}

func (r *reader) int16() int16 {
	s := r.span(2)
	if r.bad {
		return 0
	}
	return int16(binary.BigEndian.Uint16(s))
}

func (r *reader) int32() int32 {
	s := r.span(4)
	if r.bad {
		return 0
	}
	return int32(binary.BigEndian.Uint32(s))
}

// uvarint reads Kafka's unsigned varint, at most 5 bytes for 32 bits.
func (r *reader) uvarint() uint32 {
	var v uint32
	for i := range 5 {
		s := r.span(1)
		if r.bad {
			return 0
		}
		v |= uint32(s[0]&0x7f) << (7 * i)
		if s[0] < 0x80 {
			return v
		}
	}
	r.bad = true
	return 0
}

// skipTags skips a tagged-fields section. Each field consumes at least two
// bytes or marks r bad, so a huge count ends quickly.
func (r *reader) skipTags() {
	for n := r.uvarint(); n > 0 && !r.bad; n-- {
		r.uvarint() // tag
		size := r.uvarint()
		if uint64(size) > uint64(len(r.b)) {
			r.bad = true
			return
		}
		r.span(int(size))
	}
}

package clientmetrics

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
)

// InstanceID is a client instance id: the UUID a broker hands a client in
// its first GetTelemetrySubscriptions answer and that the client sends back
// in every later request. It is the uuid of the wire, so a kmsg [16]byte
// converts to it as is.
type InstanceID [16]byte

// oneInstanceID is Kafka's Uuid.ONE_UUID (also its METADATA_TOPIC_ID): with
// the zero id, the reserved ids that Uuid.randomUuid never returns and that
// PushTelemetry refuses.
var oneInstanceID = InstanceID{15: 1}

// String is Kafka's Uuid.toString: URL-safe base64 without padding. It is
// what client_instance_id match patterns are matched against.
func (id InstanceID) String() string {
	return base64.RawURLEncoding.EncodeToString(id[:])
}

// IsZero reports whether id is the zero id, which a client sends in its
// first GetTelemetrySubscriptions to ask for a new one.
func (id InstanceID) IsZero() bool { return id == InstanceID{} }

// reserved is Kafka's Uuid.RESERVED: the zero and the one id.
func (id InstanceID) reserved() bool { return id.IsZero() || id == oneInstanceID }

// javaHashCode is Kafka's Uuid.hashCode: the two halves of the xor of the
// most and least significant longs, xored. The subscription id mixes it in.
func (id InstanceID) javaHashCode() int32 {
	msb := binary.BigEndian.Uint64(id[:8])
	lsb := binary.BigEndian.Uint64(id[8:])
	x := msb ^ lsb
	return int32(uint32(x>>32)) ^ int32(uint32(x))
}

// maxIDAttempts bounds the retries of newInstanceID. A retry happens when
// the id is reserved, starts with '-' (1 in 64) or is taken, so with a
// random source 64 attempts all failing means the source is not random.
const maxIDAttempts = 64

// newInstanceID draws a random id as Kafka's Uuid.randomUuid (a version 4,
// variant 2 UUID as java.util.UUID.randomUUID makes) that is not reserved,
// whose string form does not start with '-' (it would read as a command-line
// flag), and that taken does not claim, as ClientMetricsManager's
// generateNewClientId skips ids already in its cache.
func newInstanceID(rand io.Reader, taken func(InstanceID) bool) (InstanceID, error) {
	for range maxIDAttempts {
		var id InstanceID
		if _, err := io.ReadFull(rand, id[:]); err != nil {
			return InstanceID{}, fmt.Errorf("clientmetrics: reading a random instance id: %w", err)
		}
		id[6] = id[6]&0x0f | 0x40 // version 4
		id[8] = id[8]&0x3f | 0x80 // IETF variant
		// The first base64 character is the top six bits; '-' is 62.
		if id.reserved() || id[0]>>2 == 62 || taken(id) {
			continue
		}
		return id, nil
	}
	return InstanceID{}, fmt.Errorf("clientmetrics: no usable instance id in %d random draws", maxIDAttempts)
}

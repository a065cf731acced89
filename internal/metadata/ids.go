package metadata

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"

	"github.com/strata-broker/strata/internal/base"
)

// newUUID draws a random (version 4) UUID the way Kafka's Uuid.randomUuid does:
// never all zeros, and never one whose base64 form starts with '-', which
// command-line tools would read as a flag.
func newUUID() [16]byte {
	for {
		var u [16]byte
		if _, err := rand.Read(u[:]); err != nil {
			panic(fmt.Sprintf("metadata: crypto/rand failed: %v", err)) // crypto/rand.Read never fails on supported platforms
		}
		u[6] = u[6]&0x0f | 0x40 // version 4
		u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
		if u != ([16]byte{}) && base64.RawURLEncoding.EncodeToString(u[:])[0] != '-' {
			return u
		}
	}
}

// newTopicID draws a topic id; it runs in the proposer, never in the FSM.
func newTopicID() base.TopicID { return base.TopicID(newUUID()) }

// newClusterID draws a cluster id in Kafka's format: 22 characters of unpadded
// base64url.
func newClusterID() string { return newUUIDString() }

// newUUIDString draws a UUID in Kafka's string form (Uuid.toString): 22
// characters of unpadded base64url.
func newUUIDString() string { return UUIDString(newUUID()) }

// UUIDString writes id as Kafka writes a Uuid (Uuid.toString: 22
// characters of unpadded base64url), as its tools show cluster, topic and
// directory ids.
func UUIDString(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

func validateClusterID(id string) error {
	if err := ValidClusterID(id); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidCommand, err)
	}
	return nil
}

// ValidClusterID reports whether id is a cluster id in Kafka's form (a
// Uuid: 16 bytes as 22 characters of unpadded base64url), as
// kafka-storage random-uuid prints one.
func ValidClusterID(id string) error {
	raw, err := base64.RawURLEncoding.DecodeString(id)
	if err != nil || len(raw) != 16 {
		return fmt.Errorf("cluster id %q is not 16 bytes of base64url (22 characters, as kafka-storage random-uuid prints)", id)
	}
	return nil
}

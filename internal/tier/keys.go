package tier

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// Suffix names one object of a remote segment. The zero value is invalid.
type Suffix int

const (
	SuffixLog         Suffix = iota + 1 // the batches, exactly as served in Fetch
	SuffixIndex                         // offset index, Kafka's 8-byte entries
	SuffixTimeIndex                     // time index, Kafka's 12-byte entries
	SuffixLeaderEpoch                   // leader-epoch checkpoint, Kafka's text format
	SuffixSnapshot                      // producer-state snapshot at the segment's end
	// SuffixTxnIndex is the transaction index, Kafka's 34-byte entries
	// (txn_index.go). Optional, as Kafka's LogSegmentData.transactionIndex
	// is: written only when the segment holds an ABORT marker, and absent
	// from segments uploaded before it existed; absent means no entry.
	SuffixTxnIndex
)

// Suffixes is every object a remote segment may have, in upload order: the
// .log last, so an object listing that shows it shows a complete upload.
// Deletion and the reconciler go by this list, so a segment's optional
// objects (snapshot, transaction index) are deleted and claimed whether
// or not its upload wrote them.
var Suffixes = []Suffix{SuffixIndex, SuffixTimeIndex, SuffixTxnIndex, SuffixLeaderEpoch, SuffixSnapshot, SuffixLog}

var suffixNames = [...]string{
	SuffixLog:         "log",
	SuffixIndex:       "index",
	SuffixTimeIndex:   "timeindex",
	SuffixLeaderEpoch: "leader-epoch-checkpoint",
	SuffixSnapshot:    "snapshot",
	SuffixTxnIndex:    "txnindex",
}

// Valid reports whether s is one of the named suffixes.
func (s Suffix) Valid() bool { return s >= SuffixLog && int(s) < len(suffixNames) }

func (s Suffix) String() string {
	if s.Valid() {
		return suffixNames[s]
	}
	return fmt.Sprintf("Suffix(%d)", int(s))
}

const (
	// keyComponentMaxBytes is objstore's limit on one key component. A
	// topic name (up to 249 bytes in Kafka) is cut so that
	// "<name>-<32 hex>" fits; the topic id, not the name, identifies it.
	keyComponentMaxBytes = 255
	topicNameKeyMaxBytes = keyComponentMaxBytes - 1 - 2*len(base.TopicID{})
	// reservedKeyPrefix starts key components objstore keeps for itself; a
	// topic name starting so has its first byte replaced in keys.
	reservedKeyPrefix = ".strata-"
)

// ObjectKey is what a remote object's key says: whose segment it belongs
// to and which of its objects it is. TopicName is the name as written in
// the key (cut and escaped, see topicKeyName), for people reading a
// listing; TopicID is what identifies the topic.
type ObjectKey struct {
	TopicName  string
	TopicID    base.TopicID
	Partition  int32
	BaseOffset base.Offset
	Segment    remotemeta.SegmentID
	Suffix     Suffix
}

// String is the object's key:
//
//	<topicName>-<topicIDhex>/<partition>/<20-digit base offset>-<segmentIDhex>.<suffix>
func (k ObjectKey) String() string {
	return fmt.Sprintf("%s%s-%s.%s", partitionPrefix(k.TopicID, k.TopicName, k.Partition),
		base.OffsetName(k.BaseOffset), hex.EncodeToString(k.Segment[:]), k.Suffix)
}

// TierStoreKeyPrefix starts the keys of the objects that name a cluster's
// remote store (TierStoreKey). It has no topic component, so it never
// parses as a segment object key.
const TierStoreKeyPrefix = "strata-tier-store/"

// TierStoreKey is the object that names the remote store of token: the
// node that claims the store for its cluster writes it (cmd/strata).
func TierStoreKey(token string) string { return TierStoreKeyPrefix + token }

// SegmentKey is the key of the object suffix of remote segment seg.
func SegmentKey(seg remotemeta.RemoteSegment, suffix Suffix) string {
	return ObjectKey{
		TopicName: seg.TP.Topic, TopicID: seg.TopicID, Partition: seg.TP.Partition,
		BaseOffset: seg.Range.Start, Segment: seg.ID, Suffix: suffix,
	}.String()
}

// PartitionPrefix is the prefix of every object of one partition, ending
// in '/', for a List by the reconciler.
func PartitionPrefix(topicID base.TopicID, tp base.TopicPartition) string {
	return partitionPrefix(topicID, tp.Topic, tp.Partition)
}

// TopicPrefix is the prefix of every object of one topic, ending in '/'.
func TopicPrefix(topicID base.TopicID, topic string) string {
	return topicKeyName(topic) + "-" + hex.EncodeToString(topicID[:]) + "/"
}

func partitionPrefix(topicID base.TopicID, topic string, partition int32) string {
	return TopicPrefix(topicID, topic) + strconv.FormatInt(int64(partition), 10) + "/"
}

// topicKeyName is the topic name as keys carry it: cut to fit one key
// component, and with a leading '.' made '_' when it would start with
// objstore's reserved prefix. Idempotent, so keys round-trip.
func topicKeyName(topic string) string {
	if len(topic) > topicNameKeyMaxBytes {
		topic = topic[:topicNameKeyMaxBytes]
	}
	if strings.HasPrefix(topic, reservedKeyPrefix) {
		topic = "_" + topic[1:]
	}
	return topic
}

// ErrNotSegmentObject: a key is not one that SegmentKey makes.
var ErrNotSegmentObject = errors.New("tier: not a remote segment object key")

// ParseObjectKey is the inverse of ObjectKey.String, for the reconciler:
// it accepts exactly the keys String makes (canonical numbers, lowercase
// hex, a known suffix) and refuses anything else with ErrNotSegmentObject.
func ParseObjectKey(key string) (ObjectKey, error) {
	bad := func(why string) (ObjectKey, error) {
		return ObjectKey{}, fmt.Errorf("%w: %q: %s", ErrNotSegmentObject, key, why)
	}
	parts := strings.Split(key, "/")
	if len(parts) != 3 {
		return bad("not three '/'-separated components")
	}
	var k ObjectKey
	dash := strings.LastIndexByte(parts[0], '-')
	if dash < 0 || !decodeHexID(parts[0][dash+1:], k.TopicID[:]) {
		return bad("no topic id after the topic name")
	}
	k.TopicName = parts[0][:dash]
	if k.TopicName == "" || topicKeyName(k.TopicName) != k.TopicName {
		return bad("not a topic name as keys carry it")
	}
	p, err := strconv.ParseInt(parts[1], 10, 32)
	if err != nil || p < 0 || strconv.FormatInt(p, 10) != parts[1] {
		return bad("partition is not a canonical non-negative int32")
	}
	k.Partition = int32(p)
	name, suffix, ok := strings.Cut(parts[2], ".")
	if !ok {
		return bad("no suffix")
	}
	if k.Suffix = suffixByName(suffix); !k.Suffix.Valid() {
		return bad("unknown suffix")
	}
	offStr, idStr, ok := strings.Cut(name, "-")
	if !ok || len(offStr) != base.OffsetNameDigits || !decodeHexID(idStr, k.Segment[:]) || k.Segment.IsZero() {
		return bad("file name is not <20-digit offset>-<segment id>")
	}
	if k.BaseOffset, ok = base.ParseOffsetName(offStr); !ok {
		return bad("base offset is not a non-negative int64")
	}
	return k, nil
}

func suffixByName(name string) Suffix {
	for s := SuffixLog; s.Valid(); s++ {
		if suffixNames[s] == name {
			return s
		}
	}
	return 0
}

// decodeHexID decodes exactly len(dst) bytes of lowercase hex from s.
func decodeHexID(s string, dst []byte) bool {
	if len(s) != 2*len(dst) || strings.ToLower(s) != s {
		return false
	}
	_, err := hex.Decode(dst, []byte(s))
	return err == nil
}

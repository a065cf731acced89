package tier

import (
	"errors"
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

func TestObjectKeyLayout(t *testing.T) {
	seg := remotemeta.RemoteSegment{
		ID: remotemeta.SegmentID{0xde, 0xad, 15: 0x01}, TopicID: testTopicID,
		TP: base.TopicPartition{Topic: "orders.v1", Partition: 12}, Range: base.Range{Start: 4200, End: 4300},
	}
	const dir = "orders.v1-0123456789abcdef0102030405060708/12/00000000000000004200-dead0000000000000000000000000001."
	for s, name := range map[Suffix]string{
		SuffixLog: "log", SuffixIndex: "index", SuffixTimeIndex: "timeindex",
		SuffixLeaderEpoch: "leader-epoch-checkpoint", SuffixSnapshot: "snapshot", SuffixTxnIndex: "txnindex",
	} {
		if got := SegmentKey(seg, s); got != dir+name {
			t.Errorf("SegmentKey(%v) = %s", s, got)
		}
	}
	if p := PartitionPrefix(testTopicID, seg.TP); !strings.HasPrefix(dir, p) || !strings.HasSuffix(p, "/12/") {
		t.Errorf("PartitionPrefix = %s", p)
	}
}

// Every key SegmentKey makes is a valid store key and parses back to what
// made it, including topic names that must be cut or escaped.
func TestObjectKeyRoundTrip(t *testing.T) {
	long := strings.Repeat("x", 249)
	for _, topic := range []string{"t", "a-b-c", "_internal", ".strata-x", "..", long} {
		for _, s := range Suffixes {
			k := ObjectKey{TopicName: topic, TopicID: testTopicID, Partition: 2147483647,
				BaseOffset: 9223372036854775807, Segment: sid(9), Suffix: s}
			key := k.String()
			if err := objstore.ValidateKey(key); err != nil {
				t.Fatalf("key %s: %v", key, err)
			}
			got, err := ParseObjectKey(key)
			if err != nil {
				t.Fatalf("ParseObjectKey(%s): %v", key, err)
			}
			k.TopicName = topicKeyName(topic)
			if got != k || got.String() != key {
				t.Fatalf("round trip of %s: %+v", key, got)
			}
		}
	}
}

func TestParseObjectKeyRejects(t *testing.T) {
	const good = "t-0123456789abcdef0102030405060708/0/00000000000000000000-aa000000000000000000000000000009.log"
	if _, err := ParseObjectKey(good); err != nil {
		t.Fatalf("good key: %v", err)
	}
	for _, key := range []string{
		"",
		"t-0123456789abcdef0102030405060708/0",
		"prefix/" + good,
		"t-0123456789ABCDEF0102030405060708/0/00000000000000000000-aa000000000000000000000000000009.log", // uppercase
		"t-0123456789abcdef01020304050607/0/00000000000000000000-aa000000000000000000000000000009.log",   // short id
		"-0123456789abcdef0102030405060708/0/00000000000000000000-aa000000000000000000000000000009.log",  // no name
		"t-0123456789abcdef0102030405060708/01/00000000000000000000-aa000000000000000000000000000009.log",
		"t-0123456789abcdef0102030405060708/-1/00000000000000000000-aa000000000000000000000000000009.log",
		"t-0123456789abcdef0102030405060708/+1/00000000000000000000-aa000000000000000000000000000009.log",
		"t-0123456789abcdef0102030405060708/0/0000000000000000000-aa000000000000000000000000000009.log",   // 19 digits
		"t-0123456789abcdef0102030405060708/0/+0000000000000000000-aa000000000000000000000000000009.log",  // sign
		"t-0123456789abcdef0102030405060708/0/00000000000000000000-00000000000000000000000000000000.log",  // zero id
		"t-0123456789abcdef0102030405060708/0/00000000000000000000-aa000000000000000000000000000009.txt",  // suffix
		"t-0123456789abcdef0102030405060708/0/00000000000000000000-aa000000000000000000000000000009",      // none
		"t-0123456789abcdef0102030405060708/0/00000000000000000000-aa000000000000000000000000000009.log.", // extra
		"t-0123456789abcdef0102030405060708/0/99999999999999999999-aa000000000000000000000000000009.log",  // > int64
	} {
		if _, err := ParseObjectKey(key); !errors.Is(err, ErrNotSegmentObject) {
			t.Errorf("ParseObjectKey(%q) = %v, want ErrNotSegmentObject", key, err)
		}
	}
}

package group

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// The expected bytes below are written out from Kafka's JSON schemas, field
// by field, not produced by the code under test.
const (
	hexGroup      = "0003 677270" // "grp" with an int16 length
	hexMember     = "0002 6d31"   // "m1"
	hexTopicA     = "000102030405060708090a0b0c0d0e0f"
	hexTopicB     = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"
	hexTime       = "0000018bcfe56800" // 1700000000000 ms
	exampleTimeMs = 1700000000000
)

var (
	topicA = [16]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	topicB = [16]byte{0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff}
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

func ptr[T any](v T) *T { return &v }

// valueCase is one hand-built value: its encoding as Kafka writes it, and
// the same value with unknown tagged fields added, which must decode alike.
type valueCase struct {
	name        string
	value       any
	encode      func() []byte
	decode      func([]byte) (any, error)
	want        string
	withUnknown string
}

func asAny[T any](read func([]byte) (T, error)) func([]byte) (any, error) {
	return func(b []byte) (any, error) { return read(b) }
}

func valueCases() []valueCase {
	groupMeta := consumerGroupMetadata{Epoch: 5, MetadataHash: 0x0102030405060708, CreationTimeMs: exampleTimeMs, HasCreationTime: true}
	groupMetaPlain := consumerGroupMetadata{Epoch: 5}
	member := memberMetadata{
		RackID:               ptr("r"),
		ClientID:             "c",
		ClientHost:           "/h",
		SubscribedTopicNames: []string{"a", "bc"},
		RebalanceTimeoutMs:   30000,
		ServerAssignor:       ptr("uniform"),
		Classic: &classicMemberMetadata{
			SessionTimeoutMs:   45000,
			SupportedProtocols: []classicProtocol{{Name: "range", Metadata: []byte{1, 2}}},
		},
	}
	memberPlain := memberMetadata{InstanceID: ptr("i"), SubscribedTopicRegex: ptr("t.*"), RebalanceTimeoutMs: -1}
	targetMeta := targetAssignmentMetadata{AssignmentEpoch: 7, AssignmentTimestampMs: exampleTimeMs}
	target := targetAssignmentMember{TopicPartitions: []topicPartitions{{TopicID: topicA, Partitions: []int32{0, 2}}}}
	current := currentMemberAssignment{
		MemberEpoch: 9, PreviousMemberEpoch: 8, State: 0,
		AssignedPartitions:          []topicPartitions{{TopicID: topicA, Partitions: []int32{1}, AssignmentEpochs: []int32{9}}},
		PartitionsPendingRevocation: []topicPartitions{{TopicID: topicB, Partitions: []int32{3}}},
	}
	currentEmptyEpochs := currentMemberAssignment{
		MemberEpoch: 1, State: 2,
		AssignedPartitions: []topicPartitions{{TopicID: topicA, AssignmentEpochs: []int32{}}},
	}
	regex := regularExpression{Topics: []string{"ab"}, MetadataVersion: 42, TimestampMs: exampleTimeMs}
	return []valueCase{{
		name: "ConsumerGroupMetadataValue", value: groupMeta,
		encode: func() []byte { return consumerGroupMetadataValue(groupMeta) },
		decode: asAny(readConsumerGroupMetadataValue),
		// version, Epoch, 2 tags: 0 MetadataHash (8 bytes), 1 CreationTimeMs.
		want:        "0000 00000005 02 00 08 0102030405060708 01 08 " + hexTime,
		withUnknown: "0000 00000005 04 00 08 0102030405060708 01 08 " + hexTime + " 05 02 abcd 7f 00",
	}, {
		name: "ConsumerGroupMetadataValue defaults", value: groupMetaPlain,
		encode:      func() []byte { return consumerGroupMetadataValue(groupMetaPlain) },
		decode:      asAny(readConsumerGroupMetadataValue),
		want:        "0000 00000005 00",
		withUnknown: "0000 00000005 02 01 08 ffffffffffffffff 02 01 00", // CreationTimeMs -1 is the default
	}, {
		name: "ConsumerGroupMemberMetadataValue", value: member,
		encode: func() []byte { return memberMetadataValue(member) },
		decode: asAny(readMemberMetadataValue),
		// InstanceId null, RackId "r", ClientId "c", ClientHost "/h",
		// SubscribedTopicNames ["a" "bc"], SubscribedTopicRegex null,
		// RebalanceTimeoutMs 30000, ServerAssignor "uniform", then tag 0 of
		// 17 bytes: present, SessionTimeoutMs 45000, [{"range", 0102}].
		want: "0000 00 0272 0263 032f68 03 0261 036263 00 00007530 08 756e69666f726d" +
			" 01 00 11 01 0000afc8 02 0672616e6765 030102 00 00",
		withUnknown: "0000 00 0272 0263 032f68 03 0261 036263 00 00007530 08 756e69666f726d" +
			" 02 00 14 01 0000afc8 02 0672616e6765 030102 01 09 01 ff 00 03 00",
	}, {
		name: "ConsumerGroupMemberMetadataValue defaults", value: memberPlain,
		encode:      func() []byte { return memberMetadataValue(memberPlain) },
		decode:      asAny(readMemberMetadataValue),
		want:        "0000 0269 00 01 01 01 04742e2a ffffffff 00 00",
		withUnknown: "0000 0269 00 01 01 01 04742e2a ffffffff 00 02 00 01 00 01 00", // a null ClassicMemberMetadata
	}, {
		name: "ConsumerGroupTargetAssignmentMetadataValue", value: targetMeta,
		encode:      func() []byte { return targetAssignmentMetadataValue(targetMeta) },
		decode:      asAny(readTargetAssignmentMetadataValue),
		want:        "0000 00000007 01 00 08 " + hexTime,
		withUnknown: "0000 00000007 02 00 08 " + hexTime + " 01 01 00",
	}, {
		name: "ConsumerGroupTargetAssignmentMemberValue", value: target,
		encode: func() []byte { return targetAssignmentMemberValue(target) },
		decode: asAny(readTargetAssignmentMemberValue),
		want:   "0000 02 " + hexTopicA + " 03 00000000 00000002 00 00",
		// Tag 0 of a target's TopicPartition is unknown (only current
		// assignments have AssignmentEpochs).
		withUnknown: "0000 02 " + hexTopicA + " 03 00000000 00000002 01 00 02 0102 01 03 00",
	}, {
		name: "ConsumerGroupCurrentMemberAssignmentValue", value: current,
		encode: func() []byte { return currentMemberAssignmentValue(current) },
		decode: asAny(readCurrentMemberAssignmentValue),
		// MemberEpoch 9, PreviousMemberEpoch 8, State 0, then
		// [{A, [1], tag 0 AssignmentEpochs [9]}] and [{B, [3]}].
		want: "0000 00000009 00000008 00 02 " + hexTopicA + " 02 00000001 01 00 05 02 00000009" +
			" 02 " + hexTopicB + " 02 00000003 00 00",
		withUnknown: "0000 00000009 00000008 00 02 " + hexTopicA + " 02 00000001 02 00 05 02 00000009 04 00" +
			" 02 " + hexTopicB + " 02 00000003 01 01 01 00 00",
	}, {
		name: "ConsumerGroupCurrentMemberAssignmentValue empty epochs", value: currentEmptyEpochs,
		encode:      func() []byte { return currentMemberAssignmentValue(currentEmptyEpochs) },
		decode:      asAny(readCurrentMemberAssignmentValue),
		want:        "0000 00000001 00000000 02 02 " + hexTopicA + " 01 01 00 01 01 01 00",
		withUnknown: "0000 00000001 00000000 02 02 " + hexTopicA + " 01 02 00 01 01 08 00 01 00",
	}, {
		name: "ConsumerGroupRegularExpressionValue", value: regex,
		encode:      func() []byte { return regularExpressionValue(regex) },
		decode:      asAny(readRegularExpressionValue),
		want:        "0000 02 036162 000000000000002a " + hexTime + " 00",
		withUnknown: "0000 02 036162 000000000000002a " + hexTime + " 01 00 04 01020304",
	}}
}

type keyCase struct {
	name string
	key  []byte
	want string
	dec  consumerKey
}

func keyCases() []keyCase {
	return []keyCase{
		{"ConsumerGroupMetadataKey", consumerGroupMetadataKey("grp"), "0003 " + hexGroup,
			consumerKey{Type: 3, Group: "grp"}},
		{"ConsumerGroupMemberMetadataKey", memberMetadataKey("grp", "m1"), "0005 " + hexGroup + " " + hexMember,
			consumerKey{Type: 5, Group: "grp", Member: "m1"}},
		{"ConsumerGroupTargetAssignmentMetadataKey", targetAssignmentMetadataKey("grp"), "0006 " + hexGroup,
			consumerKey{Type: 6, Group: "grp"}},
		{"ConsumerGroupTargetAssignmentMemberKey", targetAssignmentMemberKey("grp", "m1"), "0007 " + hexGroup + " " + hexMember,
			consumerKey{Type: 7, Group: "grp", Member: "m1"}},
		{"ConsumerGroupCurrentMemberAssignmentKey", currentMemberAssignmentKey("grp", "m1"), "0008 " + hexGroup + " " + hexMember,
			consumerKey{Type: 8, Group: "grp", Member: "m1"}},
		{"ConsumerGroupRegularExpressionKey", regularExpressionKey("grp", "^a.*"), "0010 " + hexGroup + " 0004 5e612e2a",
			consumerKey{Type: 16, Group: "grp", Regex: "^a.*"}},
		{"empty strings", memberMetadataKey("", ""), "0005 0000 0000", consumerKey{Type: 5}},
	}
}

func TestConsumerRecordKeysGolden(t *testing.T) {
	for _, c := range keyCases() {
		t.Run(c.name, func(t *testing.T) {
			if want := unhex(t, c.want); !bytes.Equal(c.key, want) {
				t.Fatalf("encoded %x, want %x", c.key, want)
			}
			got, err := readConsumerKey(c.key)
			if err != nil || got != c.dec {
				t.Fatalf("decoded %+v, %v; want %+v", got, err, c.dec)
			}
			for i := range len(c.key) {
				if _, err := readConsumerKey(c.key[:i]); !errors.Is(err, ErrBadRecord) {
					t.Fatalf("truncated to %d bytes: %v", i, err)
				}
			}
			if _, err := readConsumerKey(append(c.key, 0)); !errors.Is(err, ErrBadRecord) {
				t.Fatalf("with a trailing byte: %v", err)
			}
		})
	}
}

func TestConsumerRecordKeysRejected(t *testing.T) {
	for _, k := range []string{
		"0000 " + hexGroup + " 0000 0000",   // a classic offset commit
		"0002 " + hexGroup,                  // a classic group
		"0004 " + hexGroup,                  // the deprecated partition metadata
		"0009 " + hexGroup,                  // not a consumer group's
		"ffff " + hexGroup,                  // negative
		"0003 ffff",                         // null GroupId
		"0005 " + hexGroup + " ff00",        // negative MemberId length
		"0010 " + hexGroup + " 0005 5e612e", // RegularExpression cut short
	} {
		if got, err := readConsumerKey(unhex(t, k)); !errors.Is(err, ErrBadRecord) {
			t.Errorf("key %s: got %+v, %v; want ErrBadRecord", k, got, err)
		}
	}
}

func TestConsumerRecordValuesGolden(t *testing.T) {
	for _, c := range valueCases() {
		t.Run(c.name, func(t *testing.T) {
			enc := c.encode()
			if want := unhex(t, c.want); !bytes.Equal(enc, want) {
				t.Fatalf("encoded\n %x\nwant\n %x", enc, want)
			}
			got, err := c.decode(enc)
			if err != nil || !reflect.DeepEqual(got, c.value) {
				t.Fatalf("decoded %+v, %v; want %+v", got, err, c.value)
			}
			got, err = c.decode(unhex(t, c.withUnknown))
			if err != nil || !reflect.DeepEqual(got, c.value) {
				t.Fatalf("with unknown tagged fields: decoded %+v, %v; want %+v", got, err, c.value)
			}
			for i := range len(enc) {
				if _, err := c.decode(enc[:i]); !errors.Is(err, ErrBadRecord) {
					t.Fatalf("truncated to %d bytes: %v", i, err)
				}
			}
			if _, err := c.decode(append(enc, 0)); !errors.Is(err, ErrBadRecord) {
				t.Fatalf("with a trailing byte: %v", err)
			}
			for _, version := range [][]byte{{0, 1}, {0x7f, 0xff}, {0xff, 0xff}} {
				b := append(append([]byte(nil), version...), enc[2:]...)
				if _, err := c.decode(b); !errors.Is(err, ErrBadRecord) || !strings.Contains(err.Error(), "value version") {
					t.Fatalf("value version %x: %v", version, err)
				}
			}
		})
	}
}

// TestConsumerRecordValuesRejected pins what Kafka's readers refuse: null
// where the schema does not allow it, lengths beyond the input or beyond
// Kafka's string limit, a tagged field whose size disagrees with its value.
func TestConsumerRecordValuesRejected(t *testing.T) {
	long := "0000 00 00 " + hex.EncodeToString([]byte{0x81, 0x80, 0x02}) + strings.Repeat("61", 0x8000) + " 01 01 00 ffffffff 00 00"
	for _, c := range []struct {
		name, value, want string
		decode            func([]byte) (any, error)
	}{
		{"null ClientId", "0000 00 00 00 01 01 00 ffffffff 00 00", "ClientId", asAny(readMemberMetadataValue)},
		{"null topic names", "0000 00 00 01 01 00 00 ffffffff 00 00", "SubscribedTopicNames", asAny(readMemberMetadataValue)},
		{"ClientId over Kafka's limit", long, "ClientId", asAny(readMemberMetadataValue)},
		{"null protocol metadata", "0000 00 00 01 01 01 00 ffffffff 00 01 00 0a 01 00000000 02 01 00 00 00",
			"Metadata", asAny(readMemberMetadataValue)},
		{"null Partitions", "0000 02 " + hexTopicA + " 00 00 00", "Partitions", asAny(readTargetAssignmentMemberValue)},
		{"null TopicPartitions", "0000 00 00", "TopicPartitions", asAny(readTargetAssignmentMemberValue)},
		{"more topics than bytes", "0000 7f 00", "elements", asAny(readTargetAssignmentMemberValue)},
		{"more partitions than bytes", "0000 00000001 00000000 00 02 " + hexTopicA + " 05 00000001 00 00 01 00",
			"AssignedPartitions.Partitions", asAny(readCurrentMemberAssignmentValue)},
		{"null Topics", "0000 00 0000000000000000 0000000000000000 00", "Topics", asAny(readRegularExpressionValue)},
		{"short MetadataHash", "0000 00000005 01 00 04 01020304", "MetadataHash", asAny(readConsumerGroupMetadataValue)},
		{"long AssignmentTimestamp", "0000 00000007 01 00 09 " + hexTime + " 00", "after the last field",
			asAny(readTargetAssignmentMetadataValue)},
		{"tagged field past the end", "0000 00000007 01 05 09 00", "truncated", asAny(readTargetAssignmentMetadataValue)},
		{"more tagged fields than bytes", "0000 00000007 ffffffff0f 05 00", "truncated", asAny(readTargetAssignmentMetadataValue)},
	} {
		got, err := c.decode(unhex(t, c.value))
		if !errors.Is(err, ErrBadRecord) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %+v, %v; want ErrBadRecord about %s", c.name, got, err, c.want)
		}
	}
}

// Generators of random values, shaped as decoding returns them: empty
// lists and bytes are nil, except a present, empty AssignmentEpochs.

var genString = rapid.StringN(0, 12, 48)

func genOptString() *rapid.Generator[*string] {
	return rapid.Custom(func(t *rapid.T) *string {
		if rapid.Bool().Draw(t, "null") {
			return nil
		}
		return ptr(genString.Draw(t, "s"))
	})
}

func genList[E any](elem *rapid.Generator[E], maxLen int) *rapid.Generator[[]E] {
	return rapid.Custom(func(t *rapid.T) []E {
		l := rapid.SliceOfN(elem, 0, maxLen).Draw(t, "list")
		if len(l) == 0 {
			return nil
		}
		return l
	})
}

func genTopicPartitions(withEpochs bool) *rapid.Generator[topicPartitions] {
	return rapid.Custom(func(t *rapid.T) topicPartitions {
		var id [16]byte
		copy(id[:], rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(t, "id"))
		tp := topicPartitions{TopicID: id, Partitions: genList(rapid.Int32(), 5).Draw(t, "partitions")}
		if withEpochs && rapid.Bool().Draw(t, "epochs") {
			tp.AssignmentEpochs = append([]int32{}, rapid.SliceOfN(rapid.Int32(), 0, 5).Draw(t, "epochs")...)
		}
		return tp
	})
}

var (
	genConsumerGroupMetadata = rapid.Custom(func(t *rapid.T) consumerGroupMetadata {
		v := consumerGroupMetadata{Epoch: rapid.Int32().Draw(t, "epoch"), MetadataHash: rapid.Int64().Draw(t, "hash")}
		if v.HasCreationTime = rapid.Bool().Draw(t, "hasCreation"); v.HasCreationTime {
			v.CreationTimeMs = rapid.Int64().Filter(func(ms int64) bool { return ms != -1 }).Draw(t, "creation")
		}
		return v
	})
	genMemberMetadata = rapid.Custom(func(t *rapid.T) memberMetadata {
		v := memberMetadata{
			InstanceID:           genOptString().Draw(t, "instance"),
			RackID:               genOptString().Draw(t, "rack"),
			ClientID:             genString.Draw(t, "client"),
			ClientHost:           genString.Draw(t, "host"),
			SubscribedTopicNames: genList(genString, 4).Draw(t, "topics"),
			SubscribedTopicRegex: genOptString().Draw(t, "regex"),
			RebalanceTimeoutMs:   rapid.Int32().Draw(t, "rebalance"),
			ServerAssignor:       genOptString().Draw(t, "assignor"),
		}
		if rapid.Bool().Draw(t, "classic") {
			v.Classic = &classicMemberMetadata{
				SessionTimeoutMs: rapid.Int32().Draw(t, "session"),
				SupportedProtocols: genList(rapid.Custom(func(t *rapid.T) classicProtocol {
					return classicProtocol{Name: genString.Draw(t, "name"), Metadata: genList(rapid.Byte(), 8).Draw(t, "metadata")}
				}), 3).Draw(t, "protocols"),
			}
		}
		return v
	})
	genTargetAssignmentMetadata = rapid.Custom(func(t *rapid.T) targetAssignmentMetadata {
		return targetAssignmentMetadata{AssignmentEpoch: rapid.Int32().Draw(t, "epoch"), AssignmentTimestampMs: rapid.Int64().Draw(t, "ts")}
	})
	genTargetAssignmentMember = rapid.Custom(func(t *rapid.T) targetAssignmentMember {
		return targetAssignmentMember{TopicPartitions: genList(genTopicPartitions(false), 4).Draw(t, "tps")}
	})
	genCurrentMemberAssignment = rapid.Custom(func(t *rapid.T) currentMemberAssignment {
		return currentMemberAssignment{
			MemberEpoch:                 rapid.Int32().Draw(t, "epoch"),
			PreviousMemberEpoch:         rapid.Int32().Draw(t, "previous"),
			State:                       rapid.Int8().Draw(t, "state"),
			AssignedPartitions:          genList(genTopicPartitions(true), 4).Draw(t, "assigned"),
			PartitionsPendingRevocation: genList(genTopicPartitions(true), 4).Draw(t, "pending"),
		}
	})
	genRegularExpression = rapid.Custom(func(t *rapid.T) regularExpression {
		return regularExpression{
			Topics:          genList(genString, 4).Draw(t, "topics"),
			MetadataVersion: rapid.Int64().Draw(t, "version"),
			TimestampMs:     rapid.Int64().Draw(t, "ts"),
		}
	})
)

// checkRoundTrip: decoding an encoding gives the value back, and decoding
// any truncation of it fails.
func checkRoundTrip[T any](t *testing.T, gen *rapid.Generator[T], encode func(T) []byte, decode func([]byte) (T, error)) {
	rapid.Check(t, func(rt *rapid.T) {
		v := gen.Draw(rt, "value")
		b := encode(v)
		got, err := decode(b)
		if err != nil || !reflect.DeepEqual(got, v) {
			rt.Fatalf("encoded %x, decoded %+v, %v; want %+v", b, got, err, v)
		}
		cut := rapid.IntRange(0, len(b)-1).Draw(rt, "cut")
		if _, err := decode(b[:cut]); !errors.Is(err, ErrBadRecord) {
			rt.Fatalf("%x truncated to %d bytes: %v", b, cut, err)
		}
	})
}

func TestConsumerRecordValuesRoundTrip(t *testing.T) {
	t.Run("ConsumerGroupMetadataValue", func(t *testing.T) {
		checkRoundTrip(t, genConsumerGroupMetadata, consumerGroupMetadataValue, readConsumerGroupMetadataValue)
	})
	t.Run("ConsumerGroupMemberMetadataValue", func(t *testing.T) {
		checkRoundTrip(t, genMemberMetadata, memberMetadataValue, readMemberMetadataValue)
	})
	t.Run("ConsumerGroupTargetAssignmentMetadataValue", func(t *testing.T) {
		checkRoundTrip(t, genTargetAssignmentMetadata, targetAssignmentMetadataValue, readTargetAssignmentMetadataValue)
	})
	t.Run("ConsumerGroupTargetAssignmentMemberValue", func(t *testing.T) {
		checkRoundTrip(t, genTargetAssignmentMember, targetAssignmentMemberValue, readTargetAssignmentMemberValue)
	})
	t.Run("ConsumerGroupCurrentMemberAssignmentValue", func(t *testing.T) {
		checkRoundTrip(t, genCurrentMemberAssignment, currentMemberAssignmentValue, readCurrentMemberAssignmentValue)
	})
	t.Run("ConsumerGroupRegularExpressionValue", func(t *testing.T) {
		checkRoundTrip(t, genRegularExpression, regularExpressionValue, readRegularExpressionValue)
	})
}

func TestConsumerRecordKeysRoundTrip(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		g, s := genString.Draw(rt, "group"), genString.Draw(rt, "second")
		keys := map[consumerKey][]byte{
			{Type: 3, Group: g}:            consumerGroupMetadataKey(g),
			{Type: 5, Group: g, Member: s}: memberMetadataKey(g, s),
			{Type: 6, Group: g}:            targetAssignmentMetadataKey(g),
			{Type: 7, Group: g, Member: s}: targetAssignmentMemberKey(g, s),
			{Type: 8, Group: g, Member: s}: currentMemberAssignmentKey(g, s),
			{Type: 16, Group: g, Regex: s}: regularExpressionKey(g, s),
		}
		for want, key := range keys {
			if got, err := readConsumerKey(key); err != nil || got != want {
				rt.Fatalf("key %x: decoded %+v, %v; want %+v", key, got, err, want)
			}
		}
	})
}

// checkStable decodes b; if that works, the value's encoding decodes to it
// again. Either way nothing panics and every error is ErrBadRecord.
func checkStable[T any](t *testing.T, b []byte, encode func(T) []byte, decode func([]byte) (T, error)) {
	v, err := decode(b)
	if err != nil {
		if !errors.Is(err, ErrBadRecord) {
			t.Fatalf("%x: %v is not ErrBadRecord", b, err)
		}
		return
	}
	again, err := decode(encode(v))
	if err != nil || !reflect.DeepEqual(again, v) {
		t.Fatalf("%x decoded to %+v, whose encoding decodes to %+v, %v", b, v, again, err)
	}
}

func FuzzConsumerRecords(f *testing.F) {
	for _, c := range valueCases() {
		f.Add(unhex(f, c.want))
		f.Add(unhex(f, c.withUnknown))
	}
	for _, c := range keyCases() {
		f.Add(c.key)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if k, err := readConsumerKey(b); err != nil {
			if !errors.Is(err, ErrBadRecord) {
				t.Fatalf("%x: %v is not ErrBadRecord", b, err)
			}
		} else if again := appendConsumerKey(k.Type, keyStrings(k)...); !bytes.Equal(again, b) {
			t.Fatalf("key %x decoded to %+v, which encodes as %x", b, k, again)
		}
		checkStable(t, b, consumerGroupMetadataValue, readConsumerGroupMetadataValue)
		checkStable(t, b, memberMetadataValue, readMemberMetadataValue)
		checkStable(t, b, targetAssignmentMetadataValue, readTargetAssignmentMetadataValue)
		checkStable(t, b, targetAssignmentMemberValue, readTargetAssignmentMemberValue)
		checkStable(t, b, currentMemberAssignmentValue, readCurrentMemberAssignmentValue)
		checkStable(t, b, regularExpressionValue, readRegularExpressionValue)
		checkStable(t, b, shareMemberMetadataValue, readShareMemberMetadataValue)
		checkStable(t, b, shareGroupMetadataValue, readShareGroupMetadataValue)
		checkStable(t, b, shareCurrentMemberAssignmentValue, readShareCurrentMemberAssignmentValue)
		checkStable(t, b, shareStatePartitionMetadataValue, readShareStatePartitionMetadataValue)
	})
}

// keyStrings is the strings a decoded key holds, in key order.
func keyStrings(k consumerKey) []string {
	switch k.Type {
	case consumerGroupMetadataKeyType, targetAssignmentMetadataKeyType,
		shareGroupMetadataKeyType, shareTargetAssignmentMetadataKeyType, shareStatePartitionMetadataKeyType:
		return []string{k.Group}
	case regularExpressionKeyType:
		return []string{k.Group, k.Regex}
	default:
		return []string{k.Group, k.Member}
	}
}

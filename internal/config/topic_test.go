package config

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestResolveTopicDefaults(t *testing.T) {
	got, err := ResolveTopic(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Topic{
		CleanupPolicy:          PolicyDelete,
		Compression:            CompressionProducer,
		GzipLevel:              -1,
		LZ4Level:               9,
		ZstdLevel:              3,
		DeleteRetention:        24 * time.Hour,
		FileDeleteDelay:        time.Minute,
		FlushMessages:          1<<63 - 1,
		FlushInterval:          Unlimited,
		IndexIntervalBytes:     4096,
		MaxCompactionLag:       Unlimited,
		MaxMessageBytes:        1048588,
		MessageDownconversion:  true,
		TimestampAfterMax:      Unlimited,
		TimestampBeforeMax:     Unlimited,
		TimestampDifferenceMax: Unlimited,
		TimestampType:          CreateTime,
		MinCleanableDirtyRatio: 0.5,
		MinInsyncReplicas:      1,
		RetentionBytes:         BytesLimit{},
		Retention:              Limit(7 * 24 * time.Hour),
		SegmentBytes:           1 << 30,
		SegmentIndexBytes:      10 << 20,
		SegmentMaxAge:          7 * 24 * time.Hour,
		LocalRetention:         Limit(7 * 24 * time.Hour),
		LocalRetentionBytes:    BytesLimit{},
	}
	if got != want {
		t.Fatalf("ResolveTopic(nil, nil) =\n%+v\nwant\n%+v", got, want)
	}
	// A loaded broker with every default resolves the same.
	b := mustLoad(t, "", nil, nil)
	if got2, err := ResolveTopic(nil, b); err != nil || got2 != want {
		t.Fatalf("with default broker: %+v, %v", got2, err)
	}
}

func TestResolveTopicPrecedence(t *testing.T) {
	b := mustLoad(t, "", nil, map[string]string{
		"log.retention.hours": "1",
		"log.segment.bytes":   "4096",
		"compression.type":    "zstd",
		"log.cleanup.policy":  "compact",
	})
	tests := []struct {
		name      string
		overrides map[string]string
		check     func(Topic) bool
	}{
		{"broker beats default: retention", nil, func(t Topic) bool { return t.Retention == Limit(time.Hour) }},
		{"broker beats default: segment", nil, func(t Topic) bool { return t.SegmentBytes == 4096 }},
		{"broker beats default: same-name key", nil, func(t Topic) bool { return t.Compression == CompressionZstd }},
		{"broker beats default: list", nil, func(t Topic) bool { return t.CleanupPolicy == PolicyCompact }},
		{"override beats broker", map[string]string{"retention.ms": "1000"}, func(t Topic) bool { return t.Retention == Limit(time.Second) }},
		{"override -1 is unlimited", map[string]string{"retention.ms": "-1"}, func(t Topic) bool { return t.Retention == Unlimited }},
		{"override 0 is a limit", map[string]string{"retention.bytes": "0"}, func(t Topic) bool { return t.RetentionBytes == BytesLimit{0, true} }},
		{"override trimmed", map[string]string{"segment.bytes": " 2048 "}, func(t Topic) bool { return t.SegmentBytes == 2048 }},
		{"override list", map[string]string{"cleanup.policy": "delete,compact"}, func(t Topic) bool {
			return t.CleanupPolicy.Deletes() && t.CleanupPolicy.Compacts() && t.CleanupPolicy.String() == "compact,delete"
		}},
		{"override enum", map[string]string{"message.timestamp.type": "LogAppendTime"}, func(t Topic) bool { return t.TimestampType == LogAppendTime }},
		{"no synonym: default", nil, func(t Topic) bool { return !t.RemoteStorageEnable }},
		{"local -2 follows total", map[string]string{"retention.ms": "5000"}, func(t Topic) bool { return t.LocalRetention == Limit(5*time.Second) }},
		{"local -1 unlimited", map[string]string{"local.retention.ms": "-1"}, func(t Topic) bool { return t.LocalRetention == Unlimited }},
		{"local bytes set", map[string]string{"retention.bytes": "100", "local.retention.bytes": "10"}, func(t Topic) bool {
			return t.LocalRetentionBytes == BytesLimit{10, true} && t.RetentionBytes == BytesLimit{100, true}
		}},
		{"Long.MaxValue ms is unlimited", map[string]string{"max.compaction.lag.ms": "9223372036854775807"}, func(t Topic) bool { return t.MaxCompactionLag == Unlimited }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolveTopic(tt.overrides, b)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(got) {
				t.Fatalf("got %+v", got)
			}
		})
	}
}

func TestValidateTopicOverrides(t *testing.T) {
	tests := []struct {
		m       map[string]string
		wantKey string
		want    string
	}{
		{map[string]string{"retention.ms": "1", "cleanup.policy": "compact"}, "", ""},
		{map[string]string{"retention.days": "1"}, "retention.days", "unknown topic config"},
		{map[string]string{"log.retention.ms": "1"}, "log.retention.ms", "unknown topic config"},
		{map[string]string{"retention.ms": "1", "segment.bytes": "10"}, "segment.bytes", "at least 1024"},
		{map[string]string{"compression.type": "brotli"}, "compression.type", "producer, uncompressed, gzip, snappy, lz4, zstd"},
		{map[string]string{"cleanup.policy": "compact,archive"}, "cleanup.policy", "list of: delete, compact"},
		{map[string]string{"unclean.leader.election.enable": "1"}, "unclean.leader.election.enable", "true or false"},
	}
	for _, tt := range tests {
		err := ValidateTopicOverrides(tt.m)
		if tt.wantKey == "" {
			if err != nil {
				t.Errorf("%v: %v", tt.m, err)
			}
			continue
		}
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != tt.wantKey || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: err = %v, want *Error for %s containing %q", tt.m, err, tt.wantKey, tt.want)
		}
		if _, rerr := ResolveTopic(tt.m, nil); rerr == nil {
			t.Errorf("%v: ResolveTopic accepted what ValidateTopicOverrides rejects", tt.m)
		}
	}
}

func TestResolveTopicTieredRules(t *testing.T) {
	off := mustLoad(t, "", nil, map[string]string{"remote.log.storage.system.enable": "false"})
	tests := []struct {
		name      string
		overrides map[string]string
		b         *Broker
		wantKey   string
	}{
		{"ok", map[string]string{"remote.storage.enable": "true", "local.retention.ms": "1000"}, nil, ""},
		{"ok unlimited total", map[string]string{"remote.storage.enable": "true", "retention.bytes": "-1", "local.retention.bytes": "-1"}, nil, ""},
		{"broker disabled", map[string]string{"remote.storage.enable": "true"}, off, "remote.storage.enable"},
		{"compacted", map[string]string{"remote.storage.enable": "true", "cleanup.policy": "compact,delete"}, nil, "cleanup.policy"},
		{"local above total", map[string]string{"remote.storage.enable": "true", "retention.ms": "1000", "local.retention.ms": "2000"}, nil, "local.retention.ms"},
		{"local unlimited under a limit", map[string]string{"remote.storage.enable": "true", "retention.bytes": "1000", "local.retention.bytes": "-1"}, nil, "local.retention.bytes"},
		{"local equal to total", map[string]string{"remote.storage.enable": "true", "retention.ms": "1000", "local.retention.ms": "1000"}, nil, ""},
		{"local bytes one above total", map[string]string{"remote.storage.enable": "true", "retention.bytes": "1000", "local.retention.bytes": "1001"}, nil, "local.retention.bytes"},
		{"rules only apply when tiered", map[string]string{"retention.ms": "1000", "local.retention.ms": "2000"}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ResolveTopic(tt.overrides, tt.b)
			var ce *Error
			switch {
			case tt.wantKey == "" && err != nil:
				t.Fatal(err)
			case tt.wantKey != "" && (!errors.As(err, &ce) || ce.Key != tt.wantKey):
				t.Fatalf("err = %v, want *Error for %s", err, tt.wantKey)
			}
		})
	}
}

// The broker's retention chain, as a topic sees it, matches a naive model of
// Kafka's rule: ms if set, else minutes, else hours (default 168); negative is
// unlimited.
func TestRetentionChainModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		flags := map[string]string{}
		var ms, minutes, hours *int64
		opt := func(name string, lo, hi int64) *int64 {
			if !rapid.Bool().Draw(t, name+"?") {
				return nil
			}
			v := rapid.Int64Range(lo, hi).Draw(t, name)
			flags[name] = strconv.FormatInt(v, 10)
			return &v
		}
		ms = opt("log.retention.ms", -1, 1<<50)
		minutes = opt("log.retention.minutes", -1, 1<<31-1)
		hours = opt("log.retention.hours", -1, 1<<31-1)
		want := int64(168 * 3_600_000)
		switch {
		case ms != nil:
			want = *ms
		case minutes != nil:
			want = *minutes * 60_000
		case hours != nil:
			want = *hours * 3_600_000
		}
		wantLimit := Unlimited // also beyond ~292 years, which a Duration cannot hold
		if want >= 0 && want <= maxMs {
			wantLimit = Limit(time.Duration(want) * time.Millisecond)
		}
		b, err := LoadBroker("", nil, flags)
		if err != nil {
			t.Fatal(err)
		}
		top, err := ResolveTopic(nil, b)
		if err != nil {
			t.Fatal(err)
		}
		if b.Retention != wantLimit || top.Retention != wantLimit {
			t.Fatalf("broker %v, topic %v, want %v", b.Retention, top.Retention, wantLimit)
		}
	})
}

// local.retention.ms and .bytes of -2 (their default) follow the total
// retention, whatever it is.
func TestLocalRetentionFollowsTotal(t *testing.T) {
	top, err := ResolveTopic(map[string]string{"retention.ms": "5000", "retention.bytes": "1000"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if top.LocalRetention != Limit(5*time.Second) || top.LocalRetentionBytes != (BytesLimit{1000, true}) {
		t.Fatalf("local retention %v, %v; want 5s, 1000 bytes", top.LocalRetention, top.LocalRetentionBytes)
	}
	b := mustLoad(t, "", nil, map[string]string{"log.retention.bytes": "2000"})
	if b.LocalRetentionBytes != (BytesLimit{2000, true}) {
		t.Fatalf("broker LocalRetentionBytes = %v, want 2000 bytes", b.LocalRetentionBytes)
	}
}

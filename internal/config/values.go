package config

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// TimeLimit is an optional time limit. Set == false means "no limit" (Kafka's
// -1, or a value too large for a time.Duration, such as Long.MaxValue ms).
type TimeLimit struct {
	Duration time.Duration
	Set      bool
}

// Unlimited is the TimeLimit that never expires.
var Unlimited = TimeLimit{}

// Limit returns a set TimeLimit of d.
func Limit(d time.Duration) TimeLimit { return TimeLimit{Duration: d, Set: true} }

func (l TimeLimit) String() string {
	if !l.Set {
		return "unlimited"
	}
	return l.Duration.String()
}

// BytesLimit is an optional size limit. Set == false means "no limit" (Kafka's
// -1).
type BytesLimit struct {
	Bytes int64
	Set   bool
}

func (l BytesLimit) String() string {
	if !l.Set {
		return "unlimited"
	}
	return fmt.Sprintf("%d bytes", l.Bytes)
}

// maxMs is the largest millisecond count a time.Duration holds (~292 years).
const maxMs = math.MaxInt64 / int64(time.Millisecond)

// msDuration converts a validated non-negative millisecond count, saturating
// at the largest Duration.
func msDuration(ms int64) time.Duration {
	if ms > maxMs {
		return math.MaxInt64
	}
	return time.Duration(ms) * time.Millisecond
}

// secondsDuration converts a validated non-negative second count,
// saturating at the largest Duration.
func secondsDuration(s int64) time.Duration {
	if s > maxMs/1000 {
		return math.MaxInt64
	}
	return time.Duration(s) * time.Second
}

// msLimit turns Kafka's millisecond limit into a TimeLimit: negative means no
// limit, and so does anything beyond ~292 years, which no log outlives.
func msLimit(ms int64) TimeLimit {
	if ms < 0 || ms > maxMs {
		return Unlimited
	}
	return Limit(time.Duration(ms) * time.Millisecond)
}

// bytesLimit turns Kafka's byte limit into a BytesLimit: negative means none.
func bytesLimit(n int64) BytesLimit {
	if n < 0 {
		return BytesLimit{}
	}
	return BytesLimit{Bytes: n, Set: true}
}

// CleanupPolicy is the set of cleanup.policy values. The zero value is
// invalid: a topic always deletes, compacts, or both.
type CleanupPolicy uint8

const (
	PolicyDelete  CleanupPolicy = 1 << iota // cleanup.policy=delete
	PolicyCompact                           // cleanup.policy=compact
)

// Deletes reports whether old segments are deleted by retention.
func (p CleanupPolicy) Deletes() bool { return p&PolicyDelete != 0 }

// Compacts reports whether the log is compacted.
func (p CleanupPolicy) Compacts() bool { return p&PolicyCompact != 0 }

func (p CleanupPolicy) String() string {
	var s []string
	if p.Compacts() {
		s = append(s, "compact")
	}
	if p.Deletes() {
		s = append(s, "delete")
	}
	return strings.Join(s, ",")
}

func parseCleanupPolicy(v string) CleanupPolicy {
	var p CleanupPolicy
	for _, it := range splitList(v) {
		switch it {
		case "delete":
			p |= PolicyDelete
		case "compact":
			p |= PolicyCompact
		default:
			panic(fmt.Sprintf("config: unvalidated cleanup.policy %q", v))
		}
	}
	return p
}

// Compression is compression.type. The zero value is invalid.
type Compression uint8

const (
	CompressionProducer     Compression = iota + 1 // keep what the producer sent
	CompressionUncompressed                        // store uncompressed
	CompressionGzip
	CompressionSnappy
	CompressionLZ4
	CompressionZstd
)

var compressionNames = []string{"producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"}

func (c Compression) String() string {
	if c < CompressionProducer || c > CompressionZstd {
		return fmt.Sprintf("Compression(%d)", uint8(c))
	}
	return compressionNames[c-1]
}

func parseCompression(v string) Compression {
	for i, n := range compressionNames {
		if v == n {
			return Compression(i + 1)
		}
	}
	panic(fmt.Sprintf("config: unvalidated compression.type %q", v))
}

// TimestampType is message.timestamp.type. The zero value is invalid.
type TimestampType uint8

const (
	CreateTime    TimestampType = iota + 1 // the producer's timestamp
	LogAppendTime                          // the broker's clock at append
)

func (t TimestampType) String() string {
	switch t {
	case CreateTime:
		return "CreateTime"
	case LogAppendTime:
		return "LogAppendTime"
	}
	return fmt.Sprintf("TimestampType(%d)", uint8(t))
}

func parseTimestampType(v string) TimestampType {
	switch v {
	case "CreateTime":
		return CreateTime
	case "LogAppendTime":
		return LogAppendTime
	}
	panic(fmt.Sprintf("config: unvalidated message.timestamp.type %q", v))
}

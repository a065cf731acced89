package base

import "fmt"

// Offset is a position in a partition's log.
type Offset int64

// Range is the half-open offset range [Start, End).
type Range struct {
	Start Offset
	End   Offset
}

// Len is the number of offsets in r.
func (r Range) Len() int64 { return int64(r.End - r.Start) }

// Empty reports whether r holds no offset.
func (r Range) Empty() bool { return r.End <= r.Start }

// Contains reports whether o is in [Start, End).
func (r Range) Contains(o Offset) bool { return o >= r.Start && o < r.End }

func (r Range) String() string { return fmt.Sprintf("[%d, %d)", r.Start, r.End) }

// Epoch is a partition leader epoch.
type Epoch int32

// ProducerID identifies an idempotent or transactional producer.
type ProducerID int64

// TopicPartition names one partition of one topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (tp TopicPartition) String() string { return fmt.Sprintf("%s-%d", tp.Topic, tp.Partition) }

// TopicID is a topic's 16-byte UUID, as Kafka assigns them.
type TopicID [16]byte

// IsZero reports whether id is the all-zero (absent) topic id.
func (id TopicID) IsZero() bool { return id == TopicID{} }

package sharestate

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// TopicName is the internal topic of share-partition state. A
// share-partition's coordinator partition is chosen by its Key, as Kafka's
// share coordinator hashes SharePartitionKey.asCoordinatorKey.
const TopicName = "__share_group_state"

// MaxVersions are the request versions the coordinator serves, by API key,
// from 0 up to the value. WriteShareGroupState v1 and
// ReadShareGroupStateSummary v1 carry the delivery complete count
// (KIP-1226).
var MaxVersions = map[int16]int16{
	kmsg.InitializeShareGroupState.Int16():  0,
	kmsg.ReadShareGroupState.Int16():        0,
	kmsg.WriteShareGroupState.Int16():       1,
	kmsg.DeleteShareGroupState.Int16():      0,
	kmsg.ReadShareGroupStateSummary.Int16(): 1,
}

// Key is Kafka's coordinator key of a share-partition
// (SharePartitionKey.asCoordinatorKey): "group:topicId:partition", with the
// topic id as Kafka's Uuid.toString writes it, URL-safe base64 without
// padding.
func Key(group string, topicID [16]byte, partition int32) string {
	return group + ":" + base64.RawURLEncoding.EncodeToString(topicID[:]) + ":" + strconv.FormatInt(int64(partition), 10)
}

// Options wire a coordinator to the broker.
type Options struct {
	// PartitionCount reports how many partitions the topic with this id
	// has in the broker's current metadata image; ok is false when there
	// is no such topic. Kafka's share coordinator answers
	// UNKNOWN_TOPIC_OR_PARTITION for a partition outside its image. It
	// must be safe to call from the coordinator's goroutine and must not
	// block. Nil means the caller has checked: every topic id but the
	// zero one is taken to exist, with every partition.
	PartitionCount func(topicID [16]byte) (count int32, ok bool)
}

// Coordinator holds the share-partitions of one __share_group_state
// partition. It implements runtime.Shard. Not safe for concurrent use.
type Coordinator struct {
	opts   Options
	states map[partitionKey]*shareState
	// sweptAt is when Tick last looked for states of deleted topics.
	sweptAt time.Time
}

// deletedTopicSweep is how often Tick looks for the states of deleted
// topics: a deleted topic's state is dropped within it.
const deletedTopicSweep = time.Second

var _ runtime.Shard = (*Coordinator)(nil)

// shareState is one share-partition: its last snapshot with every later
// update combined in, and the fencing epochs.
type shareState struct {
	snapshotValue
	// fenceLeaderEpoch and fenceStateEpoch are the highest leader and
	// state epochs that any record of this key has carried since it was
	// last deleted (Kafka's leaderEpochMap and stateEpochMap). Requests
	// are fenced against them, not against the snapshot's own epochs: an
	// Initialize writes leader epoch 0 but does not lower the fence.
	fenceLeaderEpoch int32
	fenceStateEpoch  int32
}

// New returns an empty coordinator.
func New(opts Options) *Coordinator {
	return &Coordinator{opts: opts, states: map[partitionKey]*shareState{}}
}

// Handle applies one request. Requests of other types than those in
// MaxVersions, and events, are a programmer error: the api layer routes
// only these here.
func (c *Coordinator) Handle(op runtime.Op, now time.Time) runtime.Result {
	if op.Req == nil {
		panic(fmt.Sprintf("sharestate: Handle of event %T; the share coordinator serves none", op.Event))
	}
	var res runtime.Result
	nowMs := now.UnixMilli()
	var resp kmsg.Response
	switch req := op.Req.(type) {
	case *kmsg.InitializeShareGroupStateRequest:
		resp = c.initialize(req, nowMs, &res)
	case *kmsg.ReadShareGroupStateRequest:
		resp = c.read(req, nowMs, &res)
	case *kmsg.WriteShareGroupStateRequest:
		resp = c.write(req, nowMs, &res)
	case *kmsg.DeleteShareGroupStateRequest:
		resp = c.deleteState(req, &res)
	case *kmsg.ReadShareGroupStateSummaryRequest:
		resp = c.readSummary(req)
	default:
		panic(fmt.Sprintf("sharestate: Handle of unserved request %T", op.Req))
	}
	res.Replies = append(res.Replies, runtime.Reply{Token: op.Token, Resp: resp})
	return res
}

// Tick deletes, with tombstones, the state of share-partitions whose topic
// the metadata no longer has, as Kafka's share coordinator does when a
// topic is deleted (KAFKA-19201): nothing will read or delete it again
// (DeleteShareGroupState of an unknown topic is refused), and a topic
// created again under the name has another id. A topic id leaves the
// metadata only by a deletion: the broker's image is at least as new as
// its leadership of this partition, and every state here was initialized
// while its topic was known. Nothing else here expires; Kafka's periodic
// snapshot of cold partitions exists to bound the ShareUpdate records a
// load replays, and this coordinator writes only snapshots.
// The runtime ticks often; the sweep runs at most every deletedTopicSweep.
func (c *Coordinator) Tick(now time.Time) runtime.Result {
	var res runtime.Result
	if c.opts.PartitionCount == nil || now.Sub(c.sweptAt) < deletedTopicSweep {
		return res
	}
	c.sweptAt = now
	var gone []partitionKey
	for k := range c.states {
		if _, ok := c.opts.PartitionCount(k.topicID); !ok {
			gone = append(gone, k)
		}
	}
	slices.SortFunc(gone, comparePartitionKeys) // records in a stable order
	for _, k := range gone {
		c.remove(k, &res)
	}
	return res
}

// persist writes v as the new snapshot of k and applies it, through the
// same code Replay uses, so the live state is the replayed one.
func (c *Coordinator) persist(k partitionKey, v snapshotValue, res *runtime.Result) {
	res.Records = append(res.Records, runtime.Record{Key: appendKey(snapshotKeyType, k), Value: v.appendTo(nil)})
	c.applySnapshot(k, v)
}

// remove deletes k and writes its tombstone (always a ShareSnapshot key,
// as Kafka writes it).
func (c *Coordinator) remove(k partitionKey, res *runtime.Result) {
	res.Records = append(res.Records, runtime.Record{Key: appendKey(snapshotKeyType, k)})
	delete(c.states, k)
}

// applySnapshot replaces k's state by v. The fences only rise while the
// key lives (Kafka's maybeUpdateLeaderEpochMap and maybeUpdateStateEpochMap).
func (c *Coordinator) applySnapshot(k partitionKey, v snapshotValue) {
	v.batches = combineBatches(nil, v.batches, v.start) // canonical, from start on
	next := &shareState{snapshotValue: v, fenceLeaderEpoch: v.leaderEpoch, fenceStateEpoch: v.stateEpoch}
	if old := c.states[k]; old != nil {
		next.fenceLeaderEpoch = max(old.fenceLeaderEpoch, v.leaderEpoch)
		next.fenceStateEpoch = max(old.fenceStateEpoch, v.stateEpoch)
	}
	c.states[k] = next
}

// applyUpdate combines u into k's state as Kafka's ShareCoordinatorShard
// merges a ShareUpdate: the start offset and leader epoch change only when
// u has them, the delivery complete count is u's (unknown included), the
// batches are combined from the new start offset on, and the snapshot
// epoch, state epoch and timestamps stay. An update with no state before it
// makes one, with state epoch 0 and no timestamps, as in Kafka.
func (c *Coordinator) applyUpdate(k partitionKey, u updateValue) {
	old := c.states[k]
	if old == nil {
		c.states[k] = &shareState{
			snapshotValue: snapshotValue{
				snapshotEpoch:    u.snapshotEpoch,
				leaderEpoch:      u.leaderEpoch,
				start:            u.start,
				deliveryComplete: u.deliveryComplete,
				batches:          combineBatches(nil, u.batches, u.start),
			},
			fenceLeaderEpoch: u.leaderEpoch,
		}
		return
	}
	next := *old
	if u.start.ok {
		next.start = u.start
	}
	if u.leaderEpoch != -1 {
		next.leaderEpoch = u.leaderEpoch
	}
	next.deliveryComplete = u.deliveryComplete
	next.batches = combineBatches(old.batches, u.batches, next.start)
	next.fenceLeaderEpoch = max(old.fenceLeaderEpoch, u.leaderEpoch)
	c.states[k] = &next
}

// topicKnown reports whether the metadata knows partition of topicID.
func (c *Coordinator) topicKnown(topicID base.TopicID, partition int32) bool {
	if topicID.IsZero() {
		return false // Kafka never gives a topic the zero id
	}
	if c.opts.PartitionCount == nil {
		return true
	}
	count, ok := c.opts.PartitionCount(topicID)
	return ok && partition < count
}

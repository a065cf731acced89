package runtime

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Op is one request, or one event, handed to a Shard.
type Op struct {
	// Token names the op until its reply is released. The runtime chooses it;
	// it is unique among the ops outstanding on one coordinator partition.
	Token uint64
	// Req is the decoded request. A shard serves a fixed set of request
	// types; anything else is a programmer error. Req is nil for an event.
	Req kmsg.Request
	// Event is what the broker itself submitted (Runtime.SubmitEvent): a
	// value of a type the shard defines, such as "the markers of this
	// transaction are written". Nil for a request.
	Event any
	// ClientID and ClientHost come from the request header and the
	// connection; some coordinators record them (group members do).
	ClientID   string
	ClientHost string
	// TopicVisible is Client.TopicVisible: the topics the client may see
	// (nil: every topic), such as those a subscription's regular
	// expression may match.
	TopicVisible func(topic string) bool
}

// Record is one key/value pair of a coordinator's internal topic. A nil Value
// is a tombstone.
//
// Txn and Marker are set only on records read back by Log.ReadFrom: Txn is
// the producer of a record in a transactional batch; Marker is set, with
// Key and Value nil, for a transaction marker (a control batch).
type Record struct {
	Key   []byte
	Value []byte

	Txn    *Producer
	Marker *Marker
}

// Producer is a transactional producer: its id and epoch.
type Producer struct {
	ID    int64
	Epoch int16
}

// Marker is a transaction marker: it ends Producer's transaction on the
// partition it is written to, committing or aborting it.
type Marker struct {
	Producer         Producer
	Commit           bool
	CoordinatorEpoch int32
}

// Reply completes the op named by Token: a request's with Resp, an event's
// with Err (nil for success).
type Reply struct {
	Token uint64
	Resp  kmsg.Response
	Err   error
}

// Result is what a shard wants done after an op or a tick: append Records,
// then, once they are durable, send Replies. Replies may complete ops other
// than the one just handled (a JoinGroup waits for the rebalance that the
// last member's JoinGroup completes), and an op may have no reply yet.
//
// Txn, when set, makes Records one transactional batch of that producer
// (the group coordinator's TxnOffsetCommit). Markers are appended after
// Records, one control batch each. Effects are handed to Options.OnEffects
// once everything above is durable, before the replies are released: work
// for other parts of the broker, such as writing a transaction's markers.
//
// WakeAt, from Tick, is the soonest timer still ahead that the tick saw (zero:
// none): the partition ticks again at that moment, so a timer fires on time
// rather than at the next periodic tick (Kafka's session and rebalance
// timeouts fire when due). A timer armed between ticks is seen by the next
// periodic one.
type Result struct {
	Records []Record
	Txn     *Producer
	Markers []Marker
	Replies []Reply
	Effects []any
	WakeAt  time.Time
}

// Shard is the pure state machine of one coordinator partition. It does no
// I/O and starts no goroutines; the runtime calls it from one goroutine.
//
// Contract:
//   - Every op handed to Handle is eventually answered by exactly one Reply,
//     from Handle or from a later Handle or Tick, unless the shard is
//     discarded (the runtime then answers outstanding ops itself).
//   - The state after Replay of every record the shard produced (in order)
//     is the state the shard made durable: what a reload must recover.
//   - Tick is called right after loading and then periodically; timers
//     (session and rebalance timeouts, expiry) only fire inside Tick.
type Shard interface {
	Handle(op Op, now time.Time) Result
	Tick(now time.Time) Result
	Replay(key, value []byte) error
}

// TxnReplayer is implemented by shards whose partitions hold transactional
// records or markers: a load hands those to it instead of to Replay. A
// shard that never writes them need not implement it; the load of such a
// partition then fails on one.
type TxnReplayer interface {
	ReplayTxn(p Producer, key, value []byte) error
	ReplayMarker(m Marker) error
}

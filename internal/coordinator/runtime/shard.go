package runtime

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Op is one request handed to a Shard.
type Op struct {
	// Token names the op until its reply is released. The runtime chooses it;
	// it is unique among the ops outstanding on one coordinator partition.
	Token uint64
	// Req is the decoded request. A shard serves a fixed set of request
	// types; anything else is a programmer error.
	Req kmsg.Request
	// ClientID and ClientHost come from the request header and the
	// connection; some coordinators record them (group members do).
	ClientID   string
	ClientHost string
}

// Record is one key/value pair of a coordinator's internal topic. A nil Value
// is a tombstone.
type Record struct {
	Key   []byte
	Value []byte
}

// Reply completes the op named by Token with Resp.
type Reply struct {
	Token uint64
	Resp  kmsg.Response
}

// Result is what a shard wants done after an op or a tick: append Records,
// then, once they are durable, send Replies. Replies may complete ops other
// than the one just handled (a JoinGroup waits for the rebalance that the
// last member's JoinGroup completes), and an op may have no reply yet.
type Result struct {
	Records []Record
	Replies []Reply
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

package runtime

import (
	"errors"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
)

// Log reads a coordinator partition for loading.
type Log interface {
	// ReadFrom returns records stored at offsets >= from, in log order, and
	// next, the offset after the last one returned. next == from means no
	// record remains.
	ReadFrom(from base.Offset) (recs []Record, next base.Offset, err error)
}

// Appender appends to a coordinator partition.
type Appender interface {
	// Append appends recs as one batch. The records are durable once wait
	// returns nil. An error from Append or wait means they may not be.
	Append(recs []Record) (wait func() error, err error)
}

// TxnAppender is implemented by Appenders of partitions whose shards write
// transactional batches or markers (Result.Txn, Result.Markers). Durability
// is as for Append.
type TxnAppender interface {
	AppendTxn(p Producer, recs []Record) (wait func() error, err error)
	AppendMarker(m Marker) (wait func() error, err error)
}

// ErrNotLeader is what an Appender wraps when this broker no longer leads
// the partition; ops then fail with NOT_COORDINATOR instead of
// COORDINATOR_NOT_AVAILABLE.
var ErrNotLeader = errors.New("runtime: not the leader of the coordinator partition")

// Ticker delivers the ticks that fire a shard's timers.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

// NewRealTicker returns a Ticker factory over time.Ticker.
func NewRealTicker(interval time.Duration) func() Ticker {
	return func() Ticker { return realTicker{time.NewTicker(interval)} }
}

type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time { return r.t.C }
func (r realTicker) Stop()               { r.t.Stop() }

// Options wire a Runtime to its shards and its environment.
type Options struct {
	// NewShard returns an empty shard for a partition, to load into.
	NewShard func(partition int32) (Shard, error)
	// Open returns the log and appender of a partition this broker leads.
	Open func(partition int32) (Log, Appender, error)
	// ErrorResponse answers req with code in every error field (loading,
	// not the coordinator, failed append).
	ErrorResponse func(req kmsg.Request, code int16) kmsg.Response
	// Clock gives the now of ops and ticks.
	Clock clock.Clock
	// NewTicker makes each partition's ticker (NewRealTicker in production).
	NewTicker func() Ticker
	// MaxQueuedOps bounds the ops waiting for one partition's goroutine;
	// beyond it Submit answers COORDINATOR_NOT_AVAILABLE (retriable).
	MaxQueuedOps int
	// LoadHold is how long an op that arrives while its partition loads
	// may wait for the load instead of COORDINATOR_LOAD_IN_PROGRESS (some
	// clients do not retry that error on every request); 0 refuses at
	// once. An op held longer is refused between two reads of the load.
	LoadHold time.Duration
	// Logger gets load and append failures; nil discards them.
	Logger *slog.Logger
	// OnEffects receives a Result's Effects, from the partition's goroutine,
	// once its records are durable. It must not block. Required only if a
	// shard returns effects.
	OnEffects func(partition int32, effects []any)
	// After is the one-shot timer of a tick's Result.WakeAt; nil means
	// time.After.
	After func(time.Duration) <-chan time.Time
}

// Validate reports the first missing or out-of-range option.
func (o Options) Validate() error {
	switch {
	case o.NewShard == nil:
		return errors.New("runtime: Options.NewShard is nil")
	case o.Open == nil:
		return errors.New("runtime: Options.Open is nil")
	case o.ErrorResponse == nil:
		return errors.New("runtime: Options.ErrorResponse is nil")
	case o.Clock == nil:
		return errors.New("runtime: Options.Clock is nil")
	case o.NewTicker == nil:
		return errors.New("runtime: Options.NewTicker is nil")
	case o.MaxQueuedOps < 1:
		return errors.New("runtime: Options.MaxQueuedOps is below 1")
	case o.LoadHold < 0:
		return errors.New("runtime: Options.LoadHold is negative")
	}
	return nil
}

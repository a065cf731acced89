package replication

import (
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/partition"
)

// FetchersOptions configure the follower fetchers of one broker, with
// Kafka's replica.fetch.* names.
type FetchersOptions struct {
	// NodeID is this broker's id, sent as the fetch's replica id.
	NodeID int32
	// BrokerEpoch returns this broker's current registration epoch.
	BrokerEpoch func() int64
	// Client returns a connection to broker id (for example a franz-go
	// client's Broker(id)); it is asked again for every request.
	Client func(id int32) (kmsg.Requestor, error)
	// MaxWait is replica.fetch.wait.max.ms, MinBytes replica.fetch.min.bytes,
	// MaxBytes replica.fetch.response.max.bytes, PartitionMaxBytes
	// replica.fetch.max.bytes and Backoff replica.fetch.backoff.ms.
	MaxWait           time.Duration
	MinBytes          int32
	MaxBytes          int32
	PartitionMaxBytes int32
	Backoff           time.Duration
	// RequestTimeout bounds a request beyond MaxWait (a leader that does
	// not answer).
	RequestTimeout time.Duration
	// Tier, when set, is the remote tier a follower rebuilds its state
	// from (KIP-405) when its leader answers OFFSET_MOVED_TO_TIERED_STORAGE
	// or when it bootstraps from the tiered offset; nil (a broker without
	// tiering) backs such a partition off, fetch after fetch.
	Tier TierState
	// LastTieredOffsetBootstrap is follower.fetch.last.tiered.offset.enable
	// (KIP-1023): an empty follower of a tiered partition starts at its
	// leader's earliest pending upload offset (TieredBootstrap), with its
	// state rebuilt from the remote tier, instead of fetching every offset
	// from the log start. It does nothing without Tier.
	LastTieredOffsetBootstrap bool
	// Throttle, when set, is this broker's follower replication throttle
	// (KIP-73); nil throttles nothing.
	Throttle FollowerThrottle
	Clock    clock.Clock
	Logger   *slog.Logger
}

// FollowerThrottle is the follower's side of the replication throttles
// (KIP-73): the partitions it names are left out of a fetch while the
// bytes fetched for them are over the broker's
// follower.replication.throttled.rate, and fetched again after the fetch
// backoff. Safe for concurrent use.
type FollowerThrottle interface {
	// Throttled reports whether this broker's replica of tp is throttled:
	// its topic's follower.replication.throttled.replicas names it and it
	// is out of the ISR.
	Throttled(tp base.TopicPartition) bool
	// Exceeded reports whether the throttled partitions' bytes are over
	// the rate now.
	Exceeded() bool
	// Record counts bytes fetched for throttled partitions.
	Record(bytes int64)
}

// Validate reports the first invalid option.
func (o *FetchersOptions) Validate() error {
	switch {
	case o.NodeID < 0:
		return errors.New("replication: FetchersOptions.NodeID is negative")
	case o.BrokerEpoch == nil || o.Client == nil || o.Clock == nil:
		return errors.New("replication: FetchersOptions.BrokerEpoch, Client and Clock are required")
	case o.MaxWait < 0 || o.MinBytes < 1 || o.MaxBytes < 1 || o.PartitionMaxBytes < 1 || o.Backoff < 0 || o.RequestTimeout <= 0:
		return errors.New("replication: FetchersOptions: a negative wait or backoff, or a size below 1")
	}
	return nil
}

// Fetchers keeps one fetcher per leader broker for the partitions this
// broker follows (Kafka's ReplicaFetcherManager). Safe for concurrent use.
type Fetchers struct {
	opts FetchersOptions

	mu       sync.Mutex
	closed   bool
	byLeader map[int32]*fetcher
	leaderOf map[base.TopicPartition]int32
}

// NewFetchers returns fetchers that run until Close.
func NewFetchers(o FetchersOptions) (*Fetchers, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.Logger = o.Logger.With("component", "replica-fetcher", "node", o.NodeID)
	return &Fetchers{opts: o, byLeader: map[int32]*fetcher{}, leaderOf: map[base.TopicPartition]int32{}}, nil
}

// Follow replicates p from broker leader in leaderEpoch, moving it from the
// fetcher of its previous leader if it had one.
func (fs *Fetchers) Follow(p *partition.Partition, leader int32, leaderEpoch base.Epoch) {
	fs.follow(p, leader, leaderEpoch)
}

func (fs *Fetchers) follow(r Replica, leader int32, leaderEpoch base.Epoch) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.closed {
		return
	}
	tp := r.TP()
	if old, ok := fs.leaderOf[tp]; ok && old != leader {
		fs.removeLocked(tp)
	}
	f, ok := fs.byLeader[leader]
	if !ok {
		f = newFetcher(&fs.opts, leader)
		fs.byLeader[leader] = f
	}
	fs.leaderOf[tp] = leader
	f.set(r, leaderEpoch)
}

// Unfollow stops replicating tp (it leads now, has no leader, or is gone).
func (fs *Fetchers) Unfollow(tp base.TopicPartition) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.removeLocked(tp)
}

func (fs *Fetchers) removeLocked(tp base.TopicPartition) {
	leader, ok := fs.leaderOf[tp]
	if !ok {
		return
	}
	delete(fs.leaderOf, tp)
	f := fs.byLeader[leader]
	if f.remove(tp) {
		delete(fs.byLeader, leader)
		// A fetch in flight may still apply to tp; close waits for it, so
		// that the caller may close or delete the partition afterwards.
		f.close()
	}
}

// Close stops every fetcher and waits for them.
func (fs *Fetchers) Close() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.closed = true
	for id, f := range fs.byLeader {
		f.close()
		delete(fs.byLeader, id)
	}
	clear(fs.leaderOf)
}

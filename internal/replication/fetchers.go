package replication

import (
	"errors"
	"log/slog"
	"math"
	"sync"
	"time"
	"unicode/utf16"

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
	// Client returns fetcher number fetcher's connection to broker
	// leader (for example a franz-go client's Broker(leader)), each
	// fetcher its own so that one's long poll does not queue another's;
	// it is asked again for every request.
	Client func(leader int32, fetcher int) (kmsg.Requestor, error)
	// Fetchers is num.replica.fetchers: how many fetchers share the
	// partitions of one leader (0 is 1).
	Fetchers int
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
	case o.Fetchers < 0:
		return errors.New("replication: FetchersOptions.Fetchers is negative")
	case o.MaxWait < 0 || o.MinBytes < 1 || o.MaxBytes < 1 || o.PartitionMaxBytes < 1 || o.Backoff < 0 || o.RequestTimeout <= 0:
		return errors.New("replication: FetchersOptions: a negative wait or backoff, or a size below 1")
	}
	return nil
}

// Fetchers keeps Fetchers fetchers per leader broker for the partitions
// this broker follows (Kafka's ReplicaFetcherManager), each partition
// always with the same one of its leader's (FetcherID). Safe for
// concurrent use.
type Fetchers struct {
	opts FetchersOptions

	mu        sync.Mutex
	closed    bool
	n         int // fetchers per leader: opts.Fetchers, then SetFetchers
	byKey     map[fetcherKey]*fetcher
	fetcherOf map[base.TopicPartition]fetcherKey
}

// fetcherKey names one fetcher: its leader and its number among the
// leader's.
type fetcherKey struct {
	leader int32
	id     int
}

// FetcherID is the fetcher, of n per leader, that replicates tp: Kafka's
// AbstractFetcherManager.getFetcherId, abs(31 * topic.hashCode() +
// partition) % n, so that a partition keeps its fetcher as long as n stays.
func FetcherID(tp base.TopicPartition, n int) int {
	if n <= 1 {
		return 0
	}
	h := 31*javaStringHash(tp.Topic) + tp.Partition
	if h == math.MinInt32 {
		return 0 // Kafka's Utils.abs
	}
	if h < 0 {
		h = -h
	}
	return int(h) % n
}

// javaStringHash is Java's String.hashCode over s's UTF-16 code units.
func javaStringHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
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
	o.Fetchers = max(o.Fetchers, 1)
	return &Fetchers{opts: o, n: o.Fetchers, byKey: map[fetcherKey]*fetcher{}, fetcherOf: map[base.TopicPartition]fetcherKey{}}, nil
}

// SetFetchers changes how many fetchers run per leader broker
// (num.replica.fetchers, dynamic as in Kafka's DynamicThreadPool): each
// partition whose FetcherID changes moves to its new fetcher as it does
// on a leader change (its old fetcher applies nothing to it once it is
// removed there), the others stay; a fetcher left empty stops.
func (fs *Fetchers) SetFetchers(n int) {
	n = max(n, 1)
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.closed || n == fs.n {
		return
	}
	fs.n = n
	type move struct {
		r      Replica
		leader int32
		epoch  base.Epoch
	}
	var moves []move
	for tp, key := range fs.fetcherOf {
		if key.id == FetcherID(tp, n) {
			continue
		}
		if r, epoch, ok := fs.byKey[key].followed(tp); ok {
			moves = append(moves, move{r: r, leader: key.leader, epoch: epoch})
		}
	}
	for _, m := range moves {
		fs.followLocked(m.r, m.leader, m.epoch)
	}
}

// Count is how many fetchers run per leader broker now.
func (fs *Fetchers) Count() int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.n
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
	fs.followLocked(r, leader, leaderEpoch)
}

func (fs *Fetchers) followLocked(r Replica, leader int32, leaderEpoch base.Epoch) {
	tp := r.TP()
	key := fetcherKey{leader: leader, id: FetcherID(tp, fs.n)}
	if old, ok := fs.fetcherOf[tp]; ok && old != key {
		fs.removeLocked(tp)
	}
	f, ok := fs.byKey[key]
	if !ok {
		f = newFetcher(&fs.opts, key)
		fs.byKey[key] = f
	}
	fs.fetcherOf[tp] = key
	f.set(r, leaderEpoch)
}

// Unfollow stops replicating tp (it leads now, has no leader, or is gone).
func (fs *Fetchers) Unfollow(tp base.TopicPartition) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.removeLocked(tp)
}

func (fs *Fetchers) removeLocked(tp base.TopicPartition) {
	key, ok := fs.fetcherOf[tp]
	if !ok {
		return
	}
	delete(fs.fetcherOf, tp)
	f := fs.byKey[key]
	if f.remove(tp) {
		delete(fs.byKey, key)
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
	for key, f := range fs.byKey {
		f.close()
		delete(fs.byKey, key)
	}
	clear(fs.fetcherOf)
}

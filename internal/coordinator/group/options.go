package group

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/strata-broker/strata/internal/coordinator/assignor"
)

// Options are a coordinator's limits and its source of randomness. The names
// follow Kafka's broker configs.
type Options struct {
	// SessionTimeoutMin and SessionTimeoutMax bound a member's session
	// timeout (group.min.session.timeout.ms, group.max.session.timeout.ms).
	SessionTimeoutMin time.Duration
	SessionTimeoutMax time.Duration
	// InitialRebalanceDelay holds the first rebalance of an empty group open
	// for more members (group.initial.rebalance.delay.ms).
	InitialRebalanceDelay time.Duration
	// MaxSize is the most members a group may have (group.max.size).
	MaxSize int
	// OffsetsRetention is how long offsets of an empty group (or of a simple
	// group, since their commit) are kept (offsets.retention.minutes).
	OffsetsRetention time.Duration
	// OffsetsRetentionCheckInterval is how often Tick looks for expired
	// offsets (offsets.retention.check.interval.ms).
	OffsetsRetentionCheckInterval time.Duration
	// OffsetMetadataMaxBytes bounds the metadata string of a committed
	// offset (offset.metadata.max.bytes).
	OffsetMetadataMaxBytes int
	// ProducerIDExpiration is how long the coordinator remembers the epoch
	// of a transactional producer that holds no pending offsets here,
	// counted from its last write (producer.id.expiration.ms). A zombie
	// older than that is no longer fenced by epoch.
	ProducerIDExpiration time.Duration
	// ProducerIDExpirationNow, when set, gives ProducerIDExpiration as it
	// is now (a dynamic broker config), read at each expiry check.
	ProducerIDExpirationNow func() time.Duration
	// ConsumerSessionTimeout ends a consumer-protocol member (KIP-848)
	// that sent no heartbeat for that long
	// (group.consumer.session.timeout.ms).
	ConsumerSessionTimeout time.Duration
	// ConsumerHeartbeatInterval is how often consumer-protocol members
	// are told to heartbeat (group.consumer.heartbeat.interval.ms); less
	// than ConsumerSessionTimeout.
	ConsumerHeartbeatInterval time.Duration
	// ConsumerMaxSize is the most members a consumer group may have
	// (group.consumer.max.size).
	ConsumerMaxSize int
	// ConsumerAssignors are the server assignors consumer groups may use,
	// the default first (group.consumer.assignors): names of
	// coordinator/assignor.
	ConsumerAssignors []string
	// MigrationPolicy is which way a group with members may move between
	// the classic and consumer protocols (group.consumer.migration.policy).
	MigrationPolicy MigrationPolicy
	// ConsumerGroupSettings, when set, gives a group's own session timeout
	// and heartbeat interval (its dynamic configs,
	// consumer.session.timeout.ms and consumer.heartbeat.interval.ms);
	// ok false means the two above.
	ConsumerGroupSettings func(group string) (session, heartbeat time.Duration, ok bool)
	// ShareSessionTimeout ends a share group member that sent no
	// heartbeat for that long (group.share.session.timeout.ms).
	ShareSessionTimeout time.Duration
	// ShareHeartbeatInterval is how often share group members are told
	// to heartbeat (group.share.heartbeat.interval.ms); less than
	// ShareSessionTimeout.
	ShareHeartbeatInterval time.Duration
	// ShareMaxSize is the most members a share group may have
	// (group.share.max.size).
	ShareMaxSize int
	// ShareGroupSettings, when set, gives a share group's own session
	// timeout and heartbeat interval (share.session.timeout.ms and
	// share.heartbeat.interval.ms); ok false means the two above.
	ShareGroupSettings func(group string) (session, heartbeat time.Duration, ok bool)
	// OnCensus, when set, receives the partition's group census (how many
	// groups of each type are in each state) from Tick, whenever it changed
	// since the last one it received. It must not block.
	OnCensus func([]GroupCount)
	// Topics is the broker's topics as a request or a tick sees them:
	// what consumer groups subscribe to and are assigned from.
	Topics func() TopicsView
	// Random supplies the random part of member ids (crypto/rand.Reader in
	// production, a seeded reader in tests). Reads must not fail.
	Random io.Reader
}

// DefaultOptions returns Kafka's defaults with the given topics and
// randomness.
func DefaultOptions(topics func() TopicsView, random io.Reader) Options {
	return Options{
		SessionTimeoutMin:             6 * time.Second,
		SessionTimeoutMax:             30 * time.Minute,
		InitialRebalanceDelay:         3 * time.Second,
		MaxSize:                       math.MaxInt32,
		OffsetsRetention:              7 * 24 * time.Hour,
		OffsetsRetentionCheckInterval: 10 * time.Minute,
		OffsetMetadataMaxBytes:        4096,
		ProducerIDExpiration:          24 * time.Hour,
		ConsumerSessionTimeout:        45 * time.Second,
		ConsumerHeartbeatInterval:     5 * time.Second,
		ConsumerMaxSize:               math.MaxInt32,
		ConsumerAssignors:             []string{assignor.UniformName, assignor.RangeName},
		MigrationPolicy:               MigrationBidirectional,
		ShareSessionTimeout:           45 * time.Second,
		ShareHeartbeatInterval:        5 * time.Second,
		ShareMaxSize:                  200,
		Topics:                        topics,
		Random:                        random,
	}
}

// Validate reports the first option that is out of range.
func (o Options) Validate() error {
	switch {
	case o.SessionTimeoutMin <= 0 || o.SessionTimeoutMax < o.SessionTimeoutMin:
		return fmt.Errorf("group: session timeout bounds [%v, %v] are not a range", o.SessionTimeoutMin, o.SessionTimeoutMax)
	case o.InitialRebalanceDelay < 0:
		return fmt.Errorf("group: initial rebalance delay %v is negative", o.InitialRebalanceDelay)
	case o.MaxSize < 1:
		return fmt.Errorf("group: max size %d is below 1", o.MaxSize)
	case o.OffsetsRetention <= 0:
		return fmt.Errorf("group: offsets retention %v is not positive", o.OffsetsRetention)
	case o.OffsetsRetentionCheckInterval <= 0:
		return fmt.Errorf("group: offsets retention check interval %v is not positive", o.OffsetsRetentionCheckInterval)
	case o.OffsetMetadataMaxBytes < 0:
		return fmt.Errorf("group: offset metadata max bytes %d is negative", o.OffsetMetadataMaxBytes)
	case o.ProducerIDExpiration <= 0:
		return fmt.Errorf("group: producer id expiration %v is not positive", o.ProducerIDExpiration)
	case o.ConsumerHeartbeatInterval <= 0 || o.ConsumerSessionTimeout <= o.ConsumerHeartbeatInterval:
		return fmt.Errorf("group: consumer heartbeat interval %v is not positive and below the consumer session timeout %v", o.ConsumerHeartbeatInterval, o.ConsumerSessionTimeout)
	case o.ConsumerMaxSize < 1:
		return fmt.Errorf("group: consumer group max size %d is below 1", o.ConsumerMaxSize)
	case len(o.ConsumerAssignors) == 0:
		return errors.New("group: Options.ConsumerAssignors is empty")
	case slices.ContainsFunc(o.ConsumerAssignors, func(name string) bool { _, ok := assignor.ByName(name); return !ok }):
		return fmt.Errorf("group: consumer assignors %v name one that does not exist (there are %v)", o.ConsumerAssignors, assignor.Names())
	case o.ShareHeartbeatInterval <= 0 || o.ShareSessionTimeout <= o.ShareHeartbeatInterval:
		return fmt.Errorf("group: share heartbeat interval %v is not positive and below the share session timeout %v", o.ShareHeartbeatInterval, o.ShareSessionTimeout)
	case o.ShareMaxSize < 1:
		return fmt.Errorf("group: share group max size %d is below 1", o.ShareMaxSize)
	case o.Topics == nil:
		return errors.New("group: Options.Topics is nil")
	case o.Random == nil:
		return errors.New("group: Options.Random is nil")
	}
	return nil
}

// MigrationPolicy is group.consumer.migration.policy (Kafka's
// ConsumerGroupMigrationPolicy): upgrade lets a consumer-protocol member
// join a classic group with members, which then becomes a consumer group
// whose classic members stay (KIP-848's online migration); downgrade turns
// a consumer group whose last consumer-protocol member leaves into a
// classic group of the members that remain. Classic members join a
// consumer group under every policy, as in Kafka.
type MigrationPolicy int8

const (
	MigrationDisabled MigrationPolicy = iota
	MigrationUpgrade
	MigrationDowngrade
	MigrationBidirectional
)

func (p MigrationPolicy) upgrades() bool { return p == MigrationUpgrade || p == MigrationBidirectional }
func (p MigrationPolicy) downgrades() bool {
	return p == MigrationDowngrade || p == MigrationBidirectional
}

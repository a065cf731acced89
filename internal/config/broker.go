package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Broker is a broker's static configuration, parsed and validated. Build it
// with LoadBroker; the typed fields are views of Raw, which is the source of
// truth for ResolveTopic and DescribeBroker.
type Broker struct {
	NodeID                   int32
	Listeners                []Listener // at least one; non-zero ports distinct; never the controller listener
	AdvertisedListeners      []Listener // at least one: listeners, unless advertised.listeners names some; see Advertised
	LogDirs                  []string   // at least one
	NumPartitions            int32
	RecoveryThreads          int32 // num.recovery.threads.per.data.dir: partitions opened at once
	DefaultReplicationFactor int16
	AutoCreateTopics         bool
	DeleteTopicEnable        bool
	MessageMaxBytes          int32
	SocketRequestMaxBytes    int32
	MinInsyncReplicas        int32
	FetchSessionCacheSlots   int32         // max.incremental.fetch.session.cache.slots
	FetchMaxBytes            int32         // fetch.max.bytes, a consumer fetch's largest answer
	ReplicaLagTimeMax        time.Duration // replica.lag.time.max.ms
	HWCheckpointInterval     time.Duration // replica.high.watermark.checkpoint.interval.ms
	QuotaWindowNum           int32         // quota.window.num
	QuotaWindowSize          time.Duration // quota.window.size.seconds
	// ReplicationQuotaWindowNum and ReplicationQuotaWindowSize sample the
	// replication throttles (replication.quota.window.num, .size.seconds).
	ReplicationQuotaWindowNum  int32
	ReplicationQuotaWindowSize time.Duration
	Connections                Connections // socket.*.buffer.bytes, connections.max.idle.ms, max.connections*

	// FollowerFetchLastTieredOffset is
	// follower.fetch.last.tiered.offset.enable (KIP-1023).
	FollowerFetchLastTieredOffset bool
	// RackAwareReplicaSelector is replica.selector.class set to Kafka's
	// RackAwareReplicaSelector (KIP-392): a leader sends a consumer that
	// names its rack to an in-sync follower of that rack.
	RackAwareReplicaSelector bool
	// TelemetryMaxBytes is telemetry.max.bytes (KIP-714): the largest
	// client metrics push.
	TelemetryMaxBytes int32

	// The cluster (cluster.go). Without voters (see Clustered) the node is a
	// single node, its own quorum, with no controller listener.
	QuorumVoters           map[int32]string // controller.quorum.voters: node id → host:port; nil on a single node
	ProcessRoles           []string         // process.roles: broker, and controller exactly on a voter or a single node
	ControllerListenerName string           // the first of controller.listener.names
	// ControllerListener is, in a cluster, the listener of
	// ControllerListenerName (Raft and forwarding), PLAINTEXT; it is in
	// neither Listeners nor AdvertisedListeners. Zero on a single node.
	ControllerListener Listener
	// QuorumBootstrap is controller.quorum.bootstrap.servers on a node
	// without voters whose list names other nodes: the addresses of the
	// controllers it joins (bootstrap_servers.go). nil otherwise.
	QuorumBootstrap []string
	// StandaloneQuorum: controller.quorum.bootstrap.servers names this
	// node's own controller listener alone (Kafka's standalone quorum), and
	// QuorumVoters holds this node alone, at that listener's address.
	StandaloneQuorum bool
	// ControllerAdvertised is, in a cluster, the host:port other nodes dial
	// for ControllerListener: a voter's entry in QuorumVoters, else the
	// controller entry of advertised.listeners or the listener itself, with
	// a specific host and port. "" on a single node.
	ControllerAdvertised    string
	InterBrokerListener     string        // inter.broker.listener.name: the name of one of Listeners
	BrokerRack              string        // broker.rack; "" means none
	BrokerSessionTimeout    time.Duration // broker.session.timeout.ms
	BrokerHeartbeatInterval time.Duration // broker.heartbeat.interval.ms; less than BrokerSessionTimeout
	ReplicaFetch            ReplicaFetch  // replica.fetch.*, replica.socket.timeout.ms
	// Preferred leader election by the controller: AutoLeaderRebalance
	// (auto.leader.rebalance.enable), every LeaderImbalanceCheckInterval
	// (leader.imbalance.check.interval.seconds, at least 1s), for brokers
	// with more than LeaderImbalancePercentage (0..100) of their preferred
	// partitions led by others (leader.imbalance.per.broker.percentage).
	AutoLeaderRebalance          bool
	LeaderImbalanceCheckInterval time.Duration
	LeaderImbalancePercentage    int32
	// UncleanLeaderElection is unclean.leader.election.enable as this
	// node's configuration sets it: the default of the topic config, which
	// the controller reads for a topic that does not set it (below its
	// dynamic broker configs).
	UncleanLeaderElection bool

	// MaxRequestPartitionSizeLimit is max.request.partition.size.limit:
	// the most partitions a DescribeTopicPartitions answer holds.
	MaxRequestPartitionSizeLimit int32

	SegmentBytes           int64
	SegmentMaxAge          time.Duration // log.roll.ms / log.roll.hours
	SegmentJitterMax       time.Duration // log.roll.jitter.ms / .hours
	Retention              TimeLimit     // log.retention.ms / .minutes / .hours
	RetentionBytes         BytesLimit
	RetentionCheckInterval time.Duration
	LocalRetention         TimeLimit  // log.local.retention.ms; -2 resolved to Retention
	LocalRetentionBytes    BytesLimit // log.local.retention.bytes; -2 resolved to RetentionBytes
	FlushIntervalMessages  int64      // Long.MaxValue: never by count
	FlushInterval          TimeLimit  // log.flush.interval.ms / log.flush.scheduler.interval.ms
	IndexIntervalBytes     int32
	SegmentIndexBytes      int32
	CleanerEnable          bool // log.cleaner.enable; the rest of the cleaner's settings are dynamic: Cleaner()

	OffsetsTopicNumPartitions     int32
	OffsetsTopicReplicationFactor int16
	ProducerIDExpiration          time.Duration
	OffsetsTopicSegmentBytes      int32
	OffsetsRetention              time.Duration
	OffsetsRetentionCheckInterval time.Duration
	OffsetsCommitTimeout          time.Duration
	OffsetMetadataMaxBytes        int32
	GroupInitialRebalanceDelay    time.Duration
	GroupMinSessionTimeout        time.Duration
	GroupMaxSessionTimeout        time.Duration
	GroupMaxSize                  int32
	// The consumer protocol's groups (KIP-848): the session of a member,
	// the interval it is told to heartbeat at (less than the session), and
	// the most members of one group.
	GroupConsumerProtocol          bool // group.coordinator.rebalance.protocols has "consumer"
	GroupConsumerSessionTimeout    time.Duration
	GroupConsumerHeartbeatInterval time.Duration
	GroupConsumerMaxSize           int32
	GroupConsumerAssignors         []string // group.consumer.assignors as short names, the default first
	GroupConsumerMigrationPolicy   string   // group.consumer.migration.policy, lower case
	// The bounds of a group's own consumer.session.timeout.ms and
	// consumer.heartbeat.interval.ms (and of the two above).
	GroupConsumerMinSessionTimeout    time.Duration
	GroupConsumerMaxSessionTimeout    time.Duration
	GroupConsumerMinHeartbeatInterval time.Duration
	GroupConsumerMaxHeartbeatInterval time.Duration
	// Share groups (KIP-932): the session of a member and the interval it
	// is told to heartbeat at (less than the session), each within its
	// bounds, which also bound a group's own share.session.timeout.ms and
	// share.heartbeat.interval.ms; the most members of one group.
	GroupShareSessionTimeout       time.Duration
	GroupShareMinSessionTimeout    time.Duration
	GroupShareMaxSessionTimeout    time.Duration
	GroupShareHeartbeatInterval    time.Duration
	GroupShareMinHeartbeatInterval time.Duration
	GroupShareMaxHeartbeatInterval time.Duration
	GroupShareMaxSize              int32 // 1..1000
	// How long a member holds the records it acquired, within its bounds,
	// which also bound a group's own share.record.lock.duration.ms.
	GroupShareRecordLockDuration    time.Duration // 1s..1h
	GroupShareMinRecordLockDuration time.Duration // 1s..30s
	GroupShareMaxRecordLockDuration time.Duration // 30s..1h
	GroupShareDeliveryCountLimit    int16         // 2..10 deliveries of a record before it is archived
	// GroupSharePartitionMaxRecordLocks is the most in-flight records of a
	// share-partition (100..10000).
	GroupSharePartitionMaxRecordLocks int32
	GroupShareMaxShareSessions        int32 // group.share.max.share.sessions, at least 1
	// __share_group_state, the share coordinator's topic
	// (share.coordinator.state.topic.*).
	ShareStateTopicNumPartitions     int32
	ShareStateTopicReplicationFactor int16
	ShareStateTopicSegmentBytes      int32
	ShareStateTopicMinISR            int32

	TxnTopicNumPartitions     int32
	TxnTopicReplicationFactor int16
	TxnTopicSegmentBytes      int32
	TxnTopicMinISR            int32
	TxnMaxTimeout             time.Duration
	TxnIDExpiration           time.Duration
	TxnAbortCheckInterval     time.Duration
	TxnExpiryCheckInterval    time.Duration

	RemoteStorageSystemEnable    bool
	RemoteLogManagerTaskInterval time.Duration
	RemoteDir                    string // the directory store, used when S3.Bucket == ""
	remoteDirSet                 bool   // strata.remote.dir was set, not defaulted
	RemoteTier                   RemoteTier
	S3                           S3
	MetadataDir                  string
	MetricsListener              string // host:port; "" means no metrics listener

	TLS               TLSConfig      // ssl.*
	SSLPrincipalRules PrincipalRules // ssl.principal.mapping.rules: client certificate subject → principal name
	SASLMechanisms    []string       // sasl.enabled.mechanisms: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER
	// PlainUsers are the PLAIN users of each SASL listener, by listener name
	// as in listeners (SASL_SSL) → user → password, from the user_<name>
	// options of listener.name.<listener>.plain.sasl.jaas.config. With PLAIN
	// enabled every SASL listener has at least one user; nil when none has.
	PlainUsers map[string]map[string]string
	// OAuth is how each SASL listener validates OAUTHBEARER tokens, by
	// listener name; nil unless sasl.enabled.mechanisms has OAUTHBEARER.
	OAuth map[string]OAuthValidation
	// InterBrokerSASL are the credentials this broker presents to the
	// other brokers when its inter-broker listener uses SASL; zero when it
	// does not (and on a single node whose config lacks them).
	InterBrokerSASL InterBrokerSASL

	// FailedAuthenticationDelay is connection.failed.authentication.delay.ms.
	FailedAuthenticationDelay time.Duration
	// MaxReauth is connections.max.reauth.ms; 0: SASL sessions do not expire.
	MaxReauth time.Duration
	// DelegationTokens is the delegation token setup (KIP-48).
	DelegationTokens DelegationTokens

	// Authorizer turns the ACL authorizer on (authorizer.class.name set).
	Authorizer           bool
	SuperUsers           []string // super.users principals, "Type:name"
	AllowEveryoneIfNoACL bool     // allow.everyone.if.no.acl.found

	// Raw holds every key that was set, after precedence (file < env < flags),
	// trimmed and validated. Kafka reports all of them as STATIC_BROKER_CONFIG.
	Raw map[string]string
	// Origin says where each key of Raw was set: "file:line", the environment
	// variable's name, or "flag".
	Origin map[string]string

	// dynamic is what WithDynamic set; zero for the static configuration.
	dynamic Dynamic
}

// RemoteTier are the broker's remote.log.manager.*, remote.fetch.* and
// strata.remote.* settings beyond where the store is and the dynamic ones
// (Broker.RemoteSettings).
type RemoteTier struct {
	RetryBackoff       time.Duration // remote.log.manager.task.retry.backoff.ms
	RetryBackoffMax    time.Duration // remote.log.manager.task.retry.backoff.max.ms
	CacheDir           string        // strata.remote.cache.dir, resolved
	CacheBytes         int64         // strata.remote.cache.size.bytes; 0 = no chunk cache
	ChunkBytes         int32         // strata.remote.chunk.bytes
	ReadAheadChunks    int32         // strata.remote.readahead.chunks
	OrphanGrace        time.Duration // strata.remote.orphan.grace.ms
	OrphanScanInterval time.Duration // strata.remote.orphan.scan.interval.ms
	OrphanDryRun       bool          // strata.remote.orphan.dry.run
}

// S3 locates the remote tier in an S3 bucket; Bucket == "" means the directory
// store in Broker.RemoteDir.
type S3 struct {
	Bucket    string
	Prefix    string
	Region    string // "" means from the AWS environment
	Endpoint  string // "" means AWS
	PathStyle bool
}

// newBroker builds a Broker from validated raw values and checks the rules
// that span keys.
func newBroker(raw, origin map[string]string) (*Broker, error) {
	if err := reconcileNodeID(raw, origin); err != nil {
		return nil, err
	}
	g := getter(func(k string) (string, bool) {
		v, _, ok := brokerValue(layers{static: raw}, k)
		return v, ok
	})
	b := &Broker{
		NodeID:                     g.i32("node.id"),
		LogDirs:                    splitList(g.str("log.dirs")),
		NumPartitions:              g.i32("num.partitions"),
		RecoveryThreads:            g.i32("num.recovery.threads.per.data.dir"),
		DefaultReplicationFactor:   g.i16("default.replication.factor"),
		AutoCreateTopics:           g.flag("auto.create.topics.enable"),
		DeleteTopicEnable:          g.flag("delete.topic.enable"),
		MessageMaxBytes:            g.i32("message.max.bytes"),
		SocketRequestMaxBytes:      g.i32("socket.request.max.bytes"),
		MinInsyncReplicas:          g.i32("min.insync.replicas"),
		FetchSessionCacheSlots:     g.i32("max.incremental.fetch.session.cache.slots"),
		FetchMaxBytes:              g.i32("fetch.max.bytes"),
		ReplicaLagTimeMax:          msDuration(g.i64("replica.lag.time.max.ms")),
		HWCheckpointInterval:       msDuration(g.i64("replica.high.watermark.checkpoint.interval.ms")),
		QuotaWindowNum:             g.i32("quota.window.num"),
		QuotaWindowSize:            time.Duration(g.i32("quota.window.size.seconds")) * time.Second,
		ReplicationQuotaWindowNum:  g.i32("replication.quota.window.num"),
		ReplicationQuotaWindowSize: time.Duration(g.i32("replication.quota.window.size.seconds")) * time.Second,

		FollowerFetchLastTieredOffset: g.flag("follower.fetch.last.tiered.offset.enable"),
		RackAwareReplicaSelector:      g.str("replica.selector.class") == RackAwareReplicaSelector,
		TelemetryMaxBytes:             g.i32("telemetry.max.bytes"),

		MaxRequestPartitionSizeLimit: g.i32("max.request.partition.size.limit"),

		SegmentBytes:           g.i64("log.segment.bytes"),
		SegmentMaxAge:          msDuration(g.i64("log.roll.ms")),
		SegmentJitterMax:       msDuration(g.i64("log.roll.jitter.ms")),
		Retention:              g.ms("log.retention.ms"),
		RetentionBytes:         bytesLimit(g.i64("log.retention.bytes")),
		RetentionCheckInterval: msDuration(g.i64("log.retention.check.interval.ms")),
		FlushIntervalMessages:  g.i64("log.flush.interval.messages"),
		FlushInterval:          g.ms("log.flush.interval.ms"),
		IndexIntervalBytes:     g.i32("log.index.interval.bytes"),
		SegmentIndexBytes:      g.i32("log.index.size.max.bytes"),
		CleanerEnable:          g.flag("log.cleaner.enable"),

		OffsetsTopicNumPartitions:     g.i32("offsets.topic.num.partitions"),
		OffsetsTopicReplicationFactor: g.i16("offsets.topic.replication.factor"),
		ProducerIDExpiration:          msDuration(g.i64("producer.id.expiration.ms")),
		OffsetsTopicSegmentBytes:      g.i32("offsets.topic.segment.bytes"),
		OffsetsRetention:              time.Duration(g.i64("offsets.retention.minutes")) * time.Minute,
		OffsetsRetentionCheckInterval: msDuration(g.i64("offsets.retention.check.interval.ms")),
		OffsetsCommitTimeout:          msDuration(g.i64("offsets.commit.timeout.ms")),
		OffsetMetadataMaxBytes:        g.i32("offset.metadata.max.bytes"),
		GroupInitialRebalanceDelay:    msDuration(g.i64("group.initial.rebalance.delay.ms")),
		GroupMinSessionTimeout:        msDuration(g.i64("group.min.session.timeout.ms")),
		GroupMaxSessionTimeout:        msDuration(g.i64("group.max.session.timeout.ms")),
		GroupMaxSize:                  g.i32("group.max.size"),

		GroupConsumerProtocol:          slices.Contains(splitList(g.str("group.coordinator.rebalance.protocols")), "consumer"),
		GroupConsumerSessionTimeout:    msDuration(g.i64("group.consumer.session.timeout.ms")),
		GroupConsumerHeartbeatInterval: msDuration(g.i64("group.consumer.heartbeat.interval.ms")),
		GroupConsumerMaxSize:           g.i32("group.consumer.max.size"),
		GroupConsumerAssignors:         assignorNames(g.str("group.consumer.assignors")),
		GroupConsumerMigrationPolicy:   strings.ToLower(g.str("group.consumer.migration.policy")),

		GroupConsumerMinSessionTimeout:    msDuration(g.i64("group.consumer.min.session.timeout.ms")),
		GroupConsumerMaxSessionTimeout:    msDuration(g.i64("group.consumer.max.session.timeout.ms")),
		GroupConsumerMinHeartbeatInterval: msDuration(g.i64("group.consumer.min.heartbeat.interval.ms")),
		GroupConsumerMaxHeartbeatInterval: msDuration(g.i64("group.consumer.max.heartbeat.interval.ms")),

		GroupShareSessionTimeout:          msDuration(g.i64("group.share.session.timeout.ms")),
		GroupShareMinSessionTimeout:       msDuration(g.i64("group.share.min.session.timeout.ms")),
		GroupShareMaxSessionTimeout:       msDuration(g.i64("group.share.max.session.timeout.ms")),
		GroupShareHeartbeatInterval:       msDuration(g.i64("group.share.heartbeat.interval.ms")),
		GroupShareMinHeartbeatInterval:    msDuration(g.i64("group.share.min.heartbeat.interval.ms")),
		GroupShareMaxHeartbeatInterval:    msDuration(g.i64("group.share.max.heartbeat.interval.ms")),
		GroupShareMaxSize:                 g.i32("group.share.max.size"),
		GroupShareRecordLockDuration:      msDuration(g.i64("group.share.record.lock.duration.ms")),
		GroupShareMinRecordLockDuration:   msDuration(g.i64("group.share.min.record.lock.duration.ms")),
		GroupShareMaxRecordLockDuration:   msDuration(g.i64("group.share.max.record.lock.duration.ms")),
		GroupShareDeliveryCountLimit:      g.i16("group.share.delivery.count.limit"),
		GroupSharePartitionMaxRecordLocks: g.i32("group.share.partition.max.record.locks"),
		GroupShareMaxShareSessions:        g.i32("group.share.max.share.sessions"),

		ShareStateTopicNumPartitions:     g.i32("share.coordinator.state.topic.num.partitions"),
		ShareStateTopicReplicationFactor: g.i16("share.coordinator.state.topic.replication.factor"),
		ShareStateTopicSegmentBytes:      g.i32("share.coordinator.state.topic.segment.bytes"),
		ShareStateTopicMinISR:            g.i32("share.coordinator.state.topic.min.isr"),

		TxnTopicNumPartitions:     g.i32("transaction.state.log.num.partitions"),
		TxnTopicReplicationFactor: g.i16("transaction.state.log.replication.factor"),
		TxnTopicSegmentBytes:      g.i32("transaction.state.log.segment.bytes"),
		TxnTopicMinISR:            g.i32("transaction.state.log.min.isr"),
		TxnMaxTimeout:             msDuration(g.i64("transaction.max.timeout.ms")),
		TxnIDExpiration:           msDuration(g.i64("transactional.id.expiration.ms")),
		TxnAbortCheckInterval:     msDuration(g.i64("transaction.abort.timed.out.transaction.cleanup.interval.ms")),
		TxnExpiryCheckInterval:    msDuration(g.i64("transaction.remove.expired.transaction.cleanup.interval.ms")),

		RemoteStorageSystemEnable:    g.flag("remote.log.storage.system.enable"),
		RemoteLogManagerTaskInterval: msDuration(g.i64("remote.log.manager.task.interval.ms")),
		RemoteTier: RemoteTier{
			RetryBackoff:       msDuration(g.i64("remote.log.manager.task.retry.backoff.ms")),
			RetryBackoffMax:    msDuration(g.i64("remote.log.manager.task.retry.backoff.max.ms")),
			CacheBytes:         g.i64("strata.remote.cache.size.bytes"),
			ChunkBytes:         g.i32("strata.remote.chunk.bytes"),
			ReadAheadChunks:    g.i32("strata.remote.readahead.chunks"),
			OrphanGrace:        msDuration(g.i64("strata.remote.orphan.grace.ms")),
			OrphanScanInterval: msDuration(g.i64("strata.remote.orphan.scan.interval.ms")),
			OrphanDryRun:       g.flag("strata.remote.orphan.dry.run"),
		},
		S3: S3{
			Bucket:    g.str("strata.remote.s3.bucket"),
			Prefix:    g.str("strata.remote.s3.prefix"),
			Region:    g.str("strata.remote.s3.region"),
			Endpoint:  g.str("strata.remote.s3.endpoint"),
			PathStyle: g.flag("strata.remote.s3.path.style"),
		},
		MetricsListener: g.str("strata.metrics.listener"),
		Raw:             raw,
		Origin:          origin,
	}
	b.LocalRetention = localMs(g.i64("log.local.retention.ms"), b.Retention)
	b.LocalRetentionBytes = localBytes(g.i64("log.local.retention.bytes"), b.RetentionBytes)
	if err := b.checkRemoteCache(g); err != nil {
		return nil, err
	}
	if err := b.setCluster(g); err != nil {
		return nil, err
	}
	if err := b.checkConsumerGroupBounds(g); err != nil {
		return nil, err
	}
	if err := b.checkShareGroupBounds(g); err != nil {
		return nil, err
	}
	if err := b.setListeners(g); err != nil {
		return nil, err
	}
	if err := b.setInterBrokerListener(g); err != nil {
		return nil, err
	}
	if err := b.setTLS(g); err != nil {
		return nil, err
	}
	b.setPrincipalRules(g)
	b.setAuthorizer(g)
	b.setDelegationTokens(g)
	if err := b.setSASL(g); err != nil {
		return nil, err
	}
	if err := b.setOAuth(g); err != nil {
		return nil, err
	}
	if err := b.setInterBrokerSASL(g); err != nil {
		return nil, err
	}
	if err := b.setDirs(g); err != nil {
		return nil, err
	}
	if err := b.setConnections(g); err != nil {
		return nil, err
	}
	return b, nil
}

// reconcileNodeID makes node.id and broker.id agree, as Kafka requires: if one
// is set the other takes its value; if both are set they must be equal.
func reconcileNodeID(raw, origin map[string]string) error {
	n, nok := raw["node.id"]
	id, iok := raw["broker.id"]
	switch {
	case nok && iok && mustInt(n) != mustInt(id):
		return &Error{Key: "node.id", Value: n, Msg: fmt.Sprintf("must equal broker.id (%s) when both are set", id)}
	case nok && !iok:
		raw["broker.id"], origin["broker.id"] = n, origin["node.id"]
	case iok && !nok:
		raw["node.id"], origin["node.id"] = id, origin["broker.id"]
	}
	return nil
}

// setListeners parses listeners and advertised.listeners and gives each
// listener its protocol from listener.security.protocol.map, which must map
// every listener's name but the controller listener's (see
// cutControllerListener). As in Kafka, advertised.listeners may only name
// listeners of listeners.
func (b *Broker) setListeners(g getter) error {
	var err error
	if b.Listeners, err = parseListeners(g.str("listeners")); err != nil {
		panic("config: unvalidated listeners") // checked by the listeners validator
	}
	protocols := protocolMap(g.str("listener.security.protocol.map"))
	if err := b.cutControllerListener(g, protocols); err != nil {
		return err
	}
	for i, l := range b.Listeners {
		p, ok := protocols[l.Name]
		if !ok {
			return &Error{Key: "listener.security.protocol.map", Value: g.str("listener.security.protocol.map"),
				Msg: fmt.Sprintf("has no protocol for listener %s of listeners; add %s:<PROTOCOL>, PROTOCOL one of: %s",
					l.Name, l.Name, strings.Join(protocolNames, ", "))}
		}
		b.Listeners[i].Protocol = p
	}
	v, ok := g("advertised.listeners")
	if !ok {
		b.AdvertisedListeners = b.Listeners
		return b.setControllerAdvertised(g, Listener{}, false)
	}
	if b.AdvertisedListeners, err = parseListeners(v); err != nil {
		panic("config: unvalidated advertised.listeners")
	}
	ctrl, hasCtrl := b.cutControllerAdvertised()
	for i, l := range b.AdvertisedListeners {
		j := slices.IndexFunc(b.Listeners, func(m Listener) bool { return m.Name == l.Name })
		if j < 0 {
			return &Error{Key: "advertised.listeners", Value: v,
				Msg: fmt.Sprintf("names listener %s, which listeners (%s) does not have; its names must be listeners' names", l.Name, g.str("listeners"))}
		}
		if l.Host == "" || l.Host == "0.0.0.0" || l.Host == "::" {
			return &Error{Key: "advertised.listeners", Value: v, Msg: "must name a host that clients can reach, not " + l.String()}
		}
		b.AdvertisedListeners[i].Protocol = b.Listeners[j].Protocol
	}
	if len(b.AdvertisedListeners) == 0 { // advertised.listeners named only the controller listener
		b.AdvertisedListeners = b.Listeners
	}
	return b.setControllerAdvertised(g, ctrl, hasCtrl)
}

func (b *Broker) setDirs(g getter) error {
	seen := make(map[string]bool, len(b.LogDirs))
	for _, d := range b.LogDirs {
		c := filepath.Clean(d)
		if seen[c] {
			return &Error{Key: "log.dirs", Value: g.str("log.dirs"), Msg: "must not name a directory twice: " + d}
		}
		seen[c] = true
	}
	if len(b.LogDirs) > 1 {
		return &Error{Key: "log.dirs", Value: g.str("log.dirs"),
			Msg: "names several directories, but Strata keeps its data in one (Kafka's JBOD is not supported); name one, e.g. log.dirs=" + b.LogDirs[0] + " (for several disks, join them with RAID 0 or LVM and name the mount)"}
	}
	b.RemoteDir = g.str("strata.remote.dir")
	b.remoteDirSet = b.RemoteDir != ""
	if !b.remoteDirSet {
		b.RemoteDir = filepath.Join(b.LogDirs[0], "remote")
	}
	b.RemoteTier.CacheDir = g.str("strata.remote.cache.dir")
	if b.RemoteTier.CacheDir == "" {
		b.RemoteTier.CacheDir = filepath.Join(b.LogDirs[0], "remote-cache")
	}
	b.MetadataDir = g.str("strata.metadata.dir")
	if b.MetadataDir == "" {
		parent := g.str("metadata.log.dir")
		if parent == "" {
			parent = b.LogDirs[0]
		}
		b.MetadataDir = filepath.Join(parent, "__metadata")
	}
	if b.S3.Bucket == "" {
		for _, k := range []string{"strata.remote.s3.prefix", "strata.remote.s3.region", "strata.remote.s3.endpoint", "strata.remote.s3.path.style"} {
			if v, ok := b.Raw[k]; ok {
				return &Error{Key: k, Value: v, Msg: "is set but strata.remote.s3.bucket is not; set the bucket or remove it"}
			}
		}
	}
	return nil
}

// localMs resolves log.local.retention.ms / local.retention.ms: -2 follows
// the total retention, -1 is unlimited.
func localMs(ms int64, total TimeLimit) TimeLimit {
	if ms == -2 {
		return total
	}
	return msLimit(ms)
}

// localBytes is localMs for the byte limit.
func localBytes(n int64, total BytesLimit) BytesLimit {
	if n == -2 {
		return total
	}
	return bytesLimit(n)
}

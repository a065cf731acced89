package config

import (
	"slices"
	"strings"
)

// brokerDefs are the broker configs: Kafka 3.9's names, types and validation,
// with Strata's defaults where a single-node laptop broker needs another one
// (node.id 1, listeners on 127.0.0.1, data in ./strata-data, replication
// factors 1, tiering on), plus strata.* keys for what Kafka leaves to plugins.
// The broker configs that are not topic defaults are read-only (dynamic.go).
var brokerDefs = readOnly(slices.Concat([]Def{
	nullDef("node.id", Int, "", atLeast(0), "This broker's id. Default: broker.id."),
	def("broker.id", Int, "1", "", atLeast(0), "Older name of node.id."),
	def("listeners", String, "PLAINTEXT://127.0.0.1:9092", "", validListeners,
		"Comma-separated NAME://host:port addresses to listen on; an empty host means every interface. Each NAME needs a protocol in listener.security.protocol.map; ports other than 0 must differ."),
	nullDef("advertised.listeners", String, "", validAdvertised,
		"Addresses given to clients, if not those of listeners; each NAME must be one of listeners'. A listener it does not name is advertised as it listens. Default: listeners."),
	def("listener.security.protocol.map", String, defaultProtocolMap, "", validProtocolMap,
		"Comma-separated NAME:PROTOCOL, the security protocol of each listener; PROTOCOL is PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL."),

	def("controller.quorum.voters", List, "", "", validVoters,
		"The metadata quorum's voters as id@host:port, comma-separated (1@ctrl-1:9093,2@ctrl-2:9093,3@ctrl-3:9093), each the address other nodes dial for that node's controller listener. On fresh data the voters bootstrap the quorum and other nodes join it as non-voters. Empty: a single node, its own quorum."),
	def("controller.quorum.bootstrap.servers", List, "", "", validBootstrapServers,
		"Kafka's dynamic quorum (KIP-853): host:port of controllers, where a node without controller.quorum.voters finds its quorum. Naming this node's own controller listener alone (Kafka's standalone quorum, as in Kafka's own server.properties), the node is the first voter of a quorum that other nodes join; naming others, the node joins their quorum as a non-voter and never starts one (AddRaftVoter makes it a voter). Ignored when controller.quorum.voters is set."),
	def("process.roles", List, "broker,controller", "", validRoles,
		"broker, or broker,controller: controller exactly when node.id is one of controller.quorum.voters, and always on a single node. Strata has no controller-only nodes: every node is a broker."),
	def("controller.listener.names", List, "CONTROLLER", "", validListenerNames,
		"The listener of listeners that serves the metadata quorum (Raft) and requests forwarded to the controller, PLAINTEXT only; only a cluster (controller.quorum.voters) has it, and clients are not given it. Kafka allows several names; Strata uses the first."),
	nullDef("inter.broker.listener.name", String, "", nonEmpty,
		"The listener other brokers reach this one on, e.g. to fetch replicas: one of listeners, not the controller listener. Default: the listener security.inter.broker.protocol names when that is set, else the first of listeners that is not the controller listener."),
	nullDef("security.inter.broker.protocol", String, "", oneOf(protocolNames...),
		"Kafka's older way to pick the inter-broker listener: the listener named after this protocol (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL) must exist. Only one of it and inter.broker.listener.name may be set, as in Kafka."),
	nullDef("broker.rack", String, "", validRack,
		"This broker's rack, at most 255 bytes, registered with the controller with its listeners."),
	def("broker.session.timeout.ms", Int, "9000", "", atLeast(1),
		"How long the controller waits for a registered broker's heartbeat before it fences the broker: it leaves the ISRs, and the partitions it led get new leaders."),
	def("broker.heartbeat.interval.ms", Int, "2000", "", atLeast(1),
		"How often this broker sends the controller a heartbeat; less than broker.session.timeout.ms."),
	def("auto.leader.rebalance.enable", Boolean, "true", "", nil,
		"Whether the controller moves each partition's leadership back to its preferred replica (the first of its replicas) once that replica is in the ISR and unfenced, checking every leader.imbalance.check.interval.seconds."),
	def("leader.imbalance.check.interval.seconds", Long, "300", "", atLeast(1),
		"How often the controller checks, with auto.leader.rebalance.enable, for partitions not led by their preferred replica."),
	def("leader.imbalance.per.broker.percentage", Int, "10", "", between(0, 100),
		"The share (in percent) of a broker's preferred partitions that may be led by others before the controller gives them back to it, with auto.leader.rebalance.enable."),

	def("ssl.keystore.type", String, StorePEM, "", validStoreType,
		"Format of the keystore: PEM (the default; Kafka's is JKS, which an unset type with ssl.keystore.password set means), PKCS12 or JKS, in any case; JKS and PKCS12 each read the other's files, as Java's keystores do."),
	nullDef("ssl.keystore.location", String, "", nonEmpty,
		"The keystore file: with ssl.keystore.type PEM, the certificate chain (leaf first) and its private key (PKCS#8, PKCS#1 or EC, or encrypted PKCS#8 with ssl.key.password); with PKCS12 or JKS, a store holding one private key and its certificate chain (trusted certificate entries, such as a CA imported into it, are ignored). Needed by SSL and SASL_SSL listeners, unless ssl.keystore.certificate.chain and ssl.keystore.key are set."),
	secret(nullDef("ssl.keystore.password", Password, "", nil,
		"The password of a PKCS12 or JKS keystore (ssl.keystore.location); required for them, refused for PEM, whose key is unencrypted.")),
	secret(nullDef("ssl.key.password", Password, "", nil,
		"The password of the private key: inside a JKS keystore when it differs from ssl.keystore.password (unset: that one; a PKCS12 keystore has one password), or of an encrypted PKCS#8 PEM key (-----BEGIN ENCRYPTED PRIVATE KEY-----, PBES2 with AES or 3DES, as Kafka's KIP-651), required for it and refused for a key in the clear.")),
	secret(nullDef("ssl.keystore.certificate.chain", Password, "", pemCertificates,
		"The certificate chain as inline PEM, leaf first, with ssl.keystore.key instead of ssl.keystore.location (Kafka 2.7+). Line breaks may be lost to a continued properties line, as in Kafka.")),
	secret(nullDef("ssl.keystore.key", Password, "", pemPrivateKey,
		"The private key as inline PEM (PKCS#8, PKCS#1 or EC, or encrypted PKCS#8 with ssl.key.password), with ssl.keystore.certificate.chain.")),
	def("ssl.truststore.type", String, StorePEM, "", validStoreType,
		"Format of the truststore: PEM (the default; Kafka's is JKS, which an unset type with ssl.truststore.password set means), PKCS12 or JKS, in any case; JKS and PKCS12 each read the other's files."),
	nullDef("ssl.truststore.location", String, "", nonEmpty,
		"The file of the CA certificates that client certificates are verified against (ssl.client.auth): PEM certificates, or a PKCS12 or JKS store of trusted certificate entries (as keytool -importcert makes them)."),
	secret(nullDef("ssl.truststore.password", Password, "", nil,
		"The password of a PKCS12 or JKS truststore: required for JKS (its integrity is checked with it), optional for PKCS12 (a store without one), refused for PEM.")),
	secret(nullDef("ssl.truststore.certificates", Password, "", pemCertificates,
		"The CA certificates as inline PEM, instead of ssl.truststore.location (Kafka 2.7+).")),
	def("ssl.client.auth", String, "none", "", oneOf(clientAuthNames...),
		"Whether SSL listeners ask clients for a certificate: required, requested or none. As in Kafka (KIP-684), SASL_SSL listeners ignore it: they ask only when listener.name.<listener>.ssl.client.auth says so."),
	def("ssl.enabled.protocols", List, "TLSv1.2,TLSv1.3", "", validTLSProtocols,
		"TLS versions served: TLSv1.2, TLSv1.3. TLSv1 and TLSv1.1 are refused, as Go does not serve them by default."),
	def(endpointIdentificationKey, String, "https", "", validEndpointIdentification,
		"Whether a broker connecting to another over TLS (replica fetches, transaction markers) checks that the other's certificate names the host it dialed: https checks (the default), empty does not; the certificate must chain to the truststore either way."),
	def("ssl.allow.dn.changes", Boolean, "false", "", nil,
		"Whether a listener's keystore changed at run time (listener.name.<listener>.ssl.keystore.location on this broker's resource) may hold a certificate with another subject (distinguished name) than the one it replaces; false refuses it, as in Kafka."),
	def("ssl.allow.san.changes", Boolean, "false", "", nil,
		"Whether a listener's keystore changed at run time may hold a certificate without every subject alternative name of the one it replaces; false refuses it, as in Kafka."),
	def("ssl.protocol", String, "TLSv1.3", "", oneOf(tlsProtocolNames...),
		"Kafka's SSLContext protocol, TLSv1.2 or TLSv1.3; accepted for compatibility: ssl.enabled.protocols decides what is negotiated."),
	nullDef("ssl.cipher.suites", List, "", validCipherSuites,
		"TLS 1.2 cipher suites, by their IANA names as Go's crypto/tls knows them (e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256); insecure ones are refused. TLS 1.3 suites may be listed but are not configurable in Go: all three are always on. Default: Go's defaults."),
	def(principalRulesKey, String, "DEFAULT", "", validPrincipalRules,
		`How the subject of a TLS client certificate (its distinguished name, RFC 2253, e.g. CN=app,OU=Eng,O=Example) becomes the principal's name: comma-separated rules, tried in order. DEFAULT keeps the name; RULE:pattern/replacement/ applies when the pattern matches the whole name and replaces it, $1, $2 standing for the pattern's groups, with L or U after the last slash for lower or upper case. A slash inside a pattern or replacement is written \/. Patterns are Go (RE2) regular expressions: no lookaround or backreferences. When no rule applies the client is refused, as in Kafka. E.g. RULE:^CN=([^,]+),OU=Apps,.*$/$1/L,DEFAULT.`),
	def("sasl.enabled.mechanisms", List, "SCRAM-SHA-256,SCRAM-SHA-512", "", validSASLMechanisms,
		"SASL mechanisms served on SASL_PLAINTEXT and SASL_SSL listeners: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 (Kafka's default is GSSAPI, which Strata does not support). PLAIN users are given by listener.name.<listener>.plain.sasl.jaas.config; SCRAM users by AlterUserScramCredentials."),
	def(interBrokerMechanismKey, String, MechanismPlain, "", validInterBrokerMechanism,
		"SASL mechanism brokers authenticate to each other with when inter.broker.listener.name is a SASL_PLAINTEXT or SASL_SSL listener: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512, one of sasl.enabled.mechanisms (Kafka's default is GSSAPI, which Strata does not support). The broker's own credentials are the username and password options of listener.name.<listener>.<mechanism>.sasl.jaas.config; a SCRAM user needs a credential in the metadata quorum (AlterUserScramCredentials)."),
	def("connections.max.reauth.ms", Long, "0", "", atLeast(0),
		"Lifetime of a SASL session (KIP-368): clients re-authenticate before it ends, and a connection that does not is closed. 0 means sessions do not expire."),
	def("connection.failed.authentication.delay.ms", Int, "100", "", atLeast(0),
		"How long the answer to a failed SASL authentication, and the close that follows, is held back (KIP-306), so that guessing passwords is slow."),
	def("authorizer.class.name", String, "", "", oneOf(authorizerNames...),
		"\"\" authorizes nothing (every client may do everything). Kafka's StandardAuthorizer or AclAuthorizer class name turns on Strata's ACL authorizer, with Kafka's rules; the ACLs live in the metadata quorum (CreateAcls, DescribeAcls, DeleteAcls)."),
	def("super.users", String, "", "", validSuperUsers,
		"Principals allowed everything, semicolon-separated (User:admin;User:CN=broker). Only with authorizer.class.name."),
	def("allow.everyone.if.no.acl.found", Boolean, "false", "", nil,
		"With the authorizer on: whether a resource that no ACL names is open to everyone."),
	nullDef("log.dirs", String, "", nonEmptyList, "Comma-separated data directories. Default: log.dir."),
	def("log.dir", String, "./strata-data", "", nonEmpty, "The data directory, if log.dirs is not set."),
	def("num.partitions", Int, "1", "", atLeast(1), "Partitions of an auto-created topic."),
	def("num.recovery.threads.per.data.dir", Int, "1", "", atLeast(1),
		"Partitions opened at once, at start and as topics are created, each recovering its log if the broker did not stop cleanly (Kafka also flushes with them at shutdown; Strata closes partitions one at a time)."),
	def("default.replication.factor", Int, "1", "", between(1, 32767), "Replication factor of an auto-created topic."),
	def("auto.create.topics.enable", Boolean, "true", "", nil, "Create a topic when a client asks for an unknown one."),
	def("delete.topic.enable", Boolean, "true", "", nil, "Allow DeleteTopics."),
	def("max.request.partition.size.limit", Int, "2000", "", atLeast(1), "Most partitions one DescribeTopicPartitions answer holds; the client pages through the rest."),
	def("message.max.bytes", Int, "1048588", "", atLeast(0), "Largest record batch accepted; topic: max.message.bytes."),
	def("socket.request.max.bytes", Int, "104857600", "", atLeast(1), "Largest request accepted."),
	def("fetch.max.bytes", Int, "57671680", "", atLeast(1024),
		"Most bytes one consumer fetch answers, whatever its max_bytes asks (KIP-541); the first batch of the first partition with data is sent whole even when larger, as in Kafka."),
	def("max.incremental.fetch.session.cache.slots", Int, "1000", "", atLeast(0),
		"Incremental fetch sessions (KIP-227) kept at once; 0 answers every fetch as a full one."),
	def("quota.window.num", Int, "11", "", atLeast(2),
		"Samples a client quota's rate is measured over (Kafka allows 1; with one sample a rate has no span to divide by)."),
	def("quota.window.size.seconds", Int, "1", "", atLeast(1), "Length of one client quota sample."),
	def("min.insync.replicas", Int, "1", "", atLeast(1), "Default of the topic config min.insync.replicas."),
	def("replica.high.watermark.checkpoint.interval.ms", Long, "5000", "", atLeast(1),
		"How often every partition's high watermark is written to replication-offset-checkpoint, which a restarted replica shows consumers up to."),
	def("replica.lag.time.max.ms", Long, "30000", "", atLeast(2),
		"A follower that has not caught up with its leader's log end for this long leaves the ISR; the leader checks every half of it."),
	def("replica.fetch.max.bytes", Int, "1048576", "", atLeast(1),
		"Bytes a follower asks for per partition in one fetch; a larger first batch is still sent whole (KIP-74), so replication never stalls. At least 1 (Kafka allows 0): Strata's fetcher always asks for data."),
	def("replica.fetch.response.max.bytes", Int, "10485760", "", atLeast(1),
		"Bytes a follower asks for in one fetch response, over all partitions; a larger first batch is still sent whole (KIP-74). At least 1 (Kafka allows 0)."),
	def("replica.fetch.min.bytes", Int, "1", "", atLeast(1),
		"Bytes a leader waits for, up to replica.fetch.wait.max.ms, before it answers a follower's fetch. At least 1 (Kafka allows 0): for no wait, set replica.fetch.wait.max.ms=0."),
	def("replica.fetch.wait.max.ms", Int, "500", "", atLeast(0),
		"Longest a leader holds a follower's fetch waiting for replica.fetch.min.bytes; at most replica.socket.timeout.ms and replica.lag.time.max.ms."),
	def("num.replica.fetchers", Int, "1", "", atLeast(1),
		"Fetchers a follower runs per leader broker, each with its own connection; a partition always goes to the same one (Kafka's hash of its topic and number). More fetchers replicate in parallel where one connection's fetches would queue. Dynamic, as in Kafka within half to double the fetchers running: the partitions whose fetcher changes move to it."),
	def("replica.fetch.backoff.ms", Int, "1000", "", atLeast(0),
		"How long a follower waits before it fetches again from a partition's leader after an error."),
	def("replica.socket.timeout.ms", Int, "30000", "", atLeast(1),
		"How long a follower waits to connect to a leader, and for a fetch response beyond replica.fetch.wait.max.ms, before it gives up and tries again."),
	def("follower.fetch.last.tiered.offset.enable", Boolean, "false", "", nil,
		"KIP-1023: an empty follower of a tiered partition starts at its leader's earliest pending upload offset, with its leader-epoch cache and producer state rebuilt from the remote tier, instead of replicating every offset from the log start (read-only here; Kafka's is dynamic)."),
	def("telemetry.max.bytes", Int, "1048576", "", atLeast(1),
		"KIP-714: the largest metrics payload a client may push (PushTelemetry, compressed); larger is TELEMETRY_TOO_LARGE. Client metrics are received only with strata.metrics.listener set, and shown there as strata_client_*."),
	def("replica.selector.class", String, "", "", oneOf("", RackAwareReplicaSelector),
		"KIP-392: \"\" serves every consumer from its partition's leader; Kafka's "+RackAwareReplicaSelector+" sends a consumer that names its rack (client.rack) to an in-sync follower in that rack, when the leader is not in it, so that it reads without crossing racks. Any broker serves a consumer's fetch (v11+) of a partition it follows, up to its high watermark, whichever the leader's selector."),
	def("unclean.leader.election.enable", Boolean, "false", "", nil, "Default of the topic config of the same name."),
	def("compression.type", String, "producer", "", oneOf(compressionNames...), "Default of the topic config of the same name."),
	def("compression.gzip.level", Int, "-1", "", gzipLevel, "Default of the topic config of the same name."),
	def("compression.lz4.level", Int, "9", "", between(1, 17), "Default of the topic config of the same name."),
	def("compression.zstd.level", Int, "3", "", between(-131072, 22), "Default of the topic config of the same name."),

	def("log.segment.bytes", Int, "1073741824", "", atLeast(minSegmentBytes), "Default of segment.bytes (minimum 1024)."),
	nullDef("log.roll.ms", Long, "", atLeast(1), "Default of segment.ms. Default: log.roll.hours."),
	def("log.roll.hours", Int, "168", "", atLeast(1), "Default of segment.ms, in hours, if log.roll.ms is not set."),
	nullDef("log.roll.jitter.ms", Long, "", atLeast(0), "Default of segment.jitter.ms. Default: log.roll.jitter.hours."),
	def("log.roll.jitter.hours", Int, "0", "", atLeast(0), "Default of segment.jitter.ms, in hours."),
	nullDef("log.retention.ms", Long, "", atLeast(-1),
		"Default of retention.ms; -1 means unlimited. Precedence: log.retention.ms, log.retention.minutes, log.retention.hours."),
	nullDef("log.retention.minutes", Int, "", atLeast(-1), "Default of retention.ms, in minutes, if log.retention.ms is not set."),
	def("log.retention.hours", Int, "168", "", atLeast(-1), "Default of retention.ms, in hours, if neither log.retention.ms nor log.retention.minutes is set."),
	def("log.retention.bytes", Long, "-1", "", atLeast(-1), "Default of retention.bytes; -1 means unlimited."),
	def("log.retention.check.interval.ms", Long, "300000", "", atLeast(1), "How often retention runs."),
	def("log.flush.interval.messages", Long, longMax, "", atLeast(1), "Default of flush.messages."),
	nullDef("log.flush.interval.ms", Long, "", atLeast(0), "Default of flush.ms. Default: log.flush.scheduler.interval.ms."),
	def("log.flush.scheduler.interval.ms", Long, longMax, "", atLeast(0), "How often the flusher checks; default of flush.ms if log.flush.interval.ms is not set."),
	def("log.index.interval.bytes", Int, "4096", "", atLeast(0), "Default of index.interval.bytes."),
	def("log.index.size.max.bytes", Int, "10485760", "", atLeast(minSegmentIndexBytes), "Default of segment.index.bytes (Strata's minimum is 12)."),
	def("log.cleanup.policy", List, "delete", "", listOf("delete", "compact"), "Default of cleanup.policy."),
	def("log.message.timestamp.type", String, "CreateTime", "", oneOf("CreateTime", "LogAppendTime"), "Default of message.timestamp.type."),
	def("log.message.timestamp.after.max.ms", Long, longMax, "", atLeast(0), "Default of message.timestamp.after.max.ms."),
	def("log.message.timestamp.before.max.ms", Long, longMax, "", atLeast(0), "Default of message.timestamp.before.max.ms."),
	def("log.message.timestamp.difference.max.ms", Long, longMax, "", atLeast(0), "Default of message.timestamp.difference.max.ms (deprecated)."),
	def("log.message.format.version", String, "3.0-IV1", "", validKafkaVersion, "Default of message.format.version."),
	def("log.message.downconversion.enable", Boolean, "true", "", nil, "Default of message.downconversion.enable."),
	def("log.preallocate", Boolean, "false", "", nil, "Default of preallocate."),
	def("log.segment.delete.delay.ms", Long, "60000", "", atLeast(0), "Default of file.delete.delay.ms."),
	def("log.cleaner.enable", Boolean, "true", "", nil, "Whether the log cleaner runs; without it compacted topics are never compacted."),
	def("log.cleaner.backoff.ms", Long, "15000", "", atLeast(1), "How long the log cleaner sleeps when no log needs cleaning; dynamic."),
	def("log.cleaner.threads", Int, "1", "", atLeast(0),
		"Partitions the log cleaner cleans at once, each with its share of log.cleaner.dedupe.buffer.size; 0 cleans nothing, as in Kafka. Dynamic, as in Kafka within half to double the threads running (and not from 0)."),
	def("log.cleaner.dedupe.buffer.size", Long, "134217728", "", atLeast(4096), "Memory of the log cleaner's key map (24 bytes a key); a pass that fills it stops early and the next goes on. Dynamic: each thread takes its new share at its next pass."),
	def(cleanerIORateKey, Double, doubleMax, "", positiveNumber,
		"Bytes per second the log cleaner reads and writes, over all its threads (Kafka's throttler: measured every 300 ms, a thread over the rate sleeps until the average is back at it); the default does not throttle. Dynamic."),
	def("log.cleaner.delete.retention.ms", Long, "86400000", "", atLeast(0), "Default of delete.retention.ms."),
	def("log.cleaner.min.compaction.lag.ms", Long, "0", "", atLeast(0), "Default of min.compaction.lag.ms."),
	def("log.cleaner.max.compaction.lag.ms", Long, longMax, "", atLeast(1), "Default of max.compaction.lag.ms."),
	def("log.cleaner.min.cleanable.ratio", Double, "0.5", "", ratio(0, 1), "Default of min.cleanable.dirty.ratio."),
	def("log.local.retention.ms", Long, "-2", "", atLeast(-2), "Default of local.retention.ms; -2 means the total retention."),
	def("log.local.retention.bytes", Long, "-2", "", atLeast(-2), "Default of local.retention.bytes; -2 means the total retention."),

	def("offsets.topic.num.partitions", Int, "50", "", atLeast(1), "Partitions of __consumer_offsets."),
	def("offsets.topic.replication.factor", Short, "1", "", atLeast(1), "Replication factor of __consumer_offsets."),
	def("producer.id.expiration.ms", Int, "86400000", "", atLeast(1), "How long an idle idempotent producer's state is kept; dynamic (a partition takes a new value at once; the group coordinator's transactional offset commits at start)."),
	def("offsets.topic.segment.bytes", Int, "104857600", "", atLeast(minSegmentBytes), "segment.bytes of __consumer_offsets."),
	def("offsets.retention.minutes", Int, "10080", "", atLeast(1), "How long the offsets of an empty group are kept."),
	def("offsets.retention.check.interval.ms", Long, "600000", "", atLeast(1), "How often expired offsets are looked for."),
	def("offsets.commit.timeout.ms", Int, "5000", "", atLeast(1), "How long an offset commit waits to be durable before REQUEST_TIMED_OUT."),
	def("offset.metadata.max.bytes", Int, "4096", "", atLeast(0), "Largest metadata string of a committed offset."),
	def("group.initial.rebalance.delay.ms", Int, "3000", "", atLeast(0), "Wait for more members before the first rebalance of a group."),
	def("group.min.session.timeout.ms", Int, "6000", "", atLeast(1), "Shortest session timeout a member may ask for."),
	def("group.max.session.timeout.ms", Int, "1800000", "", atLeast(1), "Longest session timeout a member may ask for."),
	def("transaction.state.log.num.partitions", Int, "50", "", atLeast(1), "Partitions of __transaction_state."),
	def("transaction.state.log.replication.factor", Short, "1", "", atLeast(1), "Replication factor of __transaction_state."),
	def("transaction.state.log.segment.bytes", Int, "104857600", "", atLeast(minSegmentBytes), "segment.bytes of __transaction_state."),
	def("transaction.state.log.min.isr", Int, "1", "", atLeast(1), "min.insync.replicas of __transaction_state (Kafka's default is 2, which a single broker cannot meet)."),
	def("transaction.max.timeout.ms", Int, "900000", "", atLeast(1), "Longest transaction timeout a producer may ask for."),
	def("transactional.id.expiration.ms", Int, "604800000", "", atLeast(1), "How long an idle transactional id is kept."),
	def("transaction.abort.timed.out.transaction.cleanup.interval.ms", Int, "10000", "", atLeast(1), "How often transactions past their timeout are looked for and aborted."),
	def("transaction.partition.verification.enable", Boolean, "true", "", nil, "Verify with the coordinator that a partition is in a producer's transaction before its first transactional batch there (KIP-890 part 1); off, a late or zombie produce can leave a hanging transaction. Dynamic, as in Kafka."),
	def("transaction.remove.expired.transaction.cleanup.interval.ms", Int, "3600000", "", atLeast(1), "How often expired transactional ids are looked for."),
	def("group.max.size", Int, "2147483647", "", atLeast(1), "Most members of one consumer group."),
	def("group.coordinator.rebalance.protocols", List, "classic,consumer", "", groupProtocols,
		"The group protocols served: classic, which every client speaks and which cannot be turned off (as in Kafka), and consumer (KIP-848: ConsumerGroupHeartbeat and ConsumerGroupDescribe are advertised only with it)."),
	def("group.consumer.session.timeout.ms", Int, "45000", "", atLeast(1), "How long a member of a consumer-protocol group (KIP-848) may go without a heartbeat before it is removed."),
	def("group.consumer.heartbeat.interval.ms", Int, "5000", "", atLeast(1), "How often members of consumer-protocol groups (KIP-848) are told to heartbeat; less than group.consumer.session.timeout.ms."),
	def("group.consumer.min.session.timeout.ms", Int, "45000", "", atLeast(1), "Shortest consumer.session.timeout.ms a consumer-protocol group may be given."),
	def("group.consumer.max.session.timeout.ms", Int, "60000", "", atLeast(1), "Longest consumer.session.timeout.ms a consumer-protocol group may be given."),
	def("group.consumer.min.heartbeat.interval.ms", Int, "5000", "", atLeast(1), "Shortest consumer.heartbeat.interval.ms a consumer-protocol group may be given."),
	def("group.consumer.max.heartbeat.interval.ms", Int, "15000", "", atLeast(1), "Longest consumer.heartbeat.interval.ms a consumer-protocol group may be given."),
	def("group.consumer.migration.policy", String, "bidirectional", "", migrationPolicy,
		"How a group with members moves between the classic and consumer protocols (KIP-848's online migration): upgrade lets a consumer-protocol member join a classic group, which becomes a consumer group that keeps its classic members; downgrade turns a consumer group classic when its last consumer-protocol member leaves; bidirectional both; disabled neither. Classic members join a consumer group under every policy, and an empty group converts on its first join of the other protocol."),
	def("group.consumer.assignors", List, "uniform,range", "", consumerAssignors,
		"The server assignors of consumer-protocol groups (KIP-848), the first the default for members that name none: uniform and range (or Kafka's class names of the two)."),
	def("group.consumer.max.size", Int, "2147483647", "", atLeast(1), "Most members of one consumer-protocol group (KIP-848)."),
	def("group.share.session.timeout.ms", Int, "45000", "", atLeast(1), "How long a member of a share group (KIP-932) may go without a heartbeat before it is removed; within group.share.min/max.session.timeout.ms."),
	def("group.share.min.session.timeout.ms", Int, "45000", "", atLeast(1), "Shortest share.session.timeout.ms a share group may be given."),
	def("group.share.max.session.timeout.ms", Int, "60000", "", atLeast(1), "Longest share.session.timeout.ms a share group may be given."),
	def("group.share.heartbeat.interval.ms", Int, "5000", "", atLeast(1),
		"How often members of share groups (KIP-932) are told to heartbeat; within group.share.min/max.heartbeat.interval.ms, less than group.share.session.timeout.ms."),
	def("group.share.min.heartbeat.interval.ms", Int, "5000", "", atLeast(1), "Shortest share.heartbeat.interval.ms a share group may be given."),
	def("group.share.max.heartbeat.interval.ms", Int, "15000", "", atLeast(1), "Longest share.heartbeat.interval.ms a share group may be given."),
	def("group.share.max.size", Int, "200", "", between(1, 1000), "Most members of one share group (KIP-932)."),
	def("group.share.record.lock.duration.ms", Int, "30000", "", between(1000, 3600000),
		"How long a share group member holds the records it fetched (their acquisition lock) before they are released for delivery to another; within group.share.min/max.record.lock.duration.ms."),
	def("group.share.min.record.lock.duration.ms", Int, "15000", "", between(1000, 30000), "Shortest share.record.lock.duration.ms a share group may be given."),
	def("group.share.max.record.lock.duration.ms", Int, "60000", "", between(30000, 3600000), "Longest share.record.lock.duration.ms a share group may be given."),
	def("group.share.delivery.count.limit", Int, "5", "", between(2, 10),
		"How many times a record is delivered to a share group before it is archived as undeliverable (not delivered again)."),
	def("group.share.partition.max.record.locks", Int, "2000", "", between(100, 10000),
		"Most in-flight records of one share-partition (a share group's view of a partition): once that many are between its start and end offsets, fetches acquire no more."),
	def("group.share.max.share.sessions", Int, "2000", "", atLeast(1), "Share sessions (ShareFetch's, like fetch sessions) kept at once on this broker."),
	def("share.coordinator.state.topic.num.partitions", Int, "50", "", atLeast(1), "Partitions of __share_group_state, the share groups' delivery state (KIP-932)."),
	def("share.coordinator.state.topic.replication.factor", Short, "1", "", atLeast(1),
		"Replication factor of __share_group_state (Kafka's default is 3, which a single broker cannot meet)."),
	def("share.coordinator.state.topic.segment.bytes", Int, "104857600", "", atLeast(minSegmentBytes), "segment.bytes of __share_group_state."),
	def("share.coordinator.state.topic.min.isr", Short, "1", "", atLeast(1),
		"min.insync.replicas of __share_group_state (Kafka's default is 2, which a single broker cannot meet)."),

	def("remote.log.storage.system.enable", Boolean, "true", "", nil, "Enable the remote tier on this broker (Strata's default is true)."),
	def("remote.log.manager.task.interval.ms", Long, "30000", "", atLeast(1), "How often each partition's tier loop runs."),
	def("remote.log.manager.task.retry.backoff.ms", Long, "500", "", atLeast(1), "First wait before a failed tier pass is retried."),
	def("remote.log.manager.task.retry.backoff.max.ms", Long, "30000", "", atLeast(1), "Longest wait between retries of a failing tier pass."),
	def("remote.log.manager.copy.max.bytes.per.second", Long, longMax, "", atLeast(1), "Byte rate of all uploads to the remote tier (KIP-956); dynamic."),
	def("remote.log.manager.fetch.max.bytes.per.second", Long, longMax, "", atLeast(1), "Byte rate of all reads from the remote tier (KIP-956); dynamic."),
	def("remote.fetch.max.wait.ms", Int, "500", "", atLeast(1), "Longest a fetch waits for its partitions read from the remote tier; dynamic."),
	def("remote.list.offsets.request.timeout.ms", Long, "30000", "", atLeast(1), "Longest a ListOffsets waits for a search of the remote tier; dynamic."),
	def("remote.log.index.file.cache.total.size.bytes", Long, "1073741824", "", atLeast(1), "Bytes of remote offset and time indexes kept in memory; dynamic."),
	def("log.remote.copy.lag.ms", Long, "0", "", atLeast(0), "Default of remote.copy.lag.ms."),
	def("log.remote.copy.lag.bytes", Long, "0", "", atLeast(0), "Default of remote.copy.lag.bytes."),

	nullDef("strata.remote.dir", String, "", nonEmpty, "Directory of the remote tier when no S3 bucket is set. Default: <first log dir>/remote."),
	nullDef("strata.remote.s3.bucket", String, "", nonEmpty, "S3 bucket of the remote tier; when set, the remote tier is S3."),
	def("strata.remote.s3.prefix", String, "", "", nil, "Key prefix inside the S3 bucket."),
	nullDef("strata.remote.s3.region", String, "", nonEmpty, "S3 region. Default: from the AWS environment."),
	nullDef("strata.remote.s3.endpoint", String, "", nonEmpty, "S3 endpoint URL, for S3-compatible stores. Default: AWS."),
	def("strata.remote.s3.path.style", Boolean, "false", "", nil, "Use path-style S3 URLs, as many S3-compatible stores need."),
	nullDef("strata.remote.cache.dir", String, "", nonEmpty, "Directory of the on-disk cache of remote segment chunks. Default: <first log dir>/remote-cache."),
	def("strata.remote.cache.size.bytes", Long, "1073741824", "", atLeast(0), "Bytes of remote segment chunks cached on local disk: 0 turns the cache off, else at least two chunks (strata.remote.chunk.bytes)."),
	def("strata.remote.chunk.bytes", Int, "8388608", "", between(65536, 268435456), "Size of the chunks read from the remote tier and cached."),
	def("strata.remote.readahead.chunks", Int, "2", "", between(0, 64), "Chunks read ahead of a sequential consumer of the remote tier."),
	def("strata.remote.orphan.grace.ms", Long, "3600000", "", atLeast(1), "Age at which a remote object that no metadata claims is deleted; longer than an upload takes."),
	def("strata.remote.orphan.scan.interval.ms", Long, "3600000", "", atLeast(1), "How often the bucket is listed for orphaned objects."),
	def("strata.remote.orphan.dry.run", Boolean, "false", "", nil, "Log orphaned remote objects instead of deleting them."),
	nullDef("strata.metadata.dir", String, "", nonEmpty, "Directory of the metadata log. Default: <metadata.log.dir>/__metadata."),
	nullDef("metadata.log.dir", String, "", nonEmpty, "The directory under which the metadata log is kept, in __metadata (Kafka: __cluster_metadata-0). Default: the first of log.dirs."),
	def("strata.metrics.listener", String, "", "", optionalHostPort, `host:port serving /metrics and /healthz; "" means off.`),
}, connectionDefs, replicationThrottleBrokerDefs, compatDefs, onlyDefaultDefs, oauthDefs, delegationTokenDefs, providerDefs))

// fallback is a broker key that supplies another key's value when that one is
// not set. scale converts its value to the first key's unit (hours → ms);
// zero means the value is taken as it is.
type fallback struct {
	key   string
	scale int64
}

// fallbacks lists, per broker key, the keys that supply its value when it is
// not set, in Kafka's precedence order (log.retention.ms, then .minutes, then
// .hours). Only the last key of a chain may have a default.
var fallbacks = map[string][]fallback{
	"node.id":               {{"broker.id", 0}},
	"log.dirs":              {{"log.dir", 0}},
	"log.roll.ms":           {{"log.roll.hours", 3_600_000}},
	"log.roll.jitter.ms":    {{"log.roll.jitter.hours", 3_600_000}},
	"log.retention.ms":      {{"log.retention.minutes", 60_000}, {"log.retention.hours", 3_600_000}},
	"log.flush.interval.ms": {{"log.flush.scheduler.interval.ms", 1}},
	// Kafka 3.0 renamed delegation.token.master.key.
	"delegation.token.secret.key": {{"delegation.token.master.key", 0}},
}

var brokerByName = index(brokerDefs)

// brokerPatterns match the broker keys named by a pattern rather than one by
// one: Kafka's listener- and mechanism-prefixed configs. Each returns the Def
// of a key it matches, named by the key itself; LookupBroker makes it
// read-only like every broker config.
var brokerPatterns = []func(key string) (Def, bool){
	jaasDef,          // listener.name.<listener>.<mechanism>.sasl.jaas.config
	listenerSSLDef,   // listener.name.<listener>.ssl.<key>
	oauthListenerDef, // listener.name.<listener>.oauthbearer.<key>
	providerDef,      // config.providers.<name>.class, config.providers.<name>.param.<param>
}

// envToKey maps STRATA_* environment variable names to broker keys.
var envToKey = envNames(brokerDefs)

// BrokerDefs returns the broker config definitions, sorted by name.
func BrokerDefs() []Def { return sorted(brokerDefs) }

// LookupBroker returns the definition of the broker config name: a key of
// BrokerDefs, or one that a pattern of brokerPatterns matches
// (listener.name.sasl_ssl.plain.sasl.jaas.config), whose Def is named by the
// key itself.
func LookupBroker(name string) (Def, bool) {
	if d, ok := brokerByName[name]; ok {
		return d, true
	}
	for _, match := range brokerPatterns {
		if d, ok := match(name); ok {
			d.ReadOnly = !IsDynamic(name)
			return d, true
		}
	}
	return Def{}, false
}

// EnvName is the environment variable that sets the broker config key:
// STRATA_ and the key in upper case with '.' and '-' as '_' (log.dirs →
// STRATA_LOG_DIRS, listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config →
// STRATA_LISTENER_NAME_SASL_SSL_SCRAM_SHA_256_SASL_JAAS_CONFIG). A strata.*
// key drops its own prefix (strata.remote.dir → STRATA_REMOTE_DIR); the long
// form STRATA_STRATA_REMOTE_DIR is accepted too.
func EnvName(key string) string {
	return envForm(strings.TrimPrefix(key, "strata."))
}

func envForm(key string) string {
	return "STRATA_" + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(key))
}

// envKey is the broker key that the environment variable name sets: one of
// envToKey, or a key of a pattern (see jaasEnvKey and listenerSSLEnvKey).
func envKey(name string) (string, bool) {
	if k, ok := envToKey[name]; ok {
		return k, true
	}
	if k, ok := jaasEnvKey(name); ok {
		return k, true
	}
	if k, ok := oauthListenerEnvKey(name); ok {
		return k, true
	}
	if k, ok := providerEnvKey(name); ok {
		return k, true
	}
	return listenerSSLEnvKey(name)
}

func envNames(defs []Def) map[string]string {
	m := make(map[string]string, len(defs))
	for _, d := range defs {
		e := EnvName(d.Name)
		if other, dup := m[e]; dup {
			panic("config: " + d.Name + " and " + other + " have the same environment variable " + e)
		}
		m[e] = d.Name
	}
	for _, d := range defs {
		if long := envForm(d.Name); long != EnvName(d.Name) {
			if other, dup := m[long]; dup {
				panic("config: " + d.Name + " and " + other + " have the same environment variable " + long)
			}
			m[long] = d.Name
		}
	}
	return m
}

// envNotConfig are STRATA_* variables that are not broker configs and that
// LoadBroker ignores: STRATA_BIN is the binary the end-to-end tests run, and
// it reaches the broker through the inherited environment.
var envNotConfig = map[string]bool{"STRATA_BIN": true}

// secret marks a Def sensitive: DescribeConfigs never returns its value, and
// errors do not quote it.
func secret(d Def) Def {
	d.Sensitive = true
	return d
}

// readOnly marks the defs read-only, but for the keys Strata changes at run
// time (dynamic.go), which Kafka reports writable.
func readOnly(defs []Def) []Def {
	for i := range defs {
		defs[i].ReadOnly = !dynamicKeys[defs[i].Name]
	}
	return defs
}

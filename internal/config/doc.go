// Package config is Strata's broker and topic configuration, with Kafka's
// names, types, defaults and validation (Kafka 3.9, the last line that still
// has message.timestamp.difference.max.ms and message.downconversion.enable).
//
// The definition tables (defs_topic.go, defs_broker.go) are the one place a
// key is declared. Everything else is derived from them: validation, the
// STRATA_* environment variable names, DescribeConfigs entries and synonyms.
//
// Where values come from, lowest precedence first:
//
//	broker: default < properties file < STRATA_* environment < flags
//	topic:  topic default < broker synonym (its chain) < topic override
//
// A broker key may take its value from a chain of other keys when it is not
// set, in Kafka's order: log.retention.ms < .minutes < .hours, log.roll.ms <
// .hours, log.roll.jitter.ms < .hours, log.flush.interval.ms <
// log.flush.scheduler.interval.ms, node.id < broker.id, log.dirs < log.dir.
//
// Most keys are listed one by one in the tables. A few are patterns (see
// brokerPatterns): listener.name.<listener>.<mechanism>.sasl.jaas.config,
// Kafka's broker JAAS key, with the listener name and the mechanism (plain,
// scram-sha-256, scram-sha-512) in lower case. Its environment variable is
// STRATA_LISTENER_NAME_<LISTENER>_<MECH>_SASL_JAAS_CONFIG, MECH one of PLAIN,
// SCRAM_SHA_256, SCRAM_SHA_512. It is a PASSWORD and sensitive; once set, it
// is described like the listed keys.
//
// The other pattern is listener.name.<listener>.ssl.<key>, Kafka's
// listener-prefixed TLS settings, which override ssl.<key> for that one
// listener; key is one of keystore.type, keystore.location,
// keystore.certificate.chain, keystore.key, truststore.type,
// truststore.location, truststore.certificates, client.auth,
// enabled.protocols, cipher.suites and principal.mapping.rules, each with
// the type, sensitivity and validation of ssl.<key>. Its environment
// variable is STRATA_LISTENER_NAME_<LISTENER>_SSL_<KEY>
// (STRATA_LISTENER_NAME_INTERNAL_SSL_KEYSTORE_LOCATION). The listener must be
// a TLS listener (SSL, SASL_SSL) of listeners. A listener that sets any of
// its keystore keys takes its keystore from them alone, and likewise its
// truststore. Broker.TLSFor and Broker.PrincipalRulesFor give a listener's
// effective settings; as in Kafka (KIP-684), the broker-wide ssl.client.auth
// applies to SSL listeners only, and a SASL_SSL listener asks for client
// certificates only through listener.name.<listener>.ssl.client.auth.
//
// Listeners: listeners may name several, each on its own port (or port 0);
// listener.security.protocol.map gives each name its protocol (PLAINTEXT, SSL,
// SASL_PLAINTEXT, SASL_SSL); advertised.listeners may only use listeners'
// names (Broker.Advertised falls back to the listener). The rules between
// keys, checked by LoadBroker on the broker-wide settings and on each TLS
// listener's effective ones: a TLS listener needs a keystore (a file, or
// inline chain and key, not both); client auth other than none needs a
// truststore (a file or inline, not both); a listener-prefixed TLS key names
// a TLS listener; a JAAS key names a SASL listener
// and an enabled mechanism; with PLAIN enabled every SASL listener has PLAIN
// users. Files are not read here: whoever loads them reports their errors.
//
// Cluster: without controller.quorum.voters and
// controller.quorum.bootstrap.servers a node is a single node, its own
// metadata quorum, with both process.roles and no controller listener (a
// listener named in controller.listener.names is an error). Bootstrap
// servers naming only this node's controller listener (Kafka 4's standalone
// quorum) make it the one voter of controller.quorum.voters; naming others,
// the node joins them (Broker.QuorumBootstrap, bootstrap_servers.go). With
// voters or bootstrap servers (Broker.Clustered), a voter is a controller,
// and listeners must have the controller listener, which serves Raft
// and forwarding only: it leaves Listeners and AdvertisedListeners for
// Broker.ControllerListener, and Broker.ControllerAdvertised is the address
// other nodes dial (a voter's entry in controller.quorum.voters, which its
// advertised controller entry must equal if it has one; else the advertised
// controller entry or the listener, with a specific host and port, and no
// voter's).
// inter.broker.listener.name names one of the remaining listeners. When it
// is a SASL listener, brokers authenticate to each other with
// sasl.mechanism.inter.broker.protocol, which must be one of
// sasl.enabled.mechanisms, and the username and password options of that
// listener's JAAS config for the mechanism (Broker.InterBrokerSASL); a
// single node, which dials no other broker, does not need them.
// auto.leader.rebalance.enable, leader.imbalance.check.interval.seconds and
// leader.imbalance.per.broker.percentage say when the controller moves
// leadership back to preferred replicas (single node or cluster alike).
// broker.heartbeat.interval.ms < broker.session.timeout.ms, and
// replica.fetch.wait.max.ms <= replica.socket.timeout.ms and <=
// replica.lag.time.max.ms.
//
// Groups: the session timeout and heartbeat interval of consumer-protocol
// groups (group.consumer.*) and of share groups (group.share.*, KIP-932),
// and share groups' record lock duration, lie within their min and max
// keys, and each heartbeat is below its session timeout. A group's own
// configs (the GROUP resource, group.go) are checked by ResolveGroup
// against the same bounds.
//
// Invariants:
//   - Validate at the gateway: LoadBroker and ValidateTopicOverrides (and
//     ResolveTopic, which calls it) check every value; Broker.Raw and the
//     typed fields hold only validated values, so interior parsing panics on
//     failure (a programmer error).
//   - No sentinels leave this package in the typed structs: Kafka's -1
//     ("unlimited") becomes an unset TimeLimit or BytesLimit, -2 ("same as the
//     total", local retention) is resolved to the total, and millisecond
//     values beyond what time.Duration holds (Long.MaxValue, "never") become
//     unlimited. Described values (Entry) stay in Kafka's form, since they go
//     on the wire.
//   - Enum-like values (CleanupPolicy, Compression, TimestampType) have an
//     invalid zero value.
//   - Errors a user can cause are one line naming the key, the value, where
//     it was set, and what is allowed; they wrap an *Error, which the api
//     layer answers as INVALID_CONFIG. The value of a sensitive key (and of
//     an unknown key that looks like one) is shown as [hidden], and JAAS
//     errors name options, never their values.
//
// Strata differs from Kafka on purpose in: node.id defaults to 1, listeners to
// PLAINTEXT://127.0.0.1:9092, log.dir to ./strata-data, replication factors to
// 1, remote.log.storage.system.enable to true, segment.bytes may be as
// small as 1024 bytes so tests can roll small segments, and
// segment.index.bytes must hold one time index entry (12 bytes; Kafka: 4).
// Only the broker configs that are topic defaults are dynamic (dynamic.go);
// every other broker entry is read-only and STATIC or DEFAULT. Unknown keys
// are errors, not warnings, but Kafka's thread pool and queue sizes are
// accepted and ignored (kafka_compat.go, Broker.NoEffectSettings), so that a
// Kafka server.properties runs unchanged; zookeeper.* keys are refused with
// what to do instead. socket.send.buffer.bytes and
// socket.receive.buffer.bytes default to -1, the OS's autotuned size
// (Kafka: 102400).
//
// In a cluster Strata differs from Kafka in:
//   - process.roles defaults to broker,controller and must include broker:
//     there are no controller-only nodes. Strata has no ZooKeeper mode
//     (Kafka 3.9's, with process.roles empty).
//   - controller.listener.names defaults to CONTROLLER; of several names
//     only the first is used, and listeners must not have the others.
//   - Every node of a cluster, voter or not, listens on the controller
//     listener (Kafka forbids it on a broker-only node), and it is PLAINTEXT
//     only: a listener.security.protocol.map entry for it must say
//     PLAINTEXT, and none means PLAINTEXT even when the map is set (Kafka
//     defaults it only when the map is not set).
//   - inter.broker.listener.name defaults to the first listener that is not
//     the controller listener (Kafka: the listener of
//     security.inter.broker.protocol, which Strata does not have).
//   - broker.heartbeat.interval.ms must be less than
//     broker.session.timeout.ms (Kafka logs an error when it exceeds half).
//   - replica.fetch.max.bytes, replica.fetch.response.max.bytes and
//     replica.fetch.min.bytes are at least 1 (Kafka allows 0): the
//     fetcher always asks for data.
//
// On security Strata differs from Kafka in:
//   - ssl.keystore.type and ssl.truststore.type default to PEM (Kafka: JKS;
//     an unset type with the store's password set is JKS, as Kafka's
//     default) and take PEM, PKCS12 or JKS (not JCEKS or BCFKS). A PKCS12 or JKS
//     keystore needs ssl.keystore.password and holds one private key; a JKS
//     truststore needs ssl.truststore.password (Kafka reads it unchecked
//     without one). A PEM key is in the clear or encrypted PKCS#8 (PBES2)
//     with ssl.key.password, as in Kafka; the store passwords are refused
//     with type PEM.
//   - ssl.enabled.protocols allows TLSv1.2 and TLSv1.3 only; ssl.protocol
//     is accepted and unused; ssl.cipher.suites takes crypto/tls's secure
//     suites (TLS 1.3's are not configurable in Go).
//   - sasl.enabled.mechanisms defaults to SCRAM-SHA-256,SCRAM-SHA-512
//     (Kafka: GSSAPI); GSSAPI and OAUTHBEARER are refused.
//   - sasl.mechanism.inter.broker.protocol defaults to PLAIN (Kafka:
//     GSSAPI, which Strata does not have). The broker's own credentials
//     come only from the inter-broker listener's
//     listener.name.<listener>.<mechanism>.sasl.jaas.config (Strata has no
//     broker-wide sasl.jaas.config and no JAAS file); the password is
//     sensitive there as everywhere in that value.
//   - No listener-prefixed keys besides the JAAS and ssl.* ones above
//     (no listener.name.<l>.sasl.enabled.mechanisms, and only the ssl.*
//     keys listed there). A broker-wide sasl.jaas.config is refused, as
//     Kafka ignores it.
//   - ssl.principal.mapping.rules takes Go (RE2) regular expressions, not
//     Java's. A value that Kafka accepts but cannot use is refused when it
//     is loaded: one without any rule, or whose replacement Java cannot
//     expand (Kafka fails the authentication when such a rule applies), or
//     with text Kafka silently skips (see PrincipalRules).
//   - A JAAS value holds one login module of the mechanism's class; options
//     that module does not take are refused, and so is a JAAS key for a
//     listener that is not SASL or a mechanism that is not enabled.
package config

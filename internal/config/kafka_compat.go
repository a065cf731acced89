package config

import (
	"errors"
	"maps"
	"slices"
	"strings"
)

// noEffect begins the documentation of a broker config that Strata accepts
// only so that a Kafka server.properties (Kafka's own config/server.properties
// among them) runs unchanged.
const noEffect = "Accepted so that a Kafka server.properties runs unchanged; changes nothing: "

// brokerLoginNoEffect explains the no-effect keys of a broker's own
// OAUTHBEARER login.
const brokerLoginNoEffect = noEffect + "Strata's brokers log in to each other with PLAIN or SCRAM (OAUTHBEARER is for clients)."

// kerberosNoEffect documents a sasl.kerberos.* key: set in many Kafka
// server.properties files, used only by GSSAPI.
func kerberosNoEffect(what string) string {
	return what + " (GSSAPI). " + noEffect + "Strata has no GSSAPI (sasl.enabled.mechanisms may not name it)."
}

// compatDefs are Kafka broker configs that size the JVM broker's thread
// pools and queues, or set up features Strata does not have. Each is
// validated as Kafka validates it and changes nothing; the broker logs the
// ones that are set (NoEffectSettings).
var compatDefs = noEffectDefs([]Def{
	def("num.network.threads", Int, "3", "", atLeast(1),
		"Kafka's threads that read and write sockets. "+noEffect+"every connection has its own reader and writer goroutines."),
	def("num.io.threads", Int, "8", "", atLeast(1),
		"Kafka's request handler threads. "+noEffect+"every connection handles its own requests, in order."),
	def("queued.max.requests", Int, "500", "", atLeast(1),
		"Kafka's bound on requests queued for its handler threads. "+noEffect+"there is no shared queue; a connection with 100 requests in flight is not read until one is answered."),
	def("background.threads", Int, "10", "", atLeast(1),
		"Kafka's threads for background work. "+noEffect+"retention, flushes, the cleaner and the tier each run on their own goroutines."),
	def("group.coordinator.threads", Int, "4", "", atLeast(1),
		"Kafka's group coordinator threads. "+noEffect+"each group coordinator partition runs on its own goroutine."),
	def("offsets.load.buffer.size", Int, "5242880", "", atLeast(1),
		"Kafka's read buffer for loading __consumer_offsets. "+noEffect+"loading reads the log through the page cache."),
	def("transaction.state.log.load.buffer.size", Int, "5242880", "", atLeast(1),
		"Kafka's read buffer for loading __transaction_state. "+noEffect+"loading reads the log through the page cache."),
	def("producer.purgatory.purge.interval.requests", Int, "1000", "", nil,
		"Kafka's purge interval of its produce purgatory. "+noEffect+"a waiting request holds nothing once answered."),
	def("fetch.purgatory.purge.interval.requests", Int, "1000", "", nil,
		"Kafka's purge interval of its fetch purgatory. "+noEffect+"a waiting request holds nothing once answered."),
	def("delete.records.purgatory.purge.interval.requests", Int, "1", "", nil,
		"Kafka's purge interval of its DeleteRecords purgatory. "+noEffect+"a waiting request holds nothing once answered."),
	nullDef("num.replica.alter.log.dirs.threads", Int, "", atLeast(1),
		"Kafka's threads that move replicas between log directories (JBOD). "+noEffect+"Strata has one data directory."),
	def("log.initial.task.delay.ms", Long, "30000", "", atLeast(0),
		"Kafka's delay before its log manager's first retention and flush passes. "+noEffect+"retention first runs log.retention.check.interval.ms after start."),
	nullDef("early.start.listeners", List, "", nil,
		"Kafka's listeners that start before its authorizer has loaded. "+noEffect+"every listener opens once the broker is ready."),
	def("socket.listen.backlog.size", Int, "50", "", atLeast(1),
		"Kafka's listen(2) backlog. "+noEffect+"Go listens with the kernel's net.core.somaxconn."),
	def("replica.socket.receive.buffer.bytes", Int, "65536", "", atLeast(-1),
		"Kafka's SO_RCVBUF of a follower's connections to leaders. "+noEffect+"the OS sizes them."),
	def("request.timeout.ms", Int, "30000", "", atLeast(0),
		"Kafka's timeout of its broker-to-controller requests. "+noEffect+"metadata requests are bounded by the request that needs them."),
	def("controller.socket.timeout.ms", Int, "30000", "", atLeast(0),
		"Kafka's socket timeout of its controller connections. "+noEffect+"metadata requests are bounded by the request that needs them."),
	def("initial.broker.registration.timeout.ms", Int, "60000", "", atLeast(0),
		"Kafka's wait for a new broker's first registration. "+noEffect+"a node keeps trying to join until it does or is stopped."),
	def("controller.quorum.election.timeout.ms", Int, "1000", "", atLeast(0),
		"Kafka's KRaft election timeout. "+noEffect+"Strata's metadata quorum is Raft (hashicorp/raft) with its own timeouts."),
	def("controller.quorum.election.backoff.max.ms", Int, "1000", "", atLeast(0),
		"Kafka's KRaft election backoff. "+noEffect+"Strata's metadata quorum is Raft (hashicorp/raft) with its own timeouts."),
	def("controller.quorum.fetch.timeout.ms", Int, "2000", "", atLeast(0),
		"Kafka's KRaft fetch timeout. "+noEffect+"Strata's metadata quorum is Raft (hashicorp/raft) with its own timeouts."),
	def("controller.quorum.request.timeout.ms", Int, "2000", "", atLeast(0),
		"Kafka's KRaft request timeout. "+noEffect+"Strata's metadata quorum is Raft (hashicorp/raft) with its own timeouts."),
	def("controller.quorum.retry.backoff.ms", Int, "20", "", atLeast(0),
		"Kafka's KRaft retry backoff. "+noEffect+"Strata's metadata quorum is Raft (hashicorp/raft) with its own timeouts."),
	def("controller.quorum.append.linger.ms", Int, "25", "", atLeast(0),
		"Kafka's KRaft append linger. "+noEffect+"Strata's metadata quorum commits each change as it comes."),
	def("metadata.log.segment.bytes", Int, "1073741824", "", atLeast(12),
		"Kafka's KRaft metadata log segment size. "+noEffect+"Strata's metadata log is compacted by Raft snapshots."),
	def("metadata.log.segment.ms", Long, "604800000", "", atLeast(1),
		"Kafka's KRaft metadata log segment age. "+noEffect+"Strata's metadata log is compacted by Raft snapshots."),
	def("metadata.max.retention.bytes", Long, "104857600", "", nil,
		"Kafka's KRaft metadata log retention by size. "+noEffect+"Strata's metadata log is compacted by Raft snapshots."),
	def("metadata.max.retention.ms", Long, "604800000", "", nil,
		"Kafka's KRaft metadata log retention by age. "+noEffect+"Strata's metadata log is compacted by Raft snapshots."),
	def("metrics.num.samples", Int, "2", "", atLeast(1),
		"Samples of Kafka's JMX metrics. "+noEffect+"Strata's metrics are Prometheus counters and gauges (strata.metrics.listener)."),
	def("metrics.sample.window.ms", Long, "30000", "", atLeast(1),
		"Sample window of Kafka's JMX metrics. "+noEffect+"Strata's metrics are Prometheus counters and gauges (strata.metrics.listener)."),
	def("metrics.recording.level", String, "INFO", "", oneOf("INFO", "DEBUG", "TRACE"),
		"Recording level of Kafka's JMX metrics. "+noEffect+"Strata's metrics are Prometheus counters and gauges (strata.metrics.listener)."),
	def("kafka.metrics.polling.interval.secs", Int, "10", "", atLeast(1),
		"Polling interval of Kafka's Yammer metrics reporters. "+noEffect+"Strata's metrics are read when scraped."),
	def("auto.include.jmx.reporter", Boolean, "true", "", nil,
		"Whether Kafka adds its JMX reporter. "+noEffect+"Strata has no JMX; its metrics are at strata.metrics.listener."),
	def("broker.id.generation.enable", Boolean, "true", "", nil,
		"Kafka's ZooKeeper-era broker id generation. "+noEffect+"node.id (or broker.id) names the node."),
	def("reserved.broker.max.id", Int, "1000", "", atLeast(0),
		"Kafka's ZooKeeper-era bound on configured broker ids. "+noEffect+"node.id (or broker.id) names the node."),
	def("group.share.enable", Boolean, "false", "", nil,
		"Kafka's switch for share groups (KIP-932) before the share.version feature. "+noEffect+"share groups are always served."),
	def("unstable.api.versions.enable", Boolean, "false", "", nil,
		"Whether Kafka advertises API versions still in development. "+noEffect+"Strata advertises only what it implements."),
	secret(nullDef("password.encoder.secret", Password, "", nil,
		"Kafka's key for the dynamic password configs it stored in ZooKeeper. "+noEffect+"as Kafka's KRaft brokers, Strata keeps a listener's dynamic keystore and truststore passwords in the metadata log as given (never described, never logged).")),
	def("unclean.leader.election.interval.ms", Long, "300000", "", atLeast(1),
		"How often Kafka's controller looks for leaderless partitions to elect uncleanly. "+noEffect+"Strata's controller looks each time the metadata changes (a fence, a replica back, a config turned on)."),
	nullDef("sasl.kerberos.service.name", String, "", nil, kerberosNoEffect("The Kerberos service name of the broker")),
	def("sasl.kerberos.kinit.cmd", String, "/usr/bin/kinit", "", nil, kerberosNoEffect("Kafka's kinit command")),
	def("sasl.kerberos.ticket.renew.window.factor", Double, "0.8", "", nil, kerberosNoEffect("Kafka's renewal point of a Kerberos ticket")),
	def("sasl.kerberos.ticket.renew.jitter", Double, "0.05", "", nil, kerberosNoEffect("Kafka's jitter of Kerberos ticket renewal")),
	def("sasl.kerberos.min.time.before.relogin", Long, "60000", "", nil, kerberosNoEffect("Kafka's least time between Kerberos logins")),
	def("sasl.kerberos.principal.to.local.rules", List, "DEFAULT", "", nil, kerberosNoEffect("Kafka's rules mapping Kerberos principals to short names")),
	def("sasl.login.refresh.window.factor", Double, "0.8", "", ratio(0.5, 1.0),
		"Kafka's refresh point of an expiring login (OAUTHBEARER). "+noEffect+"Strata's brokers log in to each other with PLAIN or SCRAM, which do not expire (OAUTHBEARER is for clients)."),
	def("sasl.login.refresh.window.jitter", Double, "0.05", "", ratio(0, 0.25),
		"Kafka's jitter of an expiring login's refresh (OAUTHBEARER). "+noEffect+"Strata's brokers log in to each other with PLAIN or SCRAM, which do not expire (OAUTHBEARER is for clients)."),
	def("sasl.login.refresh.min.period.seconds", Short, "60", "", atLeast(0),
		"Kafka's least wait between login refreshes (OAUTHBEARER). "+noEffect+"Strata's brokers log in to each other with PLAIN or SCRAM, which do not expire (OAUTHBEARER is for clients)."),
	def("sasl.login.refresh.buffer.seconds", Short, "300", "", atLeast(0),
		"Kafka's margin of an expiring login's refresh (OAUTHBEARER). "+noEffect+"Strata's brokers log in to each other with PLAIN or SCRAM, which do not expire (OAUTHBEARER is for clients)."),
	def("sasl.oauthbearer.token.endpoint.url", String, "", "", nil,
		"Kafka's token endpoint for the broker's own OAUTHBEARER login. "+brokerLoginNoEffect),
	def("sasl.login.connect.timeout.ms", Int, "10000", "", atLeast(0),
		"Kafka's connect timeout of the broker's own OAUTHBEARER login. "+brokerLoginNoEffect),
	def("sasl.login.read.timeout.ms", Int, "10000", "", atLeast(0),
		"Kafka's read timeout of the broker's own OAUTHBEARER login. "+brokerLoginNoEffect),
	def("sasl.login.retry.backoff.ms", Long, "100", "", atLeast(0),
		"Kafka's first retry wait of the broker's own OAUTHBEARER login. "+brokerLoginNoEffect),
	def("sasl.login.retry.backoff.max.ms", Long, "10000", "", atLeast(0),
		"Kafka's longest retry wait of the broker's own OAUTHBEARER login. "+brokerLoginNoEffect),
	def("offsets.topic.compression.codec", Int, "0", "", between(0, 4),
		"Kafka's compression of the offset commits it writes to __consumer_offsets. "+noEffect+"Strata writes them uncompressed."),
	def("log.cleaner.io.buffer.size", Int, "524288", "", atLeast(0),
		"Kafka's read and write buffers of each log cleaner thread. "+noEffect+"the cleaner reads a window of the log at a time and writes whole cleaned batches."),
	def("log.cleaner.io.buffer.load.factor", Double, "0.9", "", ratio(0, 1),
		"Kafka's load factor of the cleaner's key map. "+noEffect+"Strata's key map sizes itself to log.cleaner.dedupe.buffer.size."),
	def("remote.log.manager.thread.pool.size", Int, "10", "", atLeast(1),
		"Kafka's threads that copy and expire remote segments. "+noEffect+"Strata's tier loop uploads each partition's segments in order."),
})

// onlyDefaultDefs are Kafka broker configs whose only value Strata accepts
// is the default: any other asks for what Strata does not do (load a Java
// class, elect outside the ISR, serve share groups), and silently ignoring it
// would run the broker without a policy or plugin its operator relies on.
var onlyDefaultDefs = []Def{
	nullDef("create.topic.policy.class.name", Class, "", javaClassRefused,
		"Kafka's CreateTopicPolicy plugin, a Java class. Strata loads no Java classes; only unset is accepted (use ACLs on CREATE to limit who creates topics)."),
	nullDef("alter.config.policy.class.name", Class, "", javaClassRefused,
		"Kafka's AlterConfigPolicy plugin, a Java class. Strata loads no Java classes; only unset is accepted (use ACLs on ALTER_CONFIGS to limit who alters configs)."),
	nullDef("client.quota.callback.class", Class, "", javaClassRefused,
		"Kafka's ClientQuotaCallback plugin, a Java class. Strata loads no Java classes; only unset is accepted (client quotas are set with kafka-configs, see Client quotas)."),
	def("metric.reporters", List, "", "", emptyOr("Strata loads no Java classes: its metrics are served in the Prometheus format at strata.metrics.listener; remove metric.reporters"),
		"Kafka's metrics reporter classes. Strata loads no Java classes; only empty is accepted (its metrics are at strata.metrics.listener)."),
	def("kafka.metrics.reporters", List, "", "", emptyOr("Strata loads no Java classes: its metrics are served in the Prometheus format at strata.metrics.listener; remove kafka.metrics.reporters"),
		"Kafka's Yammer metrics reporter classes. Strata loads no Java classes; only empty is accepted (its metrics are at strata.metrics.listener)."),
	def("eligible.leader.replicas.enable", Boolean, "false", "", onlyFalse("Strata does not keep eligible leader replicas (KIP-966): it elects leaders from the ISR, and outside it only by unclean election; set it to false or remove it"),
		"Kafka's eligible leader replicas (KIP-966). Only false is accepted: Strata elects leaders from the ISR only."),
}

// javaClassRefused refuses a Java class name: Strata loads none.
func javaClassRefused(v string) error {
	if v == "" {
		return nil
	}
	return errors.New("is a Java class, and Strata loads no Java classes; remove it (see its documentation for what Strata offers instead)")
}

// emptyOr allows only the empty value, else fails with msg.
func emptyOr(msg string) func(string) error {
	return func(v string) error {
		if len(splitList(v)) == 0 {
			return nil
		}
		return errors.New(msg)
	}
}

// onlyFalse allows only false, else fails with msg.
func onlyFalse(msg string) func(string) error {
	return func(v string) error {
		if b, err := parseBool(v); err == nil && !b {
			return nil
		}
		return errors.New(msg)
	}
}

func noEffectDefs(defs []Def) []Def {
	for i := range defs {
		defs[i].NoEffect = true
	}
	return defs
}

// NoEffectSettings lists, as key=value in key order, the broker configs set
// (in any static source) that Strata accepts and ignores (compatDefs).
func (b *Broker) NoEffectSettings() []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(b.Raw)) {
		if d, ok := brokerByName[k]; ok && d.NoEffect {
			v := b.Raw[k]
			if d.Sensitive {
				v = hiddenValue
			}
			out = append(out, k+"="+v)
		}
	}
	return out
}

// zookeeperMsg is the error for any zookeeper.* key: Kafka 4 removed them,
// and Strata never had a ZooKeeper.
const zookeeperMsg = "Strata has no ZooKeeper: its metadata lives in its own Raft quorum (a single node needs no setting; a cluster lists its voters in controller.quorum.voters); remove the zookeeper.* keys"

func isZookeeperKey(key string) bool { return strings.HasPrefix(key, "zookeeper.") }

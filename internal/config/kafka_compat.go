package config

import (
	"maps"
	"slices"
	"strings"
)

// noEffect begins the documentation of a broker config that Strata accepts
// only so that a Kafka server.properties (Kafka's own config/server.properties
// among them) runs unchanged.
const noEffect = "Accepted so that a Kafka server.properties runs unchanged; changes nothing: "

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
	def("share.coordinator.state.topic.replication.factor", Short, "3", "", atLeast(1),
		"Replication factor of Kafka's share-group state topic (KIP-932). "+noEffect+"Strata has no share groups."),
	def("share.coordinator.state.topic.min.isr", Short, "2", "", atLeast(1),
		"min.insync.replicas of Kafka's share-group state topic (KIP-932). "+noEffect+"Strata has no share groups."),
})

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
			out = append(out, k+"="+b.Raw[k])
		}
	}
	return out
}

// zookeeperMsg is the error for any zookeeper.* key: Kafka 4 removed them,
// and Strata never had a ZooKeeper.
const zookeeperMsg = "Strata has no ZooKeeper: its metadata lives in its own Raft quorum (a single node needs no setting; a cluster lists its voters in controller.quorum.voters); remove the zookeeper.* keys"

func isZookeeperKey(key string) bool { return strings.HasPrefix(key, "zookeeper.") }

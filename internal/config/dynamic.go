package config

import (
	"fmt"
	"slices"
	"strings"
)

// Dynamic broker configs (Kafka's KIP-226): set at run time with AlterConfigs
// or IncrementalAlterConfigs on a BROKER resource and kept in the metadata
// quorum, for the whole cluster (the resource named "", Kafka's
// --entity-default) or for one broker (the resource named by its node id).
// On a broker, its own value wins over the cluster-wide one, which wins over
// server.properties; a topic's override wins over all three.
//
// Strata changes at run time the broker configs that are topic config
// defaults (log.retention.ms for retention.ms, ...), as Kafka's
// DynamicLogConfig does; every partition takes the new default at once.
// The replication throttle rates (KIP-73), the connection limits
// (max.connections*, broker-wide and per listener), the log cleaner's
// threads, memory, backoff and I/O rate (Broker.Cleaner), the remote
// tier's quotas, waits and index cache (Broker.RemoteSettings),
// num.replica.fetchers, producer.id.expiration.ms and
// transaction.partition.verification.enable and a listener's
// keystore and truststore files (listener.name.<l>.ssl.keystore.location,
// ...truststore.location, one broker at a time) are dynamic too, read
// where they apply. Every other broker config applies at start only.

// Dynamic is the dynamic configs a broker runs with. The maps are never
// written; nil means none.
type Dynamic struct {
	Default map[string]string // the cluster-wide default resource: DYNAMIC_DEFAULT_BROKER_CONFIG
	Node    map[string]string // this broker's own resource: DYNAMIC_BROKER_CONFIG
}

// WithDynamic returns a copy of b that runs with d: topic configs resolve
// and broker configs describe through d. The typed fields stay b's static
// values.
func (b *Broker) WithDynamic(d Dynamic) *Broker {
	c := *b
	c.dynamic = d
	return &c
}

// ClusterWide is b as the cluster-wide broker resource sees it: b's
// dynamic configs without its own, the cluster-wide ones alone.
func (b *Broker) ClusterWide() *Broker { return b.WithDynamic(Dynamic{Default: b.dynamic.Default}) }

// layers are where a broker key's value may come from, highest precedence
// first; any may be nil.
type layers struct {
	node, dflt, static map[string]string
}

func layersOf(b *Broker) layers {
	if b == nil {
		return layers{}
	}
	return layers{node: b.dynamic.Node, dflt: b.dynamic.Default, static: b.Raw}
}

// dynamicKeys are the broker configs Strata changes at run time: the
// replication throttle rates (read where they apply, at each use), the
// connection limits (applied to the listeners as they change), the log
// cleaner's settings (applied to its threads as they change), the remote
// tier's settings, the producer-state settings, and the
// broker synonyms of the topic configs, with the longer-unit keys of their
// chains (log.retention.hours for log.retention.ms), as Kafka's
// ServerTopicConfigSynonyms lists them.
var dynamicKeys = func() map[string]bool {
	keys := map[string]bool{LeaderThrottledRate: true, FollowerThrottledRate: true, replicaFetchersKey: true}
	for _, k := range slices.Concat(connectionLimitKeys, cleanerDynamicKeys, remoteDynamicKeys, producerStateKeys) {
		keys[k] = true
	}
	for _, d := range topicDefs {
		if d.BrokerSynonym == "" {
			continue
		}
		keys[d.BrokerSynonym] = true
		if d.BrokerSynonym == "log.flush.interval.ms" {
			continue // log.flush.scheduler.interval.ms is the flusher's own period, not a synonym
		}
		for _, f := range fallbacks[d.BrokerSynonym] {
			keys[f.key] = true
		}
	}
	return keys
}()

// value is broker config key's value in b, dynamic configs first, else its
// default.
func (b *Broker) value(key string) string {
	v, _, ok := brokerValue(layersOf(b), key)
	if !ok {
		v = brokerByName[key].Default
	}
	return v
}

// IsDynamic reports whether Strata can change broker config key at run
// time: a key of dynamicKeys, or a listener's own connection limit
// (listener.name.<listener>.max.connections, ....max.connection.creation.rate),
// dynamic in Kafka too (its ListenerConnectionQuota is reconfigurable), a
// listener's keystore or truststore, or its PLAIN users (jaas_dynamic.go).
func IsDynamic(key string) bool {
	if dynamicKeys[key] {
		return true
	}
	k, ok := parseListenerSSLKey(key)
	return ok && slices.Contains(listenerConnKeys, k.key) || isReloadableSSLKey(key) || isDynamicJAASKey(key)
}

// isReloadableSSLKey reports whether key is a listener's own TLS key that
// changes at run time (reloadableSSLKeys).
func isReloadableSSLKey(key string) bool {
	k, ok := parseListenerSSLKey(key)
	return ok && slices.Contains(reloadableSSLKeys, k.key)
}

// Redacted is m with the values of sensitive broker configs hidden, for
// logs.
func Redacted(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if d, _ := LookupBroker(k); d.Sensitive {
			v = hiddenValue
		}
		out[k] = v
	}
	return out
}

// PerBrokerOnlyError refuses configs on the cluster-wide broker resource
// that only one broker's resource may hold: a listener's keystore and
// truststore files (each broker has its own certificate) and its JAAS
// config (Kafka's sasl.jaas.config is per broker too). Kafka answers it
// with INVALID_REQUEST, as NotDynamicError.
type PerBrokerOnlyError struct {
	Keys []string // sorted
}

func (e *PerBrokerOnlyError) Error() string {
	return fmt.Sprintf("Cannot update these configs at default cluster level, broker id must be specified: [%s]; set them on each broker (kafka-configs --entity-type brokers --entity-name <id>)",
		strings.Join(e.Keys, ", "))
}

// CheckClusterWide refuses, with a *PerBrokerOnlyError naming them all, the
// keys of m that cannot be set for the whole cluster.
func CheckClusterWide(m map[string]string) error {
	var perBroker []string
	for _, key := range sortedKeys(m) {
		if isReloadableSSLKey(key) || isDynamicJAASKey(key) {
			perBroker = append(perBroker, key)
		}
	}
	if len(perBroker) > 0 {
		return &PerBrokerOnlyError{Keys: perBroker}
	}
	return nil
}

// NotDynamicError refuses dynamic broker configs that Strata applies at
// start only. Kafka answers it with INVALID_REQUEST.
type NotDynamicError struct {
	Keys []string // sorted
}

func (e *NotDynamicError) Error() string {
	var static, inert []string
	for _, k := range e.Keys {
		if d, ok := brokerByName[k]; ok && d.NoEffect {
			inert = append(inert, k)
		} else {
			static = append(static, k)
		}
	}
	var parts []string
	if len(static) > 0 {
		parts = append(parts, fmt.Sprintf("Strata applies [%s] at start only: set them in server.properties, STRATA_* variables or flags, and restart",
			strings.Join(static, ", ")))
	}
	if len(inert) > 0 {
		parts = append(parts, fmt.Sprintf("[%s] change nothing in Strata (accepted in server.properties for Kafka's sake only)", strings.Join(inert, ", ")))
	}
	return fmt.Sprintf("Cannot update these configs dynamically: [%s]; %s", strings.Join(e.Keys, ", "), strings.Join(parts, "; "))
}

// ValidateDynamic checks the whole set of dynamic configs of one broker
// resource, as Kafka's DynamicBrokerConfig.validateConfigs does: every key
// must be one Strata changes at run time (else a *NotDynamicError naming
// all that are not), and every value valid for its key (else an *Error).
// Unknown keys are an *Error too. It returns the values trimmed, as they
// are to be stored.
func ValidateDynamic(m map[string]string) (map[string]string, error) {
	var static []string
	for _, k := range sortedKeys(m) {
		d, known := LookupBroker(k)
		switch {
		case !known:
			return nil, &Error{Key: k, Value: m[k], Msg: "unknown broker config"}
		case !IsDynamic(k):
			static = append(static, k)
		case d.Sensitive && !isReloadableSSLKey(k) && !isDynamicJAASKey(k):
			return nil, &Error{Key: k, Msg: "sensitive configs cannot be set dynamically"}
		}
	}
	if len(static) > 0 {
		return nil, &NotDynamicError{Keys: static}
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		v = strings.TrimSpace(v)
		d, _ := LookupBroker(k)
		if err := d.Check(v); err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// DescribeBrokerDefault describes the cluster-wide dynamic broker configs of
// b as Kafka describes its default broker resource: only the keys set there,
// sorted by name, with their synonyms below them (this broker's own dynamic
// values left out: ClusterWide).
func DescribeBrokerDefault(b *Broker) []Entry {
	cluster := b.ClusterWide()
	return slices.DeleteFunc(DescribeBroker(cluster), func(e Entry) bool {
		_, set := cluster.dynamic.Default[e.Name]
		return !set
	})
}

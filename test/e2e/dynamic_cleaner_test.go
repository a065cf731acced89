package e2e

import (
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestDynamicCleanerSettings: the log cleaner's settings change at run
// time, as with kafka-configs --entity-type brokers --entity-default: a
// broker started with an hour's cleaner backoff compacts a topic soon
// after the backoff, threads and I/O rate are changed cluster-wide (its
// sleeping cleaner wakes up), describes them as dynamic, and refuses a
// thread count over double the running one. Kafka's no-effect cleaner
// buffer settings are accepted in the static config.
func TestDynamicCleanerSettings(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), "log.cleaner.backoff.ms=3600000", "log.cleaner.io.buffer.size=1048576",
		"log.cleaner.io.buffer.load.factor=0.9")
	adm := newAdmin(t, b.Addr)
	const topic, keys, rounds = "dyn-cleaner", 10, 20
	createTopic(t, adm, topic, 1, compactedTopicConfigs("86400000"))
	want := produceKeyRounds(t, b.Addr, topic, keys, rounds, "")
	rollPastKeys(t, b.Addr, topic, 30)

	set := func(k, v string) kadm.AlterConfig {
		return kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: kadm.StringPtr(v)}
	}
	if err := alterBrokerConfigs(t, adm, []kadm.AlterConfig{set("log.cleaner.backoff.ms", "100"), set("log.cleaner.threads", "2"),
		set("log.cleaner.io.max.bytes.per.second", "10485760")}); err != nil {
		t.Fatalf("cluster-wide cleaner settings: %v", err)
	}
	records := waitCompacted(t, b.Addr, topic, func(s keyedState) bool {
		for k := range want {
			if s.count[k] != 1 {
				return false
			}
		}
		return true
	})
	requireFinalState(t, "franz-go", stateOf(records), want)
	if out := b.output.String(); !strings.Contains(out, "changed log cleaner settings") {
		t.Errorf("the broker did not log the new cleaner settings:\n%s", out)
	}

	described, err := adm.DescribeBrokerConfigs(testContext(t, clientDeliveryTimeout), brokerNodeID(t, adm))
	if err != nil || len(described) != 1 {
		t.Fatalf("describing the broker: %v", err)
	}
	for key, v := range map[string]string{"log.cleaner.threads": "2", "log.cleaner.io.max.bytes.per.second": "10485760"} {
		c, ok := configValue(described[0], key)
		if !ok || c.Value == nil || *c.Value != v || c.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
			t.Errorf("%s described as %+v, want %s from the cluster-wide default", key, c, v)
		}
	}

	err = alterBrokerConfigs(t, adm, []kadm.AlterConfig{set("log.cleaner.threads", "5")})
	if !errors.Is(err, kerr.InvalidConfig) {
		t.Fatalf("5 cleaner threads over 2 running: %v, want INVALID_CONFIG", err)
	}
}

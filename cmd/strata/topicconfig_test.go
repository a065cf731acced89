package main

import (
	"strconv"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/broker"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/partition"
)

// Every value the config layer accepts for a topic config (or, at run time,
// for a broker default of one) must give a
// config a partition opens with and takes at run time: a value valid for
// CreateTopics but refused by the partition would leave the topic with a
// partition that never opens (max.message.bytes=0 did). The values tried
// are each numeric config's boundaries and each of a few landmarks.
func TestEveryAcceptedTopicConfigOpensAPartition(t *testing.T) {
	landmarks := []string{"-2", "-1", "0", "1", "2", "4", "8", "11", "12", "13", "1023", "1024",
		strconv.Itoa(1 << 20), strconv.Itoa(1<<31 - 1), "9223372036854775807", "0.0", "0.5", "1.0", "true", "false"}
	b, err := config.LoadBroker("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	resolve := topicResolver(b)
	running := openDefaultPartition(t, resolve)
	tried := 0
	for _, d := range config.TopicDefs() {
		for _, v := range landmarks {
			if d.Check(v) != nil {
				continue
			}
			overrides := map[string]string{d.Name: v}
			if _, err := config.ResolveTopic(overrides, b); err != nil {
				continue // refused with INVALID_CONFIG: consistent
			}
			cfg, err := resolve(broker.ConfigSources{Topic: overrides})
			if err != nil {
				t.Errorf("%s=%s: accepted by the config layer, refused by the resolver: %v", d.Name, v, err)
				continue
			}
			tried++
			p, err := partition.Open(partitionOptions(t, cfg))
			if err != nil {
				t.Errorf("%s=%s: accepted by the config layer, a partition does not open: %v", d.Name, v, err)
				continue
			}
			if err := p.Close(); err != nil {
				t.Errorf("%s=%s: close: %v", d.Name, v, err)
			}
			if err := running.SetConfig(cfg); err != nil {
				t.Errorf("%s=%s: accepted by the config layer, an open partition refuses it: %v", d.Name, v, err)
			}
		}
	}
	// The same through the broker defaults, set at run time.
	for _, d := range config.BrokerDefs() {
		if !config.IsDynamic(d.Name) {
			continue
		}
		for _, v := range landmarks {
			dyn, err := config.ValidateDynamic(map[string]string{d.Name: v})
			if err != nil {
				continue
			}
			if _, err := config.ResolveTopic(nil, b.WithDynamic(config.Dynamic{Default: dyn})); err != nil {
				continue // refused with INVALID_CONFIG: consistent
			}
			tried++
			cfg, err := resolve(broker.ConfigSources{ClusterDynamic: dyn})
			if err != nil {
				t.Errorf("broker %s=%s: accepted by the config layer, refused by the resolver: %v", d.Name, v, err)
				continue
			}
			if err := running.SetConfig(cfg); err != nil {
				t.Errorf("broker %s=%s: accepted by the config layer, an open partition refuses it: %v", d.Name, v, err)
			}
		}
	}
	if tried < 100 {
		t.Fatalf("only %d values tried", tried)
	}
}

func partitionOptions(t *testing.T, cfg partition.Config) partition.Options {
	return partition.Options{Dir: t.TempDir(), TP: base.TopicPartition{Topic: "t", Partition: 0},
		TopicID: base.TopicID{1}, Config: cfg, Clock: clock.Real{}}
}

// openDefaultPartition opens a partition with the default topic config,
// closed at cleanup.
func openDefaultPartition(t *testing.T, resolve broker.ConfigResolver) *partition.Partition {
	t.Helper()
	cfg, err := resolve(broker.ConfigSources{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := partition.Open(partitionOptions(t, cfg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

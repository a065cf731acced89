package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/broker"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/record"
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

// The topic's compression level reaches the partition with its codec.
func TestCompressionLevelReachesThePartition(t *testing.T) {
	b, err := config.LoadBroker("", nil, map[string]string{"compression.zstd.level": "7"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		overrides map[string]string
		codec     record.Codec
		level     int
	}{
		{map[string]string{"compression.type": "gzip", "compression.gzip.level": "1"}, record.CodecGzip, 1},
		{map[string]string{"compression.type": "gzip"}, record.CodecGzip, -1},
		{map[string]string{"compression.type": "lz4", "compression.lz4.level": "12"}, record.CodecLZ4, 12},
		{map[string]string{"compression.type": "zstd"}, record.CodecZstd, 7}, // the broker's default
		{map[string]string{"compression.type": "snappy", "compression.gzip.level": "9"}, record.CodecSnappy, 0},
	} {
		topic, err := config.ResolveTopic(c.overrides, b)
		if err != nil {
			t.Fatal(err)
		}
		pc := partitionConfig(topic)
		if !pc.RecompressSet || pc.Recompress != c.codec || pc.RecompressLevel != c.level {
			t.Errorf("%v: recompress %v (set %v) at %d, want %v at %d", c.overrides, pc.Recompress, pc.RecompressSet, pc.RecompressLevel, c.codec, c.level)
		}
	}
}

// producer.id.expiration.ms reaches the partitions through the dynamic
// layers, as the topic defaults do.
func TestProducerIDExpirationIsDynamic(t *testing.T) {
	b, err := config.LoadBroker("", nil, map[string]string{"producer.id.expiration.ms": "60000"})
	if err != nil {
		t.Fatal(err)
	}
	resolve := topicResolver(b)
	for _, tt := range []struct {
		sources broker.ConfigSources
		want    time.Duration
	}{
		{broker.ConfigSources{}, time.Minute},
		{broker.ConfigSources{ClusterDynamic: map[string]string{"producer.id.expiration.ms": "1000"}}, time.Second},
		{broker.ConfigSources{ClusterDynamic: map[string]string{"producer.id.expiration.ms": "1000"},
			NodeDynamic: map[string]string{"producer.id.expiration.ms": "2000"}}, 2 * time.Second},
	} {
		c, err := resolve(tt.sources)
		if err != nil {
			t.Fatal(err)
		}
		if c.ProducerIDExpiration != tt.want {
			t.Errorf("%+v: ProducerIDExpiration %v, want %v", tt.sources, c.ProducerIDExpiration, tt.want)
		}
	}
}

// Each topic config reaches its partition.Config field, unset limits
// staying unset.
func TestPartitionConfigMapsTheTopic(t *testing.T) {
	b, err := config.LoadBroker("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	resolve := func(overrides map[string]string) partition.Config {
		t.Helper()
		topic, err := config.ResolveTopic(overrides, b)
		if err != nil {
			t.Fatal(err)
		}
		return partitionConfig(topic)
	}
	defaults := resolve(nil)
	if defaults.FlushMessages != 0 || defaults.FlushInterval != 0 || defaults.Compaction.MaxLag != 0 || defaults.LogAppendTime ||
		defaults.TimestampBefore.Set || defaults.TimestampAfter.Set {
		t.Errorf("defaults: %+v", defaults)
	}
	got := resolve(map[string]string{"message.timestamp.before.max.ms": "1000", "message.timestamp.difference.max.ms": "5000",
		"max.compaction.lag.ms": "60000", "flush.messages": "10", "flush.ms": "2000", "message.timestamp.type": "LogAppendTime",
		"retention.ms": "9000", "local.retention.ms": "3000", "compression.type": "uncompressed"})
	want := partition.MaxSkew{D: time.Second, Set: true}
	if got.TimestampBefore != want || got.TimestampAfter != (partition.MaxSkew{D: 5 * time.Second, Set: true}) {
		t.Errorf("timestamp skew before %+v, after %+v; want %+v and the deprecated 5s", got.TimestampBefore, got.TimestampAfter, want)
	}
	if got.Compaction.MaxLag != time.Minute || got.FlushMessages != 10 || got.FlushInterval != 2*time.Second || !got.LogAppendTime {
		t.Errorf("max lag %v, flush every %d or %v, log append time %v", got.Compaction.MaxLag, got.FlushMessages, got.FlushInterval, got.LogAppendTime)
	}
	if r := got.Retention; r.RetentionMs.Value != 9000 || !r.RetentionMs.Set || r.LocalRetentionMs.Value != 3000 || !r.LocalRetentionMs.Set {
		t.Errorf("retention %+v", r)
	}
	if !got.RecompressSet || got.Recompress != record.CodecNone {
		t.Errorf("compression.type=uncompressed: recompress %v (set %v)", got.Recompress, got.RecompressSet)
	}
	if compacted := resolve(map[string]string{"cleanup.policy": "compact", "retention.ms": "9000"}); compacted.Retention.RetentionMs.Set || !compacted.Compact {
		t.Errorf("a compacted topic: %+v", compacted.Retention)
	}

	tieredBroker, err := config.LoadBroker("", nil, map[string]string{"remote.log.storage.system.enable": "true"})
	if err != nil {
		t.Fatal(err)
	}
	tiered, err := config.ResolveTopic(map[string]string{"remote.storage.enable": "true", "remote.log.copy.disable": "true"}, tieredBroker)
	if err != nil {
		t.Fatal(err)
	}
	if pc := partitionConfig(tiered); !pc.Tiered || !pc.RemoteCopyDisabled || defaults.Tiered || defaults.RemoteCopyDisabled {
		t.Errorf("remote.storage.enable and remote.log.copy.disable: tiered %v, copy disabled %v; defaults %v, %v",
			pc.Tiered, pc.RemoteCopyDisabled, defaults.Tiered, defaults.RemoteCopyDisabled)
	}
}

// No cleaner runs with log.cleaner.enable=false or no cleaner thread.
func TestCleanerOptions(t *testing.T) {
	for overrides, want := range map[string]bool{"": true, "log.cleaner.enable=false": false, "log.cleaner.threads=0": false} {
		props := map[string]string{}
		if k, v, ok := strings.Cut(overrides, "="); ok {
			props[k] = v
		}
		b, err := config.LoadBroker("", nil, props)
		if err != nil {
			t.Fatal(err)
		}
		if got := cleanerOptions(b) != nil; got != want {
			t.Errorf("%q: cleaner runs %v, want %v", overrides, got, want)
		}
	}
}

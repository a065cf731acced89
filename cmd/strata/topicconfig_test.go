package main

import (
	"strconv"
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

package config

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckValidatorClasses(t *testing.T) {
	tests := []struct {
		key, value string
		topic      bool
		wantErr    string // "" = valid; otherwise a fragment of the message
	}{
		// Types.
		{"preallocate", "true", true, ""},
		{"preallocate", "FALSE", true, ""},
		{"preallocate", "yes", true, "must be true or false"},
		{"max.message.bytes", "2147483647", true, ""},
		{"max.message.bytes", "2147483648", true, "32-bit integer"},
		{"max.message.bytes", "1.5", true, "32-bit integer"},
		{"offsets.topic.replication.factor", "32768", false, "16-bit integer"},
		{"retention.ms", "9223372036854775807", true, ""},
		{"retention.ms", "9223372036854775808", true, "64-bit integer"},
		{"min.cleanable.dirty.ratio", "NaN", true, "finite number"},
		// Ranges.
		{"retention.ms", "-1", true, ""},
		{"retention.ms", "-2", true, "at least -1"},
		{"retention.bytes", "-1", true, ""},
		{"local.retention.ms", "-2", true, ""},
		{"local.retention.ms", "-3", true, "at least -2"},
		{"retention.bytes", "-2", true, "at least -1"},
		{"max.compaction.lag.ms", "0", true, "at least 1"},
		{"local.retention.bytes", "-3", true, "at least -2"},
		{"segment.bytes", "1024", true, ""},
		{"segment.bytes", "1023", true, "at least 1024"},
		{"segment.index.bytes", "12", true, ""},
		{"segment.index.bytes", "11", true, "at least 12"},
		{"segment.ms", "0", true, "at least 1"},
		{"min.insync.replicas", "0", true, "at least 1"},
		{"flush.messages", "0", true, "at least 1"},
		{"min.cleanable.dirty.ratio", "0", true, ""},
		{"min.cleanable.dirty.ratio", "1", true, ""},
		{"min.cleanable.dirty.ratio", "1.01", true, "between 0 and 1"},
		{"default.replication.factor", "32768", false, "between 1 and 32767"},
		{"replica.lag.time.max.ms", "1", false, "at least 2"},
		{"fetch.max.bytes", "1024", false, ""},
		{"fetch.max.bytes", "1023", false, "at least 1024"},
		{"log.cleaner.threads", "0", false, ""},
		{"transaction.state.log.replication.factor", "32768", false, "16-bit integer"},
		{"log.cleaner.dedupe.buffer.size", "4096", false, ""},
		{"log.cleaner.dedupe.buffer.size", "4095", false, "at least 4096"},
		{"strata.remote.chunk.bytes", "65536", false, ""},
		{"strata.remote.chunk.bytes", "65535", false, "between 65536 and"},
		{"strata.remote.readahead.chunks", "64", false, ""},
		{"strata.remote.readahead.chunks", "65", false, "between 0 and 64"},
		// Enums.
		{"compression.type", "zstd", true, ""},
		{"compression.type", "brotli", true, "producer, uncompressed, gzip, snappy, lz4, zstd"},
		{"compression.type", "GZIP", true, "must be one of"},
		{"message.timestamp.type", "LogAppendTime", true, ""},
		{"message.timestamp.type", "logappendtime", true, "CreateTime, LogAppendTime"},
		// Lists.
		{"cleanup.policy", "delete", true, ""},
		{"cleanup.policy", "compact,delete", true, ""},
		{"cleanup.policy", "delete, compact", true, ""},
		{"cleanup.policy", "", true, "comma-separated list of: delete, compact"},
		{"cleanup.policy", "delete,delete", true, "list of"},
		{"cleanup.policy", "delete,", true, "list of"},
		{"cleanup.policy", "archive", true, "list of"},
		// Structured strings.
		{"listeners", "PLAINTEXT://:9092", false, ""},
		{"listeners", "PLAINTEXT://[::1]:9092,INTERNAL://10.0.0.1:9093", false, ""},
		{"listeners", "127.0.0.1:9092", false, "NAME://host:port"},
		{"listeners", "PLAINTEXT://h:99999", false, "NAME://host:port"},
		{"listeners", "PLAINTEXT://a:1,PLAINTEXT://b:2", false, "distinct"},
		{"listeners", "plaintext://a:1", false, "upper-case"},
		{"log.dirs", "/a, /b", false, ""},
		{"log.dirs", "/a,,/b", false, "without empty elements"},
		{"log.dir", "", false, "must not be empty"},
		{"strata.metrics.listener", "", false, ""},
		{"strata.metrics.listener", "127.0.0.1:9644", false, ""},
		{"strata.metrics.listener", "9644", false, "host:port"},
		// Boundaries: the first value past each end of a range.
		{"listeners", "PLAINTEXT://h:65535", false, ""},
		{"listeners", "PLAINTEXT://h:65536", false, "NAME://host:port"},
		{"listeners", "PLAINTEXT://h:-1", false, "NAME://host:port"},
		{"log.cleaner.io.max.bytes.per.second", "Infinity", false, "finite number"},
		{"log.cleaner.io.max.bytes.per.second", "0", false, "positive number"},
		{"ssl.endpoint.identification.algorithm", "HTTPS", false, ""},
		{"ssl.endpoint.identification.algorithm", "", false, ""},
		{"ssl.endpoint.identification.algorithm", "http", false, "must be https"},
		{"compression.gzip.level", "-1", true, ""},
		{"compression.gzip.level", "9", true, ""},
		{"compression.gzip.level", "0", true, "between 1 and 9"},
		{"compression.gzip.level", "10", true, "between 1 and 9"},
		{"compression.lz4.level", "17", true, ""},
		{"compression.lz4.level", "18", true, "between 1 and 17"},
		{"compression.zstd.level", "-131072", true, ""},
		{"compression.zstd.level", "22", true, ""},
		{"compression.zstd.level", "23", true, "between -131072 and 22"},
		{"message.format.version", "3.0-IV1", true, ""},
		{"message.format.version", "3.0-IV", true, "Kafka version"},
	}
	for _, tt := range tests {
		t.Run(tt.key+"="+tt.value, func(t *testing.T) {
			d, ok := LookupBroker(tt.key)
			if tt.topic {
				d, ok = LookupTopic(tt.key)
			}
			if !ok {
				t.Fatalf("no def %s", tt.key)
			}
			err := d.Check(tt.value)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Check(%q) = %v, want nil", tt.value, err)
				}
				return
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != tt.key || ce.Value != tt.value {
				t.Fatalf("Check(%q) = %#v, want *Error for key and value", tt.value, err)
			}
			if msg := err.Error(); !strings.Contains(msg, tt.wantErr) || !strings.Contains(msg, tt.key) {
				t.Fatalf("Check(%q) = %q, want it to name the key and contain %q", tt.value, msg, tt.wantErr)
			}
		})
	}
}

// The tables must be self-consistent: these are the rules the derived code
// relies on.
func TestDefTables(t *testing.T) {
	for _, defs := range [][]Def{topicDefs, brokerDefs} {
		for _, d := range defs {
			if d.Doc == "" {
				t.Errorf("%s: no doc", d.Name)
			}
			if d.HasDefault {
				if err := d.Check(d.Default); err != nil {
					t.Errorf("%s: default does not validate: %v", d.Name, err)
				}
			} else if d.Default != "" {
				t.Errorf("%s: null default with a value %q", d.Name, d.Default)
			}
		}
	}
	for _, d := range topicDefs {
		if d.ReadOnly {
			t.Errorf("topic config %s is read-only", d.Name)
		}
		if d.BrokerSynonym == "" {
			continue
		}
		bd, ok := brokerByName[d.BrokerSynonym]
		if !ok {
			t.Errorf("%s: broker synonym %s is not a broker config", d.Name, d.BrokerSynonym)
			continue
		}
		// The broker's effective value must pass the topic's validation.
		v, _, ok := brokerValue(layers{}, bd.Name)
		if !ok {
			t.Errorf("%s: broker synonym %s has no effective default", d.Name, bd.Name)
			continue
		}
		if err := d.Check(v); err != nil {
			t.Errorf("%s: broker default %s=%s does not validate as the topic config: %v", d.Name, bd.Name, v, err)
		}
		// Kafka's topic defaults are its broker defaults: TopicDefs must not
		// document a default that no topic gets.
		if d.Default != v {
			t.Errorf("%s: default %s, but its broker synonym %s defaults to %s", d.Name, d.Default, bd.Name, v)
		}
	}
	for key, chain := range fallbacks {
		all := append([]fallback{{key, 0}}, chain...)
		for i, f := range all {
			d, ok := brokerByName[f.key]
			if !ok {
				t.Fatalf("fallback %s of %s is not a broker config", f.key, key)
			}
			if d.HasDefault && i != len(all)-1 {
				t.Errorf("%s has a default but is not last in the chain of %s", f.key, key)
			}
		}
	}
	for _, d := range brokerDefs {
		if d.ReadOnly == IsDynamic(d.Name) {
			t.Errorf("broker config %s: read-only %v, dynamic %v; exactly the keys changed at run time are writable", d.Name, d.ReadOnly, IsDynamic(d.Name))
		}
		if (d.Type == Password) != d.Sensitive {
			t.Errorf("broker config %s: type %v but sensitive %v; passwords, and only they, are sensitive", d.Name, d.Type, d.Sensitive)
		}
		if envNotConfig[EnvName(d.Name)] {
			t.Errorf("%s: its environment variable is reserved", d.Name)
		}
		if got := envToKey[EnvName(d.Name)]; got != d.Name {
			t.Errorf("env %s maps to %s, want %s", EnvName(d.Name), got, d.Name)
		}
	}
}

func TestEnvName(t *testing.T) {
	for key, want := range map[string]string{
		"log.dirs":                "STRATA_LOG_DIRS",
		"log.retention.hours":     "STRATA_LOG_RETENTION_HOURS",
		"strata.remote.dir":       "STRATA_REMOTE_DIR",
		"strata.remote.s3.bucket": "STRATA_REMOTE_S3_BUCKET",
		"listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config": "STRATA_LISTENER_NAME_SASL_SSL_SCRAM_SHA_256_SASL_JAAS_CONFIG",
	} {
		if got := EnvName(key); got != want {
			t.Errorf("EnvName(%s) = %s, want %s", key, got, want)
		}
	}
}

package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustLoad(t *testing.T, file string, env []string, flags map[string]string) *Broker {
	t.Helper()
	b, err := LoadBroker(file, env, flags)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLoadBrokerDefaults(t *testing.T) {
	b := mustLoad(t, "", nil, nil)
	if len(b.Listeners) != 1 || b.Listeners[0].Addr() != "127.0.0.1:9092" || b.Listeners[0].Protocol != ProtocolPlaintext {
		t.Fatalf("Listeners = %+v", b.Listeners)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"NodeID", b.NodeID, int32(1)},
		{"LogDirs", strings.Join(b.LogDirs, ","), "./strata-data"},
		{"NumPartitions", b.NumPartitions, int32(1)},
		{"DefaultReplicationFactor", b.DefaultReplicationFactor, int16(1)},
		{"AutoCreateTopics", b.AutoCreateTopics, true},
		{"DeleteTopicEnable", b.DeleteTopicEnable, true},
		{"MessageMaxBytes", b.MessageMaxBytes, int32(1048588)},
		{"SocketRequestMaxBytes", b.SocketRequestMaxBytes, int32(104857600)},
		{"SegmentBytes", b.SegmentBytes, int64(1 << 30)},
		{"SegmentMaxAge", b.SegmentMaxAge, 168 * time.Hour},
		{"SegmentJitterMax", b.SegmentJitterMax, time.Duration(0)},
		{"Retention", b.Retention, Limit(168 * time.Hour)},
		{"RetentionBytes", b.RetentionBytes, BytesLimit{}},
		{"LocalRetention", b.LocalRetention, Limit(168 * time.Hour)},
		{"LocalRetentionBytes", b.LocalRetentionBytes, BytesLimit{}},
		{"RetentionCheckInterval", b.RetentionCheckInterval, 5 * time.Minute},
		{"FlushIntervalMessages", b.FlushIntervalMessages, int64(1<<63 - 1)},
		{"FlushInterval", b.FlushInterval, Unlimited},
		{"IndexIntervalBytes", b.IndexIntervalBytes, int32(4096)},
		{"SegmentIndexBytes", b.SegmentIndexBytes, int32(10485760)},
		{"OffsetsTopicNumPartitions", b.OffsetsTopicNumPartitions, int32(50)},
		{"OffsetsTopicReplicationFactor", b.OffsetsTopicReplicationFactor, int16(1)},
		{"GroupInitialRebalanceDelay", b.GroupInitialRebalanceDelay, 3 * time.Second},
		{"OffsetsRetention", b.OffsetsRetention, 7 * 24 * time.Hour},
		{"RemoteStorageSystemEnable", b.RemoteStorageSystemEnable, true},
		{"RemoteLogManagerTaskInterval", b.RemoteLogManagerTaskInterval, 30 * time.Second},
		{"RemoteDir", b.RemoteDir, filepath.Join("strata-data", "remote")},
		{"MetadataDir", b.MetadataDir, filepath.Join("strata-data", "__metadata")},
		{"S3", b.S3, S3{}},
		{"MetricsListener", b.MetricsListener, ""},
		{"QuotaWindowNum", b.QuotaWindowNum, int32(11)},
		{"QuotaWindowSize", b.QuotaWindowSize, time.Second},
		{"AdvertisedListeners", b.AdvertisedListeners[0].String(), "PLAINTEXT://127.0.0.1:9092"},
		{"Raw", len(b.Raw), 0},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestLoadBrokerPrecedence(t *testing.T) {
	file := writeFile(t, "num.partitions=2\nlog.dirs=/file\nlog.retention.bytes=100\n")
	env := []string{"STRATA_NUM_PARTITIONS=3", "STRATA_LOG_DIRS=/env", "HOME=/root", "STRATA_NUM_PARTITIONS=4"}
	flags := map[string]string{"num.partitions": " 5 "}
	b := mustLoad(t, file, env, flags)
	if b.NumPartitions != 5 || b.Origin["num.partitions"] != "flag" {
		t.Errorf("num.partitions = %d from %s, want 5 from flag", b.NumPartitions, b.Origin["num.partitions"])
	}
	if b.LogDirs[0] != "/env" || b.Origin["log.dirs"] != "STRATA_LOG_DIRS" {
		t.Errorf("log.dirs = %v from %s, want /env from STRATA_LOG_DIRS", b.LogDirs, b.Origin["log.dirs"])
	}
	if b.RetentionBytes != (BytesLimit{100, true}) || b.Origin["log.retention.bytes"] != file+":3" {
		t.Errorf("log.retention.bytes = %v from %s", b.RetentionBytes, b.Origin["log.retention.bytes"])
	}
	if b.MetadataDir != filepath.Join("/env", "__metadata") || b.RemoteDir != filepath.Join("/env", "remote") {
		t.Errorf("dirs %s, %s do not follow log.dirs", b.MetadataDir, b.RemoteDir)
	}
	// The last of duplicate environment entries wins, as in a shell.
	b = mustLoad(t, "", env, nil)
	if b.NumPartitions != 4 {
		t.Errorf("num.partitions = %d, want 4 (last env entry)", b.NumPartitions)
	}
}

func TestLoadBrokerRetentionPrecedence(t *testing.T) {
	tests := []struct {
		name  string
		flags map[string]string
		want  TimeLimit
	}{
		{"default hours", nil, Limit(168 * time.Hour)},
		{"hours", map[string]string{"log.retention.hours": "24"}, Limit(24 * time.Hour)},
		{"minutes beat hours", map[string]string{"log.retention.hours": "24", "log.retention.minutes": "30"}, Limit(30 * time.Minute)},
		{"ms beat minutes", map[string]string{"log.retention.minutes": "30", "log.retention.ms": "1500"}, Limit(1500 * time.Millisecond)},
		{"ms beat hours", map[string]string{"log.retention.hours": "1", "log.retention.ms": "0"}, Limit(0)},
		{"ms -1 unlimited", map[string]string{"log.retention.ms": "-1", "log.retention.hours": "1"}, Unlimited},
		{"hours -1 unlimited", map[string]string{"log.retention.hours": "-1"}, Unlimited},
		{"minutes -1 beat hours", map[string]string{"log.retention.minutes": "-1", "log.retention.hours": "1"}, Unlimited},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := mustLoad(t, "", nil, tt.flags)
			if b.Retention != tt.want {
				t.Fatalf("Retention = %v, want %v", b.Retention, tt.want)
			}
			top, err := ResolveTopic(nil, b)
			if err != nil {
				t.Fatal(err)
			}
			if top.Retention != tt.want {
				t.Fatalf("topic Retention = %v, want %v", top.Retention, tt.want)
			}
		})
	}
}

func TestLoadBrokerOtherChains(t *testing.T) {
	b := mustLoad(t, "", nil, map[string]string{"log.roll.hours": "2", "log.roll.jitter.hours": "1", "log.flush.scheduler.interval.ms": "500"})
	if b.SegmentMaxAge != 2*time.Hour || b.SegmentJitterMax != time.Hour || b.FlushInterval != Limit(500*time.Millisecond) {
		t.Fatalf("got %v %v %v", b.SegmentMaxAge, b.SegmentJitterMax, b.FlushInterval)
	}
	b = mustLoad(t, "", nil, map[string]string{"log.roll.hours": "2", "log.roll.ms": "60000", "log.flush.interval.ms": "7", "log.flush.scheduler.interval.ms": "500"})
	if b.SegmentMaxAge != time.Minute || b.FlushInterval != Limit(7*time.Millisecond) {
		t.Fatalf("got %v %v", b.SegmentMaxAge, b.FlushInterval)
	}
	b = mustLoad(t, "", nil, map[string]string{"log.dir": "/one"})
	if len(b.LogDirs) != 1 || b.LogDirs[0] != "/one" {
		t.Fatalf("LogDirs = %v", b.LogDirs)
	}
	b = mustLoad(t, "", nil, map[string]string{"log.dir": "/one", "log.dirs": "/a"})
	if strings.Join(b.LogDirs, ",") != "/a" {
		t.Fatalf("LogDirs = %v", b.LogDirs)
	}
}

func TestLoadBrokerNodeID(t *testing.T) {
	for _, tt := range []struct {
		flags map[string]string
		want  int32
	}{
		{map[string]string{"node.id": "7"}, 7},
		{map[string]string{"broker.id": "8"}, 8},
		{map[string]string{"node.id": "9", "broker.id": "9"}, 9},
	} {
		b := mustLoad(t, "", nil, tt.flags)
		if b.NodeID != tt.want || b.Raw["node.id"] != b.Raw["broker.id"] {
			t.Errorf("%v: NodeID = %d, raw %v", tt.flags, b.NodeID, b.Raw)
		}
	}
	_, err := LoadBroker("", nil, map[string]string{"node.id": "1", "broker.id": "2"})
	if err == nil || !strings.Contains(err.Error(), "must equal broker.id") {
		t.Fatalf("err = %v", err)
	}
}

func TestLoadBrokerErrors(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		env   []string
		flags map[string]string
		want  []string
	}{
		{name: "unknown file key", file: "num.partitions=1\nlog.retention.dayz=3\n",
			want: []string{"server.properties:2", "log.retention.dayz", "unknown broker config; see `strata serve --help`"}},
		{name: "unknown flag", flags: map[string]string{"retention.ms": "1"},
			want: []string{"flag", "retention.ms", "unknown broker config"}},
		{name: "unknown env var", env: []string{"STRATA_LOG_RETENTION_DAYS=3"},
			want: []string{"STRATA_LOG_RETENTION_DAYS", "unknown broker config"}},
		{name: "bad file value", file: "log.retention.hours=a week\n",
			want: []string{"server.properties:1", `log.retention.hours="a week"`, "32-bit integer"}},
		{name: "bad env value", env: []string{"STRATA_COMPRESSION_TYPE=brotli"},
			want: []string{"STRATA_COMPRESSION_TYPE", `compression.type="brotli"`, "one of: producer, uncompressed, gzip"}},
		{name: "bad flag value", flags: map[string]string{"log.cleanup.policy": "archive"},
			want: []string{"flag", "log.cleanup.policy", "list of: delete, compact"}},
		{name: "advertised wildcard", flags: map[string]string{"advertised.listeners": "PLAINTEXT://0.0.0.0:9092"},
			want: []string{"advertised.listeners", "clients can reach"}},
		{name: "advertised IPv6 wildcard", flags: map[string]string{"advertised.listeners": "PLAINTEXT://[::]:9092"},
			want: []string{"advertised.listeners", "clients can reach"}},
		{name: "advertised empty host", flags: map[string]string{"advertised.listeners": "PLAINTEXT://:9092"},
			want: []string{"advertised.listeners", "clients can reach"}},
		{name: "duplicate log dir", flags: map[string]string{"log.dirs": "/a,/a/"},
			want: []string{"log.dirs", "twice"}},
		{name: "several log dirs", flags: map[string]string{"log.dirs": "/a,/b"},
			want: []string{"log.dirs", "keeps its data in one", "log.dirs=/a"}},
		{name: "s3 option without bucket", flags: map[string]string{"strata.remote.s3.region": "eu-west-1"},
			want: []string{"strata.remote.s3.region", "strata.remote.s3.bucket is not"}},
		{name: "missing file", file: "\x00missing", want: []string{"config file"}},
		{name: "one quota sample", flags: map[string]string{"quota.window.num": "1"},
			want: []string{"quota.window.num", "at least 2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := ""
			switch {
			case tt.file == "\x00missing":
				file = filepath.Join(t.TempDir(), "nope.properties")
			case tt.file != "":
				file = writeFile(t, tt.file)
			}
			_, err := LoadBroker(file, tt.env, tt.flags)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			var ce *Error
			if tt.file != "\x00missing" && !errors.As(err, &ce) {
				t.Errorf("error %q does not wrap *Error", msg)
			}
		})
	}
}

func TestListenersGetTheirProtocols(t *testing.T) {
	b := mustLoad(t, "", nil, map[string]string{"listeners": "INTERNAL://10.0.0.1:9093,PLAINTEXT://[::1]:9092,SSL://:9094",
		"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:SASL_PLAINTEXT,SSL:SSL", "ssl.keystore.location": "/ks.pem"})
	want := []string{"INTERNAL 10.0.0.1:9093 SASL_PLAINTEXT", "PLAINTEXT [::1]:9092 PLAINTEXT", "SSL :9094 SSL"}
	for i, l := range b.Listeners {
		if got := l.Name + " " + l.Addr() + " " + l.Protocol; got != want[i] {
			t.Errorf("listener %d: %s, want %s", i, got, want[i])
		}
	}
}

func TestLoadBrokerEnvForms(t *testing.T) {
	b := mustLoad(t, "", []string{"STRATA_BIN=/tmp/strata", "STRATA_STRATA_METADATA_DIR=/m", "PATH=/bin", "NOEQUALS", "STRATAX=not ours"}, nil)
	if b.MetadataDir != "/m" || b.Origin["strata.metadata.dir"] != "STRATA_STRATA_METADATA_DIR" {
		t.Fatalf("MetadataDir = %s from %s", b.MetadataDir, b.Origin["strata.metadata.dir"])
	}
}

func TestLoadBrokerS3(t *testing.T) {
	b := mustLoad(t, "", []string{"STRATA_REMOTE_S3_BUCKET=bkt", "STRATA_REMOTE_S3_PATH_STYLE=true"},
		map[string]string{"strata.remote.s3.endpoint": "http://127.0.0.1:9000"})
	want := S3{Bucket: "bkt", Endpoint: "http://127.0.0.1:9000", PathStyle: true}
	if b.S3 != want {
		t.Fatalf("S3 = %+v, want %+v", b.S3, want)
	}
}

// An unknown key that looks like it holds a secret is refused without its
// value in the error, which ends up in logs.
func TestUnknownSecretKeyHidesValue(t *testing.T) {
	const secret = "hunter2"
	for _, key := range []string{"ssl.trustore.password", "sasl.client.secret", "listener.name.x.jaas"} {
		_, err := LoadBroker("", nil, map[string]string{key: secret})
		if err == nil {
			t.Fatalf("%s: no error", key)
		}
		if msg := err.Error(); strings.Contains(msg, secret) || !strings.Contains(msg, hiddenValue) {
			t.Errorf("%s: error %q shows the value or does not say %s", key, msg, hiddenValue)
		}
	}
}

package e2e

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestAdmin round-trips the admin APIs through kadm against one broker; each
// subtest owns its topics.
func TestAdmin(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	cl := newClient(t, b.Addr)
	adm := kadm.NewClient(cl)
	adm.SetTimeoutMillis(10_000)

	t.Run("CreateValidateOnly", func(t *testing.T) {
		t.Parallel()
		ctx := testContext(t, 20*time.Second)
		const topic = "adm-validate"
		configs := map[string]*string{"retention.ms": kadm.StringPtr("3600000")}
		resps, err := adm.ValidateCreateTopics(ctx, 2, 1, configs, topic)
		if err != nil {
			t.Fatal(err)
		}
		if r, _ := resps.On(topic, nil); r.Err != nil {
			t.Fatalf("validate_only create: %v (%s)", r.Err, r.ErrMessage)
		}
		requireTopicAbsent(t, adm, topic)
		createTopic(t, adm, topic, 2, configs)
		requirePartitionCount(t, adm, topic, 2)
	})

	t.Run("DescribeAndAlterConfigs", func(t *testing.T) {
		t.Parallel()
		ctx := testContext(t, 30*time.Second)
		const topic = "adm-configs"
		createTopic(t, adm, topic, 1, map[string]*string{
			"retention.ms":   kadm.StringPtr("3600000"),
			"cleanup.policy": kadm.StringPtr("compact"),
		})
		requireConfig(t, adm, topic, "retention.ms", "3600000", kmsg.ConfigSourceDynamicTopicConfig)
		requireConfig(t, adm, topic, "cleanup.policy", "compact", kmsg.ConfigSourceDynamicTopicConfig)
		// Kafka's defaults, not overridden on this broker.
		requireConfig(t, adm, topic, "retention.bytes", "-1", kmsg.ConfigSourceDefaultConfig)
		requireConfig(t, adm, topic, "segment.bytes", "1073741824", kmsg.ConfigSourceDefaultConfig)

		// IncrementalAlterConfigs: set one key, delete another.
		resps, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
			{Op: kadm.SetConfig, Name: "retention.ms", Value: kadm.StringPtr("7200000")},
			{Op: kadm.DeleteConfig, Name: "cleanup.policy"},
		}, topic)
		requireAlterOK(t, resps, err, topic)
		requireConfig(t, adm, topic, "retention.ms", "7200000", kmsg.ConfigSourceDynamicTopicConfig)
		requireConfig(t, adm, topic, "cleanup.policy", "delete", kmsg.ConfigSourceDefaultConfig)

		// AlterConfigs replaces the whole set of overrides.
		resps, err = adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{
			{Name: "segment.ms", Value: kadm.StringPtr("600000")},
		}, topic)
		requireAlterOK(t, resps, err, topic)
		requireConfig(t, adm, topic, "segment.ms", "600000", kmsg.ConfigSourceDynamicTopicConfig)
		requireConfig(t, adm, topic, "retention.ms", "604800000", kmsg.ConfigSourceDefaultConfig)

		// A bad value is refused and changes nothing.
		resps, err = adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
			{Op: kadm.SetConfig, Name: "retention.ms", Value: kadm.StringPtr("soon")},
		}, topic)
		if err != nil {
			t.Fatal(err)
		}
		if r, _ := resps.On(topic, nil); !errors.Is(r.Err, kerr.InvalidConfig) {
			t.Fatalf("altering retention.ms to %q: %v, want INVALID_CONFIG", "soon", r.Err)
		}
		requireConfig(t, adm, topic, "retention.ms", "604800000", kmsg.ConfigSourceDefaultConfig)
	})

	t.Run("CreatePartitions", func(t *testing.T) {
		t.Parallel()
		ctx := testContext(t, 30*time.Second)
		const topic = "adm-partitions"
		createTopic(t, adm, topic, 1, nil)
		resps, err := adm.CreatePartitions(ctx, 2, topic)
		if err != nil {
			t.Fatal(err)
		}
		if r, _ := resps.On(topic, nil); r.Err != nil {
			t.Fatalf("adding 2 partitions: %v (%s)", r.Err, r.ErrMessage)
		}
		requirePartitionCount(t, adm, topic, 3)

		producer := newClient(t, b.Addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
		produceSync(t, producer, &kgo.Record{Topic: topic, Partition: 2, Value: []byte("in-new-partition")})
		got := consumeAll(t, b.Addr, topic)
		if len(got[2]) != 1 || string(got[2][0].Value) != "in-new-partition" {
			t.Fatalf("partition 2 holds %d records, want the one produced there", len(got[2]))
		}

		resps, err = adm.UpdatePartitions(ctx, 2, topic)
		if err != nil {
			t.Fatal(err)
		}
		if r, _ := resps.On(topic, nil); !errors.Is(r.Err, kerr.InvalidPartitions) {
			t.Fatalf("shrinking 3→2 partitions: %v, want INVALID_PARTITIONS", r.Err)
		}
	})

	t.Run("DeleteRecords", func(t *testing.T) {
		t.Parallel()
		ctx := testContext(t, 30*time.Second)
		const topic = "adm-delete-records"
		createTopic(t, adm, topic, 1, nil)
		produceN(t, newClient(t, b.Addr), topic, 10)

		var os kadm.Offsets
		os.Add(kadm.Offset{Topic: topic, Partition: 0, At: 4})
		resps, err := adm.DeleteRecords(ctx, os)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := resps.On(topic, 0, nil)
		if r.Err != nil || r.LowWatermark != 4 {
			t.Fatalf("DeleteRecords before 4: err %v, low watermark %d, want 4", r.Err, r.LowWatermark)
		}
		requireListed(t, "start", listOffsets(t, adm.ListStartOffsets, topic), 4)
		requireListed(t, "end", listOffsets(t, adm.ListEndOffsets, topic), 10)

		// A negative offset other than -1 (the high watermark) is
		// OFFSET_OUT_OF_RANGE, as in Kafka; it used to crash the broker
		// (librdkafka's 0081_admin sends -1001).
		var negative kadm.Offsets
		negative.Add(kadm.Offset{Topic: topic, Partition: 0, At: -1001})
		resps, err = adm.DeleteRecords(ctx, negative)
		if err != nil {
			t.Fatal(err)
		}
		if r, _ := resps.On(topic, 0, nil); !errors.Is(r.Err, kerr.OffsetOutOfRange) {
			t.Fatalf("DeleteRecords to -1001: %v, want OFFSET_OUT_OF_RANGE", r.Err)
		}
		requireListed(t, "start", listOffsets(t, adm.ListStartOffsets, topic), 4)

		got := consumeAll(t, b.Addr, topic)[0]
		requireOffsetsContiguous(t, got, 4)
		if len(got) != 6 || string(got[0].Value) != value(topic, 4) {
			t.Fatalf("after DeleteRecords read %d records starting %q, want 6 starting %q",
				len(got), firstValue(got), value(topic, 4))
		}
	})

	// A topic whose cleanup.policy does not delete (compact alone) keeps
	// its records: DeleteRecords is POLICY_VIOLATION, as in Kafka, until
	// the policy deletes too.
	t.Run("DeleteRecordsOfACompactedTopic", func(t *testing.T) {
		t.Parallel()
		ctx := testContext(t, 30*time.Second)
		const topic = "adm-delete-records-compacted"
		createTopic(t, adm, topic, 1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")})
		cl := newClient(t, b.Addr)
		for i := range 5 {
			produceSync(t, cl, &kgo.Record{Topic: topic, Key: []byte{byte('a' + i)}, Value: []byte("v")})
		}
		deleteBefore := func(at int64) kadm.DeleteRecordsResponse {
			t.Helper()
			var os kadm.Offsets
			os.Add(kadm.Offset{Topic: topic, Partition: 0, At: at})
			resps, err := adm.DeleteRecords(ctx, os)
			if err != nil {
				t.Fatal(err)
			}
			r, _ := resps.On(topic, 0, nil)
			return r
		}
		for _, at := range []int64{2, -1} {
			if r := deleteBefore(at); !errors.Is(r.Err, kerr.PolicyViolation) {
				t.Fatalf("DeleteRecords before %d of a compacted topic: %v, want POLICY_VIOLATION", at, r.Err)
			}
		}
		requireListed(t, "start", listOffsets(t, adm.ListStartOffsets, topic), 0)
		alterTopicConfig(t, adm, topic, "cleanup.policy", "compact,delete")
		waitFor(t, 10*time.Second, "DeleteRecords once the policy deletes", func() bool {
			r := deleteBefore(2)
			return r.Err == nil && r.LowWatermark == 2
		})
		requireListed(t, "start", listOffsets(t, adm.ListStartOffsets, topic), 2)
	})

	t.Run("ListOffsets", func(t *testing.T) {
		t.Parallel()
		ctx := testContext(t, 30*time.Second)
		const topic = "adm-list-offsets"
		createTopic(t, adm, topic, 1, nil)
		base := pastBase()
		// One batch per record, timestamps out of order: the max (offset 1)
		// is not the last record.
		deltasMs := []int64{10, 40, 20, 30, 0}
		producer := newClient(t, b.Addr)
		for i, d := range deltasMs {
			produceSync(t, producer, &kgo.Record{
				Topic:     topic,
				Value:     []byte(value(topic, i)),
				Timestamp: base.Add(time.Duration(d) * time.Millisecond),
			})
		}
		requireListed(t, "start", listOffsets(t, adm.ListStartOffsets, topic), 0)
		requireListed(t, "end", listOffsets(t, adm.ListEndOffsets, topic), 5)

		after, err := adm.ListOffsetsAfterMilli(ctx, base.UnixMilli()+15, topic)
		if err != nil {
			t.Fatal(err)
		}
		// The first record whose timestamp is at or after base+15ms.
		requireListed(t, "after base+15ms", after, 1)
		after, err = adm.ListOffsetsAfterMilli(ctx, base.UnixMilli()+30, topic)
		if err != nil {
			t.Fatal(err)
		}
		requireListed(t, "after base+30ms", after, 1)
		after, err = adm.ListOffsetsAfterMilli(ctx, base.UnixMilli(), topic)
		if err != nil {
			t.Fatal(err)
		}
		requireListed(t, "after base", after, 0)

		// No record at or after: the broker answers -1, kadm then lists the end.
		raw := kmsg.NewPtrListOffsetsRequest()
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition = 0
		rp.Timestamp = base.UnixMilli() + 1000
		rt.Partitions = append(rt.Partitions, rp)
		raw.Topics = append(raw.Topics, rt)
		resp, err := raw.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("ListOffsets response has %d topics, want 1 with 1 partition", len(resp.Topics))
		}
		if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 || p.Offset != -1 {
			t.Fatalf("ListOffsets after the last timestamp: code %d offset %d, want 0 and -1", p.ErrorCode, p.Offset)
		}

		maxTS, err := adm.ListMaxTimestampOffsets(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		requireListed(t, "max timestamp", maxTS, 1)
		if o, _ := maxTS.Lookup(topic, 0); o.Timestamp != base.UnixMilli()+40 {
			t.Fatalf("max timestamp listed as %d, want %d", o.Timestamp, base.UnixMilli()+40)
		}
	})

	t.Run("ClusterMetadata", func(t *testing.T) {
		t.Parallel()
		ctx := testContext(t, 20*time.Second)
		meta, err := adm.BrokerMetadata(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(meta.Brokers) != 1 {
			t.Fatalf("metadata lists %d brokers, want 1", len(meta.Brokers))
		}
		broker := meta.Brokers[0]
		if addr := brokerAddr(broker.Host, broker.Port); addr != b.Addr {
			t.Fatalf("metadata advertises %s, want %s", addr, b.Addr)
		}
		if meta.Controller != broker.NodeID {
			t.Fatalf("controller is %d, want the only broker %d", meta.Controller, broker.NodeID)
		}
		if meta.Cluster == "" {
			t.Fatal("metadata has no cluster ID")
		}

		resp, err := kmsg.NewPtrDescribeClusterRequest().RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ErrorCode != 0 {
			t.Fatalf("DescribeCluster: %v", kerr.ErrorForCode(resp.ErrorCode))
		}
		if resp.ClusterID != meta.Cluster || resp.ControllerID != broker.NodeID {
			t.Fatalf("DescribeCluster says cluster %q controller %d; Metadata says %q and %d",
				resp.ClusterID, resp.ControllerID, meta.Cluster, broker.NodeID)
		}
		if len(resp.Brokers) != 1 || brokerAddr(resp.Brokers[0].Host, resp.Brokers[0].Port) != b.Addr ||
			resp.Brokers[0].NodeID != broker.NodeID {
			t.Fatalf("DescribeCluster brokers %+v, want node %d at %s", resp.Brokers, broker.NodeID, b.Addr)
		}
	})

	t.Run("DescribeLogDirs", func(t *testing.T) {
		t.Parallel()
		ctx := testContext(t, 20*time.Second)
		const topic = "adm-logdirs"
		createTopic(t, adm, topic, 2, nil)
		produceN(t, newClient(t, b.Addr), topic, 20)

		all, err := adm.DescribeAllLogDirs(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 1 {
			t.Fatalf("log dirs of %d brokers, want 1", len(all))
		}
		for _, dirs := range all {
			if err := dirs.Error(); err != nil {
				t.Fatalf("describing log dirs: %v", err)
			}
			var size int64
			for p := int32(0); p < 2; p++ {
				d, ok := dirs.LookupPartition(topic, p)
				if !ok {
					t.Fatalf("partition %s/%d is in no log dir", topic, p)
				}
				if !isWithin(b.Dir, d.Dir) {
					t.Fatalf("partition %s/%d is in %q, outside the data dir %q", topic, p, d.Dir, b.Dir)
				}
				size += d.Size
			}
			if size <= 0 {
				t.Fatalf("log dirs report %d bytes for %s after 20 records", size, topic)
			}
		}
	})

	t.Run("DeleteTopics", func(t *testing.T) {
		t.Parallel()
		ctx := testContext(t, 30*time.Second)
		const topic = "adm-delete"
		createTopic(t, adm, topic, 2, nil)
		produceN(t, newClient(t, b.Addr), topic, 5)
		resps, err := adm.DeleteTopics(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		if r, _ := resps.On(topic, nil); r.Err != nil {
			t.Fatalf("deleting %q: %v", topic, r.Err)
		}
		requireTopicAbsent(t, adm, topic)
		resps, err = adm.DeleteTopics(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		if r, _ := resps.On(topic, nil); !errors.Is(r.Err, kerr.UnknownTopicOrPartition) {
			t.Fatalf("deleting %q twice: %v, want UNKNOWN_TOPIC_OR_PARTITION", topic, r.Err)
		}
		// The name is free again, and the new topic starts empty.
		createTopic(t, adm, topic, 1, nil)
		requireListed(t, "end of re-created topic", listOffsets(t, adm.ListEndOffsets, topic), 0)
	})

	t.Run("BadInputs", func(t *testing.T) {
		t.Parallel()
		ctx := testContext(t, 30*time.Second)
		createTopic(t, adm, "adm-exists", 1, nil)
		cases := []struct {
			name       string
			topic      string
			partitions int32
			rf         int16
			configs    map[string]*string
			want       error
		}{
			{"unknown config key", "adm-bad-key", 1, 1, map[string]*string{"no.such.config": kadm.StringPtr("1")}, kerr.InvalidConfig},
			{"non-numeric retention.ms", "adm-bad-value", 1, 1, map[string]*string{"retention.ms": kadm.StringPtr("soon")}, kerr.InvalidConfig},
			{"unknown cleanup.policy", "adm-bad-policy", 1, 1, map[string]*string{"cleanup.policy": kadm.StringPtr("sometimes")}, kerr.InvalidConfig},
			{"existing topic", "adm-exists", 1, 1, nil, kerr.TopicAlreadyExists},
			{"slash in name", "adm/bad", 1, 1, nil, kerr.InvalidTopicException},
			{"name is dot", ".", 1, 1, nil, kerr.InvalidTopicException},
			{"name is dot dot", "..", 1, 1, nil, kerr.InvalidTopicException},
			{"empty name", "", 1, 1, nil, kerr.InvalidTopicException},
			{"name over 249 chars", strings.Repeat("x", 250), 1, 1, nil, kerr.InvalidTopicException},
			{"zero partitions", "adm-zero-partitions", 0, 1, nil, kerr.InvalidPartitions},
			{"replication over broker count", "adm-rf", 1, 2, nil, kerr.InvalidReplicationFactor},
		}
		for _, tc := range cases {
			for _, validateOnly := range []bool{true, false} {
				create := adm.CreateTopics
				if validateOnly {
					create = adm.ValidateCreateTopics
				}
				resps, err := create(ctx, tc.partitions, tc.rf, tc.configs, tc.topic)
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				r, _ := resps.On(tc.topic, nil)
				if !errors.Is(r.Err, tc.want) {
					t.Errorf("%s (validate_only=%v): got %v, want %v", tc.name, validateOnly, r.Err, tc.want)
				}
			}
			if tc.want != kerr.TopicAlreadyExists && tc.topic != "" {
				requireTopicAbsent(t, adm, tc.topic)
			}
		}
	})
}

// produceN produces value(topic, i) for i in [0, n) to partitions of topic in
// round robin.
func produceN(t *testing.T, cl *kgo.Client, topic string, n int) {
	t.Helper()
	records := make([]*kgo.Record, n)
	for i := range records {
		records[i] = &kgo.Record{Topic: topic, Value: []byte(value(topic, i))}
	}
	produceSync(t, cl, records...)
}

func requireConfig(t *testing.T, adm *kadm.Client, topic, key, wantValue string, wantSource kmsg.ConfigSource) {
	t.Helper()
	rcs, err := adm.DescribeTopicConfigs(testContext(t, 10*time.Second), topic)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On(topic, nil)
	if err != nil || rc.Err != nil {
		t.Fatalf("describing configs of %q: %v / %v", topic, err, rc.Err)
	}
	for _, c := range rc.Configs {
		if c.Key != key {
			continue
		}
		if c.MaybeValue() != wantValue || c.Source != wantSource {
			t.Fatalf("%s of %q is %q from %v, want %q from %v", key, topic, c.MaybeValue(), c.Source, wantValue, wantSource)
		}
		return
	}
	t.Fatalf("DescribeConfigs of %q does not list %s", topic, key)
}

func requireAlterOK(t *testing.T, resps kadm.AlterConfigsResponses, err error, topic string) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	r, err := resps.On(topic, nil)
	if err != nil || r.Err != nil {
		t.Fatalf("altering configs of %q: %v / %v (%s)", topic, err, r.Err, r.ErrMessage)
	}
}

// requireTopicAbsent waits until Metadata no longer shows topic.
func requireTopicAbsent(t *testing.T, adm *kadm.Client, topic string) {
	t.Helper()
	deadline := time.Now().Add(metadataSettle)
	for {
		details, err := adm.ListTopics(testContext(t, 10*time.Second), topic)
		if err != nil {
			t.Fatal(err)
		}
		// An invalid name is absent too; Metadata reports it with
		// INVALID_TOPIC_EXCEPTION rather than UNKNOWN_TOPIC_OR_PARTITION.
		d, listed := details[topic]
		if !listed || errors.Is(d.Err, kerr.UnknownTopicOrPartition) || errors.Is(d.Err, kerr.InvalidTopicException) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("topic %q exists, want it absent (%+v)", topic, details[topic])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type listFn func(ctx context.Context, topics ...string) (kadm.ListedOffsets, error)

func listOffsets(t *testing.T, fn listFn, topic string) kadm.ListedOffsets {
	t.Helper()
	listed, err := fn(testContext(t, 10*time.Second), topic)
	if err != nil {
		t.Fatal(err)
	}
	return listed
}

// requireListed checks the listed offset of partition 0 of the only topic.
func requireListed(t *testing.T, what string, listed kadm.ListedOffsets, want int64) {
	t.Helper()
	if err := listed.Error(); err != nil {
		t.Fatalf("listing %s offset: %v", what, err)
	}
	if len(listed) != 1 {
		t.Fatalf("listing %s offset: %d topics listed, want 1", what, len(listed))
	}
	for topic := range listed {
		o, ok := listed.Lookup(topic, 0)
		if !ok || o.Offset != want {
			t.Fatalf("%s offset of %s/0 is %d (listed %v), want %d", what, topic, o.Offset, ok, want)
		}
	}
}

func brokerAddr(host string, port int32) string {
	return host + ":" + strconv.Itoa(int(port))
}

func isWithin(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func firstValue(records []*kgo.Record) string {
	if len(records) == 0 {
		return ""
	}
	return string(records[0].Value)
}

package e2e

import (
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestTieredRemoteFetchParallelAndBounded: one Fetch of several partitions
// whose data is only in the bucket answers every one of them with records
// contiguous from the offset asked (they are read in parallel); and with
// the bucket slower than remote.fetch.max.wait.ms, a fetch of data not yet
// cached answers within about that time, with no records and no error
// (issue 3). The bucket is versitygw behind a loopback proxy that can
// delay the GETs of segment objects.
func TestTieredRemoteFetchParallelAndBounded(t *testing.T) {
	gw := startTestVersityGW(t)
	const bucket = "strata-e2e"
	if err := os.Mkdir(filepath.Join(gw.root, bucket), 0o755); err != nil {
		t.Fatal(err)
	}
	proxy := newSlowS3Proxy(t, gw.endpoint)
	t.Setenv("AWS_ACCESS_KEY_ID", gw.access)
	t.Setenv("AWS_SECRET_ACCESS_KEY", gw.secret)
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")

	const maxWait = 300 * time.Millisecond
	b := startBroker(t, t.TempDir(), "log.segment.bytes=16384", "remote.log.manager.task.interval.ms=200",
		"log.retention.check.interval.ms=200",
		"remote.fetch.max.wait.ms=300",
		"strata.remote.chunk.bytes=65536",
		"strata.remote.s3.bucket="+bucket,
		"strata.remote.s3.endpoint="+proxy.URL,
		"strata.remote.s3.path.style=true",
		"strata.remote.s3.region=us-east-1")
	adm := newAdmin(t, b.Addr)
	const topic, partitions = "remote-fetch", 4
	createTopic(t, adm, topic, partitions, map[string]*string{
		"remote.storage.enable": kadm.StringPtr("true"),
		"local.retention.bytes": kadm.StringPtr("20000"),
		"retention.bytes":       kadm.StringPtr("-1"),
	})
	cl := newClient(t, b.Addr, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	for range 80 {
		for p := range int32(partitions) {
			v := make([]byte, 1000)
			rand.Read(v)
			produceSync(t, cl, &kgo.Record{Partition: p, Value: v})
		}
	}
	waitLocalStartAtLeast(t, cl, topic, partitions, 40)
	topicID := topicIDOf(t, adm, topic)

	// Partitions 0-2 in one fetch, from offsets in the bucket.
	offsets := map[int32]int64{0: 0, 1: 7, 2: 21}
	resp := fetchOnce(t, cl, topic, topicID, offsets)
	for _, p := range resp.Topics[0].Partitions {
		if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
			t.Fatalf("partition %d: %v", p.Partition, err)
		}
		first, next := batchOffsets(t, p.RecordBatches)
		if first > offsets[p.Partition] || next <= offsets[p.Partition] {
			t.Fatalf("partition %d: batches hold [%d, %d), want from %d", p.Partition, first, next, offsets[p.Partition])
		}
	}

	// Partition 3 has not been read: its index and chunks come from the
	// bucket, which is now slower than remote.fetch.max.wait.ms.
	proxy.delay.Store(int64(3 * time.Second))
	start := time.Now()
	resp = fetchOnce(t, cl, topic, topicID, map[int32]int64{3: 0})
	took := time.Since(start)
	proxy.delay.Store(0)
	p := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil || len(p.RecordBatches) != 0 {
		t.Fatalf("slow bucket: error %v and %d record bytes, want none", err, len(p.RecordBatches))
	}
	if took < maxWait || took > maxWait+1500*time.Millisecond {
		t.Fatalf("slow bucket: the fetch answered after %v, want about remote.fetch.max.wait.ms (%v)", took, maxWait)
	}
}

// slowS3Proxy forwards to an S3 endpoint, delaying GETs of segment
// objects by delay (nanoseconds). The client signs for the proxy's host,
// which the proxy passes on unchanged.
type slowS3Proxy struct {
	*httptest.Server
	delay atomic.Int64
}

func newSlowS3Proxy(t *testing.T, endpoint string) *slowS3Proxy {
	t.Helper()
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	p := &slowS3Proxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && (strings.HasSuffix(r.URL.Path, ".log") || strings.HasSuffix(r.URL.Path, ".index")) {
			time.Sleep(time.Duration(p.delay.Load()))
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

// waitLocalStartAtLeast waits until every partition's local log start
// (ListOffsets -4) is at least atLeast: the offsets below are only in the
// bucket.
func waitLocalStartAtLeast(t *testing.T, cl *kgo.Client, topic string, partitions int32, atLeast int64) {
	t.Helper()
	deadline := time.Now().Add(tierSettle)
	for {
		low := int64(-1)
		for _, p := range listPartitionOffsets(t, cl, topic, partitions, -4, 0) {
			if p.ErrorCode != 0 || p.Offset < atLeast {
				low = p.Offset
			}
		}
		if low < 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a local log start is still %d, want at least %d", low, atLeast)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func topicIDOf(t *testing.T, adm *kadm.Client, topic string) [16]byte {
	t.Helper()
	td, err := adm.ListTopics(testContext(t, 10*time.Second), topic)
	if err != nil {
		t.Fatal(err)
	}
	return td[topic].ID
}

// fetchOnce sends one Fetch of topic's partitions from the given offsets
// (64 KiB each, min.bytes 1, max.wait 5 s).
func fetchOnce(t *testing.T, cl *kgo.Client, topic string, topicID [16]byte, offsets map[int32]int64) *kmsg.FetchResponse {
	t.Helper()
	req := consumerFetch(topic, topicID, offsets, 64<<10)
	resp, err := req.RequestWith(testContext(t, 20*time.Second), cl)
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != len(offsets) {
		t.Fatalf("Fetch answered %d topics, want 1 with %d partitions", len(resp.Topics), len(offsets))
	}
	return resp
}

// batchOffsets decodes the batches in b and returns their first base
// offset and the offset after the last, failing unless they are
// contiguous.
func batchOffsets(t *testing.T, b []byte) (first, next int64) {
	t.Helper()
	if len(b) == 0 {
		t.Fatal("no record batches")
	}
	for i := 0; len(b) > 0; i++ {
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(b); err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		if i == 0 {
			first = rb.FirstOffset
		} else if rb.FirstOffset != next {
			t.Fatalf("batch %d starts at %d, want %d: offsets are not contiguous", i, rb.FirstOffset, next)
		}
		next = rb.FirstOffset + int64(rb.LastOffsetDelta) + 1
		b = b[12+int(rb.Length):]
	}
	return first, next
}

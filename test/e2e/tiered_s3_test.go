package e2e

import (
	"fmt"
	"go/build"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTieredS3 runs TestTieredDirStore's flow with the remote tier on S3,
// served by versitygw (posix backend): rolled segments are uploaded to the
// bucket, local retention deletes them locally while the log start stays
// 0, and consumers read every record back across the local/remote seam,
// before and after a clean restart and a crash; franz-go, sarama and
// kafka-go each read every record back byte for byte (issue 3, test 5).
// The broker gets its S3 credentials from the AWS_* environment it
// inherits from this test, so the test is not parallel (t.Setenv).
func TestTieredS3(t *testing.T) {
	const bucket = "strata-e2e"
	s3, bucketDir := s3Bucket(t, bucket)
	dir := t.TempDir()
	b := startBroker(t, dir, append([]string{"log.segment.bytes=16384", "remote.log.manager.task.interval.ms=200",
		"log.retention.check.interval.ms=200"}, s3...)...)
	adm := newAdmin(t, b.Addr)
	const topic = "tiered-s3"
	createTopic(t, adm, topic, 1, map[string]*string{
		"remote.storage.enable": kadm.StringPtr("true"),
		"local.retention.bytes": kadm.StringPtr("20000"),
		"retention.bytes":       kadm.StringPtr("-1"),
	})
	var values [][]byte
	cl := newClient(t, b.Addr, kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression()))
	produceRandom(t, cl, 300, 1000, &values)
	cl.Close()

	waitTiered(t, b.Addr, topic)
	// Three ListOffsets are three instants: the tier loop may upload a
	// segment between them. Read until one reading is of a single state.
	var local, last, pending int64
	for deadline := time.Now().Add(10 * time.Second); ; {
		local = listOffsetAt(t, b.Addr, topic, -4)
		last = listOffsetAt(t, b.Addr, topic, -5)
		pending = listOffsetAt(t, b.Addr, topic, -6)
		if pending == last+1 && listOffsetAt(t, b.Addr, topic, -5) == last || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("local log start %d, last tiered %d, pending %d", local, last, pending)
	if last < local-1 || pending != last+1 {
		t.Fatalf("local log start %d, last tiered %d, earliest pending upload %d: the remote tier must reach the local log", local, last, pending)
	}
	checkAllClients(t, b.Addr, topic, values)
	// The data is in the bucket, not in the broker's directory store.
	if objs := remoteLogObjects(t, bucketDir); len(objs) == 0 {
		t.Fatalf("no segment object in bucket %s", bucket)
	}
	if _, err := os.Stat(filepath.Join(dir, "remote")); err == nil {
		if objs := remoteLogObjects(t, filepath.Join(dir, "remote")); len(objs) != 0 {
			t.Fatalf("%d segment objects in the directory store with an S3 bucket configured", len(objs))
		}
	}

	b.Stop()
	b.Restart()
	if got := listOffsetAt(t, b.Addr, topic, -2); got != 0 {
		t.Fatalf("earliest offset %d after restart, want 0", got)
	}
	if got := listOffsetAt(t, b.Addr, topic, -5); got < last {
		t.Fatalf("last tiered offset %d after restart, was %d", got, last)
	}
	checkAll(t, b.Addr, topic, values)

	// More records, tiered too, then a crash: every acknowledged record
	// survives and is read back from both tiers.
	cl = newClient(t, b.Addr, kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression()))
	produceRandom(t, cl, 60, 1000, &values)
	cl.Close()
	deadline := time.Now().Add(tierSettle)
	for listOffsetAt(t, b.Addr, topic, -5) < 300 {
		if time.Now().After(deadline) {
			t.Fatalf("the records after 300 were not tiered: last tiered %d", listOffsetAt(t, b.Addr, topic, -5))
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.Kill()
	b.Restart()
	if got := listOffsetAt(t, b.Addr, topic, -2); got != 0 {
		t.Fatalf("earliest offset %d after a crash, want 0", got)
	}
	checkAllClients(t, b.Addr, topic, values)
}

// testVersityGW is a versitygw process serving root (posix backend) over
// S3 on a loopback port.
type testVersityGW struct {
	endpoint       string
	root           string
	access, secret string
}

// s3Bucket starts versitygw with a bucket named bucket, sets the AWS_*
// environment that brokers started afterwards inherit (so the test cannot
// be parallel), and returns the broker overrides that tier to the bucket
// and the directory that holds its objects.
func s3Bucket(t *testing.T, bucket string) (overrides []string, dir string) {
	t.Helper()
	gw := startTestVersityGW(t)
	// The posix backend serves each top-level directory as a bucket.
	if err := os.Mkdir(filepath.Join(gw.root, bucket), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", gw.access)
	t.Setenv("AWS_SECRET_ACCESS_KEY", gw.secret)
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	return []string{
		"strata.remote.s3.bucket=" + bucket,
		"strata.remote.s3.endpoint=" + gw.endpoint,
		"strata.remote.s3.path.style=true",
		"strata.remote.s3.region=us-east-1",
	}, filepath.Join(gw.root, bucket)
}

// startTestVersityGW starts versitygw from PATH or $GOPATH/bin, waits until
// it accepts connections, and kills it (by its own PID) when t ends. A
// missing binary skips t, or fails it when REQUIRE_VERSITYGW is set.
func startTestVersityGW(t *testing.T) *testVersityGW {
	t.Helper()
	bin, err := exec.LookPath("versitygw")
	if err != nil {
		bin = ""
		for _, gopath := range filepath.SplitList(build.Default.GOPATH) {
			p := filepath.Join(gopath, "bin", "versitygw")
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				bin = p
				break
			}
		}
	}
	if bin == "" {
		const msg = "versitygw is not on PATH nor in $GOPATH/bin " +
			"(go install github.com/versity/versitygw/cmd/versitygw@v1.8.0)"
		if os.Getenv("REQUIRE_VERSITYGW") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	var errs []error
	for range 3 { // the free port may be taken before versitygw binds it
		gw, err := tryTestVersityGW(t, bin)
		if err == nil {
			return gw
		}
		errs = append(errs, err)
	}
	t.Fatalf("versitygw did not start: %v", errs)
	return nil
}

func tryTestVersityGW(t *testing.T, bin string) (*testVersityGW, error) {
	gw := &testVersityGW{root: t.TempDir(), access: "strata-e2e-access", secret: "strata-e2e-secret"}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	logFile, err := os.Create(filepath.Join(t.TempDir(), "versitygw.log"))
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := exec.Command(bin, "--access", gw.access, "--secret", gw.secret, "--port", addr, "--quiet", "posix", gw.root)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	kill := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		select {
		case err := <-exited:
			out, _ := os.ReadFile(logFile.Name())
			return nil, fmt.Errorf("versitygw exited before listening on %s: %v\n%s", addr, err, out)
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			kill()
			return nil, fmt.Errorf("versitygw not listening on %s after 15s", addr)
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Cleanup(kill)
	gw.endpoint = "http://" + addr
	return gw, nil
}

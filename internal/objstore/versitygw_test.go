package objstore

import (
	"context"
	"fmt"
	"go/build"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// versityGW is a versitygw process serving a temporary directory over S3
// on a loopback port, for the S3 store's tests (DESIGN.md §2).
type versityGW struct {
	endpoint       string
	access, secret string
	buckets        atomic.Int64 // names fresh buckets
	stop           func()       // kills it now (also done when the test ends)
}

const (
	gwAccessKey = "strata-test-access"
	gwSecretKey = "strata-test-secret"
	// gwReadyTimeout bounds the wait for versitygw to accept connections.
	gwReadyTimeout  = 15 * time.Second
	gwStartAttempts = 3 // a port picked free may be taken before versitygw binds it
)

// findVersityGW looks for the versitygw binary on PATH, then in
// $GOPATH/bin, where `go install` puts it.
func findVersityGW() (string, bool) {
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, true
	}
	for _, dir := range filepath.SplitList(build.Default.GOPATH) {
		p := filepath.Join(dir, "bin", "versitygw")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, true
		}
	}
	return "", false
}

// startVersityGW starts versitygw with the posix backend on a fresh
// directory, waits (bounded) until it accepts connections, and kills it by
// its PID when t ends. Without the binary the test is skipped, unless
// REQUIRE_VERSITYGW is set (CI installs it, so there it must run).
func startVersityGW(t *testing.T) *versityGW {
	t.Helper()
	bin, ok := findVersityGW()
	if !ok {
		msg := "versitygw not found on PATH or in $GOPATH/bin; install it with " +
			"`go install github.com/versity/versitygw/cmd/versitygw@v1.8.0` to run the S3 contract tests"
		if os.Getenv("REQUIRE_VERSITYGW") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	var lastErr error
	for range gwStartAttempts {
		gw, err := tryStartVersityGW(t, bin)
		if err == nil {
			return gw
		}
		lastErr = err
	}
	t.Fatalf("versitygw did not start: %v", lastErr)
	return nil
}

func tryStartVersityGW(t *testing.T, bin string) (*versityGW, error) {
	root := t.TempDir()
	logPath := filepath.Join(t.TempDir(), "versitygw.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child has its own descriptor
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--access", gwAccessKey, "--secret", gwSecretKey,
		"--port", addr, "--quiet", "posix", root)
	cmd.Stdout, cmd.Stderr = logFile, logFile // files, so no copying goroutines
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	if err := waitListening(addr, exited); err != nil {
		stop()
		log, _ := os.ReadFile(logPath)
		return nil, fmt.Errorf("%w; its output:\n%s", err, log)
	}
	var once sync.Once
	stopOnce := func() { once.Do(stop) }
	t.Cleanup(stopOnce)
	return &versityGW{endpoint: "http://" + addr, access: gwAccessKey, secret: gwSecretKey, stop: stopOnce}, nil
}

func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// waitListening polls addr until it accepts a connection, the process
// exits, or gwReadyTimeout passes.
func waitListening(addr string, exited <-chan error) error {
	deadline := time.Now().Add(gwReadyTimeout)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("versitygw exited before listening on %s: %v", addr, err)
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(25 * time.Millisecond)
	}
	return fmt.Errorf("versitygw not listening on %s after %v", addr, gwReadyTimeout)
}

// options returns the S3Options of bucket on this server.
func (gw *versityGW) options(bucket, prefix string) S3Options {
	return S3Options{
		Bucket: bucket, Prefix: prefix, Region: "us-east-1",
		Endpoint: gw.endpoint, PathStyle: true,
		AccessKey: gw.access, SecretKey: gw.secret,
	}
}

// newBucket creates a bucket that no other test uses.
func (gw *versityGW) newBucket(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("strata-test-%d", gw.buckets.Add(1))
	s, err := newS3Store(context.Background(), gw.options(name, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: &name}); err != nil {
		t.Fatalf("creating bucket %s: %v", name, err)
	}
	return name
}

// newStore opens a Store on bucket with prefix, closed when t ends.
func (gw *versityGW) newStore(t *testing.T, bucket, prefix string) Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := NewS3(ctx, gw.options(bucket, prefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

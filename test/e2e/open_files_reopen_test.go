package e2e

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTooManyOpenFilesReopensOnceUnderTheLimit: a single node whose
// partition runs out of file descriptors while it rolls segments (a crowd
// of idle connections holds most of its limit) refuses that partition's
// writes; once the connections are gone and it is well under its limit
// again, it reopens the log by itself, without a restart, and every
// acknowledged record is there, followed by the next one. (Raising a
// running broker's limit with prlimit --pid does the same where the
// caller may raise it.)
func TestTooManyOpenFilesReopensOnceUnderTheLimit(t *testing.T) {
	t.Parallel()
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit (util-linux) is not installed")
	}
	b := startBroker(t, t.TempDir())
	const topic = "few-files"
	// Each record fills a segment: every one rolls, and every segment
	// holds its files open.
	createTopic(t, newAdmin(t, b.Addr), topic, 1, map[string]*string{"segment.bytes": kadm.StringPtr("1024")})
	b.Stop()
	const limit = 160
	b.launcher = []string{prlimit, fmt.Sprintf("--nofile=%d:%d", limit, limit), "--"}
	b.Restart()
	idle := make([]net.Conn, 0, 100)
	for range cap(idle) {
		c, err := net.DialTimeout("tcp", b.Addr, clientDialTimeout)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()

	cl := newClient(t, b.Addr, kgo.RecordDeliveryTimeout(3*time.Second), kgo.ProducerLinger(0))
	var acked [][]byte
	for {
		v := make([]byte, 1024) // random: the producer compresses
		rand.Read(v[9:])
		copy(v, fmt.Sprintf("r%08d", len(acked)))
		r, err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: topic, Value: v}).First()
		if err != nil {
			break
		}
		if r.Offset != int64(len(acked)) {
			t.Fatalf("record %d acknowledged at offset %d", len(acked), r.Offset)
		}
		acked = append(acked, v)
		if len(acked) == 200 {
			t.Fatalf("%d records, each rolling a segment, under a limit of %d files, and none ran out", len(acked), limit)
		}
	}
	t.Logf("%d records acknowledged before the files ran out", len(acked))
	if out := b.output.String(); !strings.Contains(out, "too many open files") {
		t.Fatalf("the broker did not log its failed log; its output:\n%s", out)
	}

	for _, c := range idle {
		c.Close()
	}
	idle = nil
	waitFor(t, 20*time.Second, "the broker reopening the log", func() bool {
		return strings.Contains(b.output.String(), "reopened a partition's log that had failed on too many open files")
	})
	r, err := newClient(t, b.Addr).ProduceSync(context.Background(), &kgo.Record{Topic: topic, Value: []byte("after the files were freed")}).First()
	if err != nil {
		t.Fatalf("produce once under the limit, without a restart: %v", err)
	}
	if r.Offset < int64(len(acked)) {
		t.Fatalf("the record produced once under the limit went to offset %d, inside the %d acknowledged", r.Offset, len(acked))
	}
	checkAcked(t, b.Addr, topic, acked, "after the log reopened")
}

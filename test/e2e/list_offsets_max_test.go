package e2e

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestListMaxTimestampAfterDeleteRecords: ListOffsets -3 answers the max
// timestamp among the records still in the log. DeleteRecords moving the
// log start inside the first segment, past the record with the largest
// timestamp, must not leave -3 pointing below the log start (Kafka's
// answer there), before and after a restart.
func TestListMaxTimestampAfterDeleteRecords(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	adm := newAdmin(t, b.Addr)
	const topic = "max-timestamp-deleted"
	createTopic(t, adm, topic, 1, nil)
	cl := newClient(t, b.Addr, kgo.DefaultProduceTopic(topic))
	t0 := time.Now().Truncate(time.Millisecond)
	for _, d := range []int64{50, 10, 30, 20, 5} { // one batch each, offsets 0..4
		r := &kgo.Record{Value: []byte("v"), Timestamp: t0.Add(time.Duration(d) * time.Millisecond)}
		if err := cl.ProduceSync(testContext(t, 10*time.Second), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string, wantOffset, wantMs int64) {
		t.Helper()
		if o, ts := listOffsetWithTs(t, b.Addr, topic, -3); o != wantOffset || ts != t0.UnixMilli()+wantMs {
			t.Fatalf("%s: -3 = offset %d at %d, want %d at %d", when, o, ts, wantOffset, t0.UnixMilli()+wantMs)
		}
	}
	deleteBefore := func(o int64) {
		t.Helper()
		del := kadm.Offsets{}
		del.Add(kadm.Offset{Topic: topic, Partition: 0, At: o})
		if resp, err := adm.DeleteRecords(testContext(t, 10*time.Second), del); err != nil || resp.Error() != nil {
			t.Fatalf("DeleteRecords(%d): %v, %v", o, err, resp.Error())
		}
	}
	check("all records", 0, 50)
	deleteBefore(1)
	check("after DeleteRecords(1)", 2, 30)
	deleteBefore(3)
	check("after DeleteRecords(3)", 3, 20)
	b.Stop()
	b.Restart()
	check("after a restart", 3, 20)
}

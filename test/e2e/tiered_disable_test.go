package e2e

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// TestTieredStorageTurnedOff walks KIP-950's disable: turning
// remote.storage.enable off alone is refused with INVALID_CONFIG (it would
// strand the remote data; remote.log.copy.disable is the way to only stop
// uploading); with remote.log.delete.on.disable=true it is taken, the log
// start moves to the local log start, the remote segments are deleted, and
// consumers read the local records, across a restart; tiering can be
// turned on again once the old remote data is gone.
func TestTieredStorageTurnedOff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := startTieredBroker(t, dir)
	const topic = "tiered-off"
	values := fillTieredTopic(t, b.Addr, topic, 200)
	waitTiered(t, b.Addr, topic)
	remote := filepath.Join(dir, "remote")
	if len(remoteLogObjects(t, remote)) == 0 {
		t.Fatal("nothing was uploaded before tiering is turned off")
	}
	adm := newAdmin(t, b.Addr)
	ctx := testContext(t, clientDeliveryTimeout)
	off := kadm.AlterConfig{Name: "remote.storage.enable", Value: kadm.StringPtr("false")}
	resps, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{off}, topic)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := resps.On(topic, nil); err != nil || r.Err != kerr.InvalidConfig {
		t.Fatalf("turning tiering off without remote.log.delete.on.disable: %v / %v, want INVALID_CONFIG", err, r.Err)
	}

	localStart := listOffsetAt(t, b.Addr, topic, -4)
	if localStart <= 0 {
		t.Fatalf("local log start %d: local retention has not moved yet", localStart)
	}
	setTopicConfig(t, adm, topic, "remote.log.delete.on.disable", "true")
	setTopicConfig(t, adm, topic, "remote.storage.enable", "false")
	waitForStart(t, adm, topic, func(o int64) bool { return o >= localStart })
	deadline := time.Now().Add(tierSettle)
	for len(remoteLogObjects(t, remote)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("remote segments left %v after tiering was turned off", remoteLogObjects(t, remote))
		}
		time.Sleep(100 * time.Millisecond)
	}
	requireLocalRecords(t, b.Addr, topic, values)
	b.Stop()
	b.Restart()
	requireLocalRecords(t, b.Addr, topic, values)

	// Once the old remote data is gone (its segments' states too), tiering
	// may be turned on again; while any is left it is refused.
	adm = newAdmin(t, b.Addr)
	on := []kadm.AlterConfig{{Name: "remote.storage.enable", Value: kadm.StringPtr("true")}}
	deadline = time.Now().Add(tierSettle)
	for {
		resps, err := adm.AlterTopicConfigs(testContext(t, clientDeliveryTimeout), on, topic)
		if err != nil {
			t.Fatal(err)
		}
		r, err := resps.On(topic, nil)
		if err == nil && r.Err == nil {
			break
		}
		if r.Err != kerr.InvalidConfig || time.Now().After(deadline) {
			t.Fatalf("turning tiering on again: %v / %v (%s)", err, r.Err, r.ErrMessage)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// requireLocalRecords: a consumer from the start of topic reads the last
// records of values, from the log start on, unchanged.
func requireLocalRecords(t *testing.T, addr, topic string, values [][]byte) {
	t.Helper()
	got := consumeAll(t, addr, topic)[0]
	if len(got) == 0 || got[len(got)-1].Offset != int64(len(values)-1) {
		t.Fatalf("consumed %d records, the last at %d; want up to %d", len(got), firstOffset(got), len(values)-1)
	}
	for _, r := range got {
		if !bytes.Equal(r.Value, values[r.Offset]) {
			t.Fatalf("record %d differs from the one produced", r.Offset)
		}
	}
}

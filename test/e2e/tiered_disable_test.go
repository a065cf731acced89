package e2e

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// TestTieredStorageCannotBeTurnedOff: turning remote.storage.enable off is
// refused with INVALID_CONFIG naming the key and what to do instead
// (remote.log.copy.disable), since Strata does not delete the remote data
// as KIP-950's remote.log.delete.on.disable asks; stopping uploads is
// accepted.
func TestTieredStorageCannotBeTurnedOff(t *testing.T) {
	t.Parallel()
	b := startTieredBroker(t, t.TempDir())
	const topic = "tiered-stays-on"
	createTieredTopic(t, b.Addr, topic)
	adm := newAdmin(t, b.Addr)
	ctx := testContext(t, clientDeliveryTimeout)
	for _, off := range [][]kadm.AlterConfig{
		{{Name: "remote.storage.enable", Value: kadm.StringPtr("false")}},
		{{Name: "remote.storage.enable", Value: kadm.StringPtr("false")}, {Name: "remote.log.delete.on.disable", Value: kadm.StringPtr("true")}},
	} {
		resps, err := adm.AlterTopicConfigs(ctx, off, topic)
		if err != nil {
			t.Fatal(err)
		}
		r, err := resps.On(topic, nil)
		if err != nil || r.Err != kerr.InvalidConfig {
			t.Fatalf("turning tiering off (%d configs): %v / %v, want INVALID_CONFIG", len(off), err, r.Err)
		}
	}
	resps, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "remote.log.copy.disable", Value: kadm.StringPtr("true")}}, topic)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := resps.On(topic, nil); err != nil || r.Err != nil {
		t.Fatalf("remote.log.copy.disable=true: %v / %v", err, r.Err)
	}
}

package e2e

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
)

// TestRandomWalksOnATieredTopic is TestRandomWalksLeaveTheBrokerServing
// with the walk topic in the remote tier: 16 KiB segments, about one kept
// locally, records of a kilobyte, so that what the fetch walkers, the
// share members and the last read_committed read comes mostly from the
// bucket, before and after the crash (remote batches, their offsets and
// their aborted transactions).
func TestRandomWalksOnATieredTopic(t *testing.T) {
	t.Parallel()
	b := startTieredBroker(t, t.TempDir(), walkBrokerOverrides...)
	env := prepareWalks(t, b.Addr, []*Broker{b}, map[string]*string{
		"remote.storage.enable": kadm.StringPtr("true"),
		"local.retention.bytes": kadm.StringPtr("20000"),
		"retention.bytes":       kadm.StringPtr("-1"),
	})
	env.pad = 1000
	walkAcrossACrash(t, b, env)
	tiered := false
	for _, p := range listPartitionOffsets(t, newClient(t, b.Addr), walkTopic, walkPartitions, -4, 0) {
		tiered = tiered || p.Offset > 0
	}
	if !tiered {
		t.Fatal("every partition of the walk topic still starts at offset 0 locally: nothing was read from the remote tier")
	}
}

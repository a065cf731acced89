package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
)

// TestTieredCopyQuotaIsDynamic: a broker whose uploads are held to 100
// bytes a second (remote.log.manager.copy.max.bytes.per.second, KIP-956)
// uploads its rolled segments soon after the quota is raised cluster-wide
// with kafka-configs, as in Kafka, without a restart: the copy waiting
// out its debt goes on at once.
func TestTieredCopyQuotaIsDynamic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := startTieredBroker(t, dir, "remote.log.manager.copy.max.bytes.per.second=100")
	const topic = "dynamic-copy-quota"
	values := fillTieredTopic(t, b.Addr, topic, 60)
	segs := newSegmentSizes(filepath.Join(dir, topic+"-0"))

	adm := newAdmin(t, b.Addr)
	raise := kadm.AlterConfig{Op: kadm.SetConfig, Name: "remote.log.manager.copy.max.bytes.per.second", Value: kadm.StringPtr("1000000000")}
	if err := alterBrokerConfigs(t, adm, []kadm.AlterConfig{raise}); err != nil {
		t.Fatalf("raising the copy quota: %v", err)
	}
	// At 100 bytes a second the rolled segments (about 16 KiB each) would
	// take minutes each.
	waitRolledTieredWithin(t, b.Addr, topic, segs, tierSettle)
	checkAll(t, b.Addr, topic, values)
	if out := b.output.String(); !strings.Contains(out, "changed remote tier settings") {
		t.Errorf("the broker did not log the new quota:\n%s", out)
	}
}

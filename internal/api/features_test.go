package api

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ApiVersions v3+ advertises transaction.version, supported up to 2 and
// finalized at 2 (as a new Kafka 4 cluster), with the versions of
// transaction version 2 registered; v2 has no features.
func TestAPIVersionsFeatures(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	resp := rh.handle(18, 3, kmsg.NewPtrApiVersionsRequest(), "User:ANONYMOUS").(*kmsg.ApiVersionsResponse)
	if len(resp.SupportedFeatures) != 1 || resp.SupportedFeatures[0].Name != "transaction.version" ||
		resp.SupportedFeatures[0].MinVersion != 0 || resp.SupportedFeatures[0].MaxVersion != 2 {
		t.Fatalf("supported features %+v", resp.SupportedFeatures)
	}
	if len(resp.FinalizedFeatures) != 1 || resp.FinalizedFeatures[0].MaxVersionLevel != 2 || resp.FinalizedFeatures[0].MinVersionLevel != 2 ||
		resp.FinalizedFeaturesEpoch < 0 {
		t.Fatalf("finalized features %+v at epoch %d", resp.FinalizedFeatures, resp.FinalizedFeaturesEpoch)
	}
	for key, v := range map[int16]int16{kmsg.Produce.Int16(): produceAddsVersion, kmsg.EndTxn.Int16(): 5, kmsg.TxnOffsetCommit.Int16(): txnCommitAddsVersion} {
		if !rh.h.Supported(key, v) {
			t.Errorf("%s v%d, of transaction version 2, is not served", kmsg.NameForKey(key), v)
		}
	}
	old := rh.handle(18, 2, kmsg.NewPtrApiVersionsRequest(), "User:ANONYMOUS").(*kmsg.ApiVersionsResponse)
	if len(old.SupportedFeatures) != 0 || len(old.FinalizedFeatures) != 0 {
		t.Fatalf("ApiVersions v2 with features: %+v %+v", old.SupportedFeatures, old.FinalizedFeatures)
	}
}

package api

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ApiVersions v3+ advertises share.version, supported up to 1, and
// transaction.version, supported up to 2, finalized at 1 and 2 (as a new
// Kafka 4.2 cluster), with the versions of transaction version 2
// registered; v2 has no features.
func TestAPIVersionsFeatures(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	resp := rh.handle(18, 3, kmsg.NewPtrApiVersionsRequest(), "User:ANONYMOUS").(*kmsg.ApiVersionsResponse)
	if len(resp.SupportedFeatures) != 2 || resp.SupportedFeatures[0].Name != "share.version" || resp.SupportedFeatures[0].MaxVersion != 1 ||
		resp.SupportedFeatures[1].Name != "transaction.version" || resp.SupportedFeatures[1].MinVersion != 0 || resp.SupportedFeatures[1].MaxVersion != 2 {
		t.Fatalf("supported features %+v", resp.SupportedFeatures)
	}
	if len(resp.FinalizedFeatures) != 2 || resp.FinalizedFeatures[0].MaxVersionLevel != 1 ||
		resp.FinalizedFeatures[1].MaxVersionLevel != 2 || resp.FinalizedFeatures[1].MinVersionLevel != 2 || resp.FinalizedFeaturesEpoch < 0 {
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

// UpdateFeatures checks as Kafka's controller and changes
// transaction.version for the whole cluster: ApiVersions shows the new
// level, and at level 1 a Produce v12 of a partition not added is only
// verified (refused), no longer added.
func TestUpdateFeatures(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("data", nil, []int32{1})
	rh.withTxns()
	update := func(version int16, validateOnly bool, updates ...kmsg.UpdateFeaturesRequestFeatureUpdate) (int16, []int16) {
		r := kmsg.NewPtrUpdateFeaturesRequest()
		r.ValidateOnly, r.FeatureUpdates = validateOnly, updates
		resp := rh.handle(57, version, r, "User:ANONYMOUS").(*kmsg.UpdateFeaturesResponse)
		if (resp.ErrorCode == 0) != (resp.ErrorMessage == nil) {
			t.Errorf("UpdateFeatures answered %d with message %v: a message comes with an error, and only then", resp.ErrorCode, resp.ErrorMessage)
		}
		var results []int16
		for _, res := range resp.Results {
			results = append(results, res.ErrorCode)
		}
		return resp.ErrorCode, results
	}
	feature := func(name string, level int16, upgradeType int8, allowDowngrade bool) kmsg.UpdateFeaturesRequestFeatureUpdate {
		u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
		u.Feature, u.MaxVersionLevel, u.UpgradeType, u.AllowDowngrade = name, level, upgradeType, allowDowngrade
		return u
	}
	const tv = "transaction.version"
	for _, tc := range []struct {
		name    string
		version int16
		updates []kmsg.UpdateFeaturesRequestFeatureUpdate
		want    *kerr.Error
	}{
		{"an unknown feature", 1, []kmsg.UpdateFeaturesRequestFeatureUpdate{feature("metadata.version", 21, upgradeOnly, false)}, kerr.InvalidUpdateVersion},
		{"a level above the supported", 1, []kmsg.UpdateFeaturesRequestFeatureUpdate{feature(tv, 3, upgradeOnly, false)}, kerr.InvalidUpdateVersion},
		{"a downgrade without saying so", 1, []kmsg.UpdateFeaturesRequestFeatureUpdate{feature(tv, 1, upgradeOnly, false)}, kerr.InvalidUpdateVersion},
		{"a v0 downgrade without AllowDowngrade", 0, []kmsg.UpdateFeaturesRequestFeatureUpdate{feature(tv, 1, 0, false)}, kerr.InvalidUpdateVersion},
		{"an unknown upgrade type", 1, []kmsg.UpdateFeaturesRequestFeatureUpdate{feature(tv, 1, 9, false)}, kerr.InvalidUpdateVersion},
		{"upgrade type 0, which v1 has not", 1, []kmsg.UpdateFeaturesRequestFeatureUpdate{feature(tv, 2, 0, false)}, kerr.InvalidUpdateVersion},
		{"a feature twice", 1, []kmsg.UpdateFeaturesRequestFeatureUpdate{feature(tv, 2, upgradeOnly, false), feature(tv, 2, upgradeOnly, false)}, kerr.InvalidRequest},
	} {
		code, results := update(tc.version, false, tc.updates...)
		if code != tc.want.Code || len(results) != len(tc.updates) || results[0] != tc.want.Code {
			t.Errorf("%s: %v %v, want %v", tc.name, kerr.ErrorForCode(code), results, tc.want)
		}
	}
	if code, _ := update(1, true, feature(tv, 1, safeDowngrade, false)); code != 0 || rh.meta.Image().FeatureLevel(tv) != 2 {
		t.Fatalf("a validated downgrade: %v, level %d", kerr.ErrorForCode(code), rh.meta.Image().FeatureLevel(tv))
	}
	if code, results := update(2, false, feature(tv, 1, safeDowngrade, false)); code != 0 || results != nil || rh.meta.Image().FeatureLevel(tv) != 1 {
		t.Fatalf("a v2 downgrade: %v %v, level %d", kerr.ErrorForCode(code), results, rh.meta.Image().FeatureLevel(tv))
	}
	resp := rh.handle(18, 3, kmsg.NewPtrApiVersionsRequest(), "User:ANONYMOUS").(*kmsg.ApiVersionsResponse)
	if len(resp.FinalizedFeatures) != 2 || resp.FinalizedFeatures[1].MaxVersionLevel != 1 || resp.FinalizedFeaturesEpoch <= 1 {
		t.Fatalf("after the downgrade: finalized %+v at epoch %d", resp.FinalizedFeatures, resp.FinalizedFeaturesEpoch)
	}
	id := txnIDsOn(t, 0, 1)[0]
	pid, epoch := rh.initProducer("User:ANONYMOUS", id)
	if code := rh.txnProduceAt(produceAddsVersion, id, pid, epoch, 0); code != kerr.InvalidTxnState.Code {
		t.Fatalf("a Produce v12 of a partition not added, at transaction.version 1: error %d, want INVALID_TXN_STATE", code)
	}
	if code, _ := update(1, false, feature(tv, 2, upgradeOnly, false)); code != 0 || !transactionsV2(rh.meta.Image()) {
		t.Fatalf("the upgrade back: %v", kerr.ErrorForCode(code))
	}
	if code := rh.txnProduceAt(produceAddsVersion, id, pid, epoch, 0); code != 0 {
		t.Fatalf("a Produce v12 at transaction.version 2: error %d", code)
	}
}

// UpdateFeatures needs ALTER on the cluster.
func TestUpdateFeaturesNeedsClusterAlter(t *testing.T) {
	rh := newReplicaHarness(t, map[string]string{
		"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":           "User:admin",
	})
	r := kmsg.NewPtrUpdateFeaturesRequest()
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature, u.MaxVersionLevel, u.UpgradeType = "transaction.version", 1, safeDowngrade
	r.FeatureUpdates = append(r.FeatureUpdates, u)
	resp := rh.handle(57, 1, r, "User:mallory").(*kmsg.UpdateFeaturesResponse)
	if resp.ErrorCode != kerr.ClusterAuthorizationFailed.Code || len(resp.Results) != 1 || resp.Results[0].ErrorCode != kerr.ClusterAuthorizationFailed.Code || !transactionsV2(rh.meta.Image()) {
		t.Fatalf("without ALTER on the cluster: %+v", resp)
	}
	if resp := rh.handle(57, 1, r, "User:admin").(*kmsg.UpdateFeaturesResponse); resp.ErrorCode != 0 || transactionsV2(rh.meta.Image()) {
		t.Fatalf("a super user: %+v", resp)
	}
}

// share.version 0 turns share groups off: their requests are answered
// UNSUPPORTED_VERSION (still advertised, as Kafka's), and level 1 turns
// them on again.
func TestShareVersionFeature(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	update := func(level int16) {
		t.Helper()
		r := kmsg.NewPtrUpdateFeaturesRequest()
		u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
		u.Feature, u.MaxVersionLevel, u.UpgradeType = "share.version", level, safeDowngrade
		r.FeatureUpdates = append(r.FeatureUpdates, u)
		r.Version = 1
		if resp := rh.handle(57, 1, r, "User:ANONYMOUS").(*kmsg.UpdateFeaturesResponse); resp.ErrorCode != 0 {
			t.Fatalf("share.version %d: %v", level, kerr.ErrorForCode(resp.ErrorCode))
		}
	}
	beat := func() int16 {
		req := kmsg.NewPtrShareGroupHeartbeatRequest()
		req.Version, req.GroupID, req.MemberID, req.SubscribedTopicNames = 1, "g", "m", []string{"t"}
		return rh.handle(76, 1, req, "User:ANONYMOUS").(*kmsg.ShareGroupHeartbeatResponse).ErrorCode
	}
	fetch := func() int16 {
		req := kmsg.NewPtrShareFetchRequest()
		req.Version, req.GroupID, req.MemberID = 1, kmsg.StringPtr("g"), kmsg.StringPtr("m")
		return rh.handle(78, 1, req, "User:ANONYMOUS").(*kmsg.ShareFetchResponse).ErrorCode
	}
	update(0)
	if code := beat(); code != kerr.UnsupportedVersion.Code {
		t.Fatalf("ShareGroupHeartbeat at share.version 0: %v", kerr.ErrorForCode(code))
	}
	if code := fetch(); code != kerr.UnsupportedVersion.Code {
		t.Fatalf("ShareFetch at share.version 0: %v", kerr.ErrorForCode(code))
	}
	if !rh.h.Supported(76, 1) || !rh.h.Supported(78, 2) {
		t.Fatal("the share group APIs are no longer advertised")
	}
	update(1)
	if code := fetch(); code == kerr.UnsupportedVersion.Code {
		t.Fatal("ShareFetch at share.version 1 is still refused")
	}
}

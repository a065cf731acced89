package api

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleAs is rh.handle for a client with a client id.
func (rh *replicaHarness) handleAs(clientID string, key, version int16, body kmsg.Request) kmsg.Response {
	rh.t.Helper()
	body.SetVersion(version)
	reply := rh.h.Handle(rh.t.Context(), &Request{Key: key, Version: version, Body: body, Principal: "User:ANONYMOUS", ClientID: &clientID})
	if reply.Release != nil {
		defer reply.Release()
	}
	if reply.Wait != nil {
		return reply.Wait()
	}
	return reply.Resp
}

func createTopicsAs(rh *replicaHarness, clientID string, version int16, partitions map[string]int32, order ...string) *kmsg.CreateTopicsResponse {
	r := kmsg.NewPtrCreateTopicsRequest()
	r.TimeoutMillis = 10000
	for _, name := range order {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, partitions[name], 1
		r.Topics = append(r.Topics, rt)
	}
	return rh.handleAs(clientID, 19, version, r).(*kmsg.CreateTopicsResponse)
}

// approx reports whether ms is within a second of want (the bucket refills
// while the test runs, slowly under the race detector).
func approx(ms int32, want int32) bool { return ms >= want-1000 && ms <= want+1000 }

// KIP-599 through the three APIs: a client's controller_mutation_rate is a
// token bucket of the rate × 11 s; strict versions refuse a topic while the
// bucket is in debt (THROTTLING_QUOTA_EXCEEDED with the time to wait),
// older versions let it through and throttle the response; another client
// is not limited.
func TestControllerMutationRate(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	if codes := alterQuotas(rh, 1, false, quotaEntry([]string{"client-id=admin"}, "controller_mutation_rate=1")); codes[0] != 0 {
		t.Fatalf("setting the quota: %v", codes)
	}
	sizes := map[string]int32{"a": 8, "b": 5, "c": 1, "free": 20, "e": 1}

	// 11 tokens: a takes 8 (3 left), b 5 (-2: accepted, strict pays later),
	// c is refused with 2 s to wait.
	resp := createTopicsAs(rh, "admin", 7, sizes, "a", "b", "c")
	codes := []int16{resp.Topics[0].ErrorCode, resp.Topics[1].ErrorCode, resp.Topics[2].ErrorCode}
	if codes[0] != 0 || codes[1] != 0 || codes[2] != kerr.ThrottlingQuotaExceeded.Code {
		t.Fatalf("codes %v, want a and b created, c THROTTLING_QUOTA_EXCEEDED", codes)
	}
	if msg := resp.Topics[2].ErrorMessage; msg == nil || *msg == "" {
		t.Error("the refusal has no message")
	}
	if !approx(resp.ThrottleMillis, 2000) {
		t.Errorf("throttle %d ms, want about 2000", resp.ThrottleMillis)
	}
	if _, ok := rh.meta.Image().Topics["c"]; ok {
		t.Fatal("the refused topic c was created")
	}

	// Another client has no quota.
	if free := createTopicsAs(rh, "other", 7, sizes, "free"); free.Topics[0].ErrorCode != 0 || free.ThrottleMillis != 0 {
		t.Fatalf("another client: code %d, throttle %d", free.Topics[0].ErrorCode, free.ThrottleMillis)
	}

	// CreatePartitions v3 is strict: refused while in debt.
	cp := kmsg.NewPtrCreatePartitionsRequest()
	cp.TimeoutMillis = 10000
	cpt := kmsg.NewCreatePartitionsRequestTopic()
	cpt.Topic, cpt.Count = "b", 6
	cp.Topics = append(cp.Topics, cpt)
	cpResp := rh.handleAs("admin", 37, 3, cp).(*kmsg.CreatePartitionsResponse)
	if cpResp.Topics[0].ErrorCode != kerr.ThrottlingQuotaExceeded.Code || !approx(cpResp.ThrottleMillis, 2000) {
		t.Fatalf("CreatePartitions v3 in debt: code %d, throttle %d ms", cpResp.Topics[0].ErrorCode, cpResp.ThrottleMillis)
	}

	// DeleteTopics v4 is permissive: a's 8 partitions go, and the response
	// is throttled for the debt (-2 - 8 = -10: 10 s).
	dt := kmsg.NewPtrDeleteTopicsRequest()
	dt.TimeoutMillis = 10000
	dt.TopicNames = []string{"a"}
	dtResp := rh.handleAs("admin", 20, 4, dt).(*kmsg.DeleteTopicsResponse)
	if dtResp.Topics[0].ErrorCode != 0 || !approx(dtResp.ThrottleMillis, 10000) {
		t.Fatalf("DeleteTopics v4 in debt: code %d, throttle %d ms, want 0 and about 10000", dtResp.Topics[0].ErrorCode, dtResp.ThrottleMillis)
	}
	if _, ok := rh.meta.Image().Topics["a"]; ok {
		t.Fatal("topic a was not deleted")
	}

	// CreateTopics v5 is permissive too; validate_only takes nothing.
	resp = createTopicsAs(rh, "admin", 5, sizes, "e")
	if resp.Topics[0].ErrorCode != 0 || !approx(resp.ThrottleMillis, 11000) {
		t.Fatalf("CreateTopics v5 in debt: code %d, throttle %d ms, want 0 and about 11000", resp.Topics[0].ErrorCode, resp.ThrottleMillis)
	}
	vo := kmsg.NewPtrCreateTopicsRequest()
	vo.ValidateOnly = true
	vot := kmsg.NewCreateTopicsRequestTopic()
	vot.Topic, vot.NumPartitions, vot.ReplicationFactor = "validate", 3, 1
	vo.Topics = append(vo.Topics, vot)
	if r := rh.handleAs("admin", 19, 7, vo).(*kmsg.CreateTopicsResponse); r.Topics[0].ErrorCode != 0 || r.ThrottleMillis != 0 {
		t.Fatalf("validate_only in debt: code %d, throttle %d", r.Topics[0].ErrorCode, r.ThrottleMillis)
	}
}

// request_percentage (KIP-124): the time spent handling a client's requests
// is metered as a share of a core; a client over its quota gets a
// throttle_time_ms on its next responses (any API with the field), while
// ApiVersions and other clients are not throttled.
func TestRequestPercentage(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	// A millionth of a percent: any request puts the client over.
	if codes := alterQuotas(rh, 1, false, quotaEntry([]string{"client-id=busy"}, "request_percentage=0.000001")); codes[0] != 0 {
		t.Fatalf("setting the quota: %v", codes)
	}
	metadata := func(clientID string) int32 {
		r := kmsg.NewPtrMetadataRequest()
		return rh.handleAs(clientID, 3, 12, r).(*kmsg.MetadataResponse).ThrottleMillis
	}
	if ms := metadata("busy"); ms <= 0 {
		t.Fatalf("Metadata of a client over its request_percentage: throttle %d ms, want some", ms)
	}
	if ms := metadata("other"); ms != 0 {
		t.Fatalf("Metadata of a client without a quota: throttle %d ms", ms)
	}
	av := kmsg.NewPtrApiVersionsRequest()
	if ms := rh.handleAs("busy", 18, 3, av).(*kmsg.ApiVersionsResponse).ThrottleMillis; ms != 0 {
		t.Fatalf("ApiVersions was throttled %d ms; it is exempt", ms)
	}
	// A deferred response (a fetch's long poll) carries the throttle too.
	rh.createTopic("metered", nil, []int32{1})
	f := kmsg.NewPtrFetchRequest()
	f.ReplicaID, f.MaxWaitMillis, f.MinBytes, f.MaxBytes = -1, 10, 1, 1<<20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "metered"
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = 1 << 20
	ft.Partitions = append(ft.Partitions, fp)
	f.Topics = append(f.Topics, ft)
	if ms := rh.handleAs("busy", 1, 11, f).(*kmsg.FetchResponse).ThrottleMillis; ms <= 0 {
		t.Fatalf("a long-polled fetch of a client over its request_percentage: throttle %d ms", ms)
	}
}

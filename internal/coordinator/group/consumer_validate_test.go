package group

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func joinRequest() *kmsg.ConsumerGroupHeartbeatRequest {
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version, req.Group, req.MemberID = 1, "g", "m-1"
	req.RebalanceTimeoutMillis = 30000
	req.SubscribedTopicNames = []string{"t1"}
	req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	return req
}

func TestValidateHeartbeat(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(r *kmsg.ConsumerGroupHeartbeatRequest)
		code int16
	}{
		{"a join", func(*kmsg.ConsumerGroupHeartbeatRequest) {}, 0},
		{"a join by regex", func(r *kmsg.ConsumerGroupHeartbeatRequest) {
			r.SubscribedTopicNames, r.SubscribedTopicRegex = nil, ptr("t.*")
		}, 0},
		{"a join subscribing to nothing", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.SubscribedTopicNames = []string{} }, 0},
		{"v0 join without a member id", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.Version, r.MemberID = 0, "" }, 0},
		{"a heartbeat", func(r *kmsg.ConsumerGroupHeartbeatRequest) {
			r.MemberEpoch, r.RebalanceTimeoutMillis, r.SubscribedTopicNames, r.Topics = 5, -1, nil, nil
		}, 0},
		{"a static leave", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberEpoch, r.InstanceID = -2, ptr("i") }, 0},
		{"a leave", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberEpoch = -1 }, 0},

		{"no group", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.Group = " " }, kerr.InvalidRequest.Code},
		{"an empty instance id", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.InstanceID = ptr("") }, kerr.InvalidRequest.Code},
		{"an empty rack", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.RackID = ptr("") }, kerr.InvalidRequest.Code},
		{"v1 without a member id", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberID = "" }, kerr.InvalidRequest.Code},
		{"v0 heartbeat without a member id", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.Version, r.MemberID, r.MemberEpoch = 0, "", 3 }, kerr.InvalidRequest.Code},
		{"a join without a rebalance timeout", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.RebalanceTimeoutMillis = -1 }, kerr.InvalidRequest.Code},
		{"a join owning partitions", func(r *kmsg.ConsumerGroupHeartbeatRequest) {
			r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{{Partitions: []int32{0}}}
		}, kerr.InvalidRequest.Code},
		{"a join not saying what it owns", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.Topics = nil }, kerr.InvalidRequest.Code},
		{"a join subscribing to nothing said", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.SubscribedTopicNames = nil }, kerr.InvalidRequest.Code},
		{"a static leave without an instance", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberEpoch = -2 }, kerr.InvalidRequest.Code},
		{"an epoch below -2", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberEpoch = -3 }, kerr.InvalidRequest.Code},
		{"a bad regex", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.SubscribedTopicRegex = ptr("t[") }, kerr.InvalidRegularExpression.Code},
		{"a regex valid only once wrapped", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.SubscribedTopicRegex = ptr("a)|(b") }, kerr.InvalidRegularExpression.Code},
		{"an empty regex (no regex)", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.SubscribedTopicRegex = ptr("") }, 0},
		{"an unknown assignor", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.ServerAssignor = ptr("sticky") }, kerr.UnsupportedAssignor.Code},
		{"an assignor not offered", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.ServerAssignor = ptr("range") }, kerr.UnsupportedAssignor.Code},
		{"an offered assignor", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.ServerAssignor = ptr("uniform") }, 0},
	} {
		req := joinRequest()
		tc.edit(req)
		got := validateHeartbeat(req, []string{"uniform"})
		if got.code != tc.code || (got.code != 0) != (got.message != "") {
			t.Errorf("%s: %+v, want code %d", tc.name, got, tc.code)
		}
	}
}

func TestCompileTopicRegexMatchesWholeNames(t *testing.T) {
	re, err := compileTopicRegex("orders|pay.*")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"orders": true, "payments": true, "orders-eu": false, "old-orders": false, "xpay": false} {
		if re.MatchString(name) != want {
			t.Errorf("%q matched %v, want %v", name, !want, want)
		}
	}
}

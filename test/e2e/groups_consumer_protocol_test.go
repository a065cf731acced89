package e2e

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// consumedSet counts the records a group read, by topic, partition and
// offset.
type consumedSet struct {
	mu   sync.Mutex
	seen map[string]int
}

func (s *consumedSet) add(r *kgo.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen[fmt.Sprintf("%s/%d/%d", r.Topic, r.Partition, r.Offset)]++
}

// of counts the distinct records read from topic.
func (s *consumedSet) of(topic string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k := range s.seen {
		if strings.HasPrefix(k, topic+"/") {
			n++
		}
	}
	return n
}

// startRegexMember is a kgo member of group subscribing to a regular
// expression, which the broker resolves (KIP-848), polling into seen
// until the test ends.
func startRegexMember(t *testing.T, addr, group, regex string, seen *consumedSet) *kgo.Client {
	t.Helper()
	cl := newClient(t, addr, kgo.ConsumerGroup(group), kgo.ConsumeRegex(), kgo.ConsumeTopics(regex),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.Balancers(kgo.CooperativeStickyBalancer()), kgo.ServerSideBalancer())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			cl.PollFetches(ctx).EachRecord(seen.add)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return cl
}

// TestConsumerProtocolRegexSubscription: two members subscribe with a
// regular expression that the broker resolves. They read the matching
// topic and not the other; a matching topic created later is assigned
// to them without a restart; ConsumerGroupDescribe shows the expression
// and the assignments of both topics.
func TestConsumerProtocolRegexSubscription(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), groupBrokerOverrides...)
	adm := newAdmin(t, b.Addr)
	createTopic(t, adm, "rx-a", 2, nil)
	createTopic(t, adm, "other", 1, nil)
	prod := manualPartitioner(t, b.Addr)
	produceTo := func(topic string, partitions int32, n int) {
		var recs []*kgo.Record
		for i := range n {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i) % partitions, Value: []byte("v")})
		}
		produceSync(t, prod, recs...)
	}
	produceTo("rx-a", 2, 20)
	produceTo("other", 1, 5)

	seen := &consumedSet{seen: map[string]int{}}
	a := startRegexMember(t, b.Addr, "g-rx", "rx-.*", seen)
	startRegexMember(t, b.Addr, "g-rx", "rx-.*", seen)
	waitFor(t, 30*time.Second, "the 20 records of rx-a read", func() bool { return seen.of("rx-a") == 20 })

	createTopic(t, adm, "rx-b", 2, nil)
	produceTo("rx-b", 2, 20)
	waitFor(t, 30*time.Second, "the 20 records of rx-b, created later, read", func() bool { return seen.of("rx-b") == 20 })
	if n := seen.of("other"); n != 0 {
		t.Fatalf("%d records of a topic the expression does not match were read", n)
	}

	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Groups = []string{"g-rx"}
	resp, err := req.RequestWith(testContext(t, 10*time.Second), a)
	if err != nil {
		t.Fatal(err)
	}
	g := resp.Groups[0]
	assigned := map[string][]int32{}
	for _, m := range g.Members {
		if m.SubscribedTopicRegex == nil || *m.SubscribedTopicRegex == "" {
			t.Fatalf("member %s subscribes with no regular expression", m.MemberID)
		}
		for _, tp := range m.Assignment.TopicPartitions {
			assigned[tp.Topic] = append(assigned[tp.Topic], tp.Partitions...)
		}
	}
	for _, topic := range []string{"rx-a", "rx-b"} {
		slices.Sort(assigned[topic])
		if !slices.Equal(assigned[topic], []int32{0, 1}) {
			t.Fatalf("group %s: %d members, assigned %v; want both partitions of rx-a and rx-b", g.Group, len(g.Members), assigned)
		}
	}
	if _, ok := assigned["other"]; ok || len(g.Members) != 2 {
		t.Fatalf("group %s: %d members, assigned %v", g.Group, len(g.Members), assigned)
	}
}

// TestConsumerProtocolRegexMatchesInternalTopic: the broker resolves a
// regular expression against every topic, the internal ones too, as
// Kafka's coordinator does (franz-go's Test848RegexBrokerResolves): a
// member subscribing to __consumer_offsets by expression is assigned its
// partitions. (The client joins once a topic it matches itself exists:
// rx-a.)
func TestConsumerProtocolRegexMatchesInternalTopic(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), groupBrokerOverrides...)
	createTopic(t, newAdmin(t, b.Addr), "rx-a", 1, nil)
	member := startRegexMember(t, b.Addr, "g-internal", "rx-a|"+regexp.QuoteMeta("__consumer_offsets"), &consumedSet{seen: map[string]int{}})
	waitFor(t, 30*time.Second, "__consumer_offsets assigned to the member", func() bool {
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		req.Groups = []string{"g-internal"}
		resp, err := req.RequestWith(testContext(t, 10*time.Second), member)
		if err != nil || len(resp.Groups) != 1 || len(resp.Groups[0].Members) != 1 {
			return false
		}
		for _, tp := range resp.Groups[0].Members[0].Assignment.TopicPartitions {
			if tp.Topic == "__consumer_offsets" && len(tp.Partitions) > 0 {
				return true
			}
		}
		return false
	})
}

// TestACLsConsumerProtocolGroup: a ConsumerGroupHeartbeat needs READ on the
// group and DESCRIBE on each topic it names; a regular expression matches
// only the topics the member may DESCRIBE, as Kafka resolves it.
func TestACLsConsumerProtocolGroup(t *testing.T) {
	t.Parallel()
	b := startACLBroker(t, t.TempDir())
	admin := adminAs(t, b, "admin")
	createTopic(t, admin, "rx-a", 1, nil)
	createTopic(t, admin, "rx-b", 1, nil)
	createACLs(t, admin, kadm.NewACLs().Allow("User:alice").Topics("rx-a").Operations(kadm.OpRead))
	createACLs(t, admin, kadm.NewACLs().Allow("User:alice").Groups("g-acl").Operations(kadm.OpRead))
	topics, err := admin.ListTopics(testContext(t, 10*time.Second), "rx-a")
	if err != nil {
		t.Fatal(err)
	}
	rxA := [16]byte(topics["rx-a"].ID)

	// heartbeat joins as user; a refusal of the client's FindCoordinator
	// (which needs DESCRIBE on the group) comes back as the response's
	// error code.
	heartbeat := func(user string, edit func(*kmsg.ConsumerGroupHeartbeatRequest)) *kmsg.ConsumerGroupHeartbeatResponse {
		t.Helper()
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Group, req.MemberID, req.RebalanceTimeoutMillis = "g-acl", "member-"+user, 30_000
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		edit(req)
		resp, err := req.RequestWith(testContext(t, 15*time.Second), as(t, b, user, kgo.RetryTimeout(2*time.Second)))
		var ke *kerr.Error
		if errors.As(err, &ke) {
			resp = req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
			resp.ErrorCode = ke.Code
		} else if err != nil {
			t.Fatalf("ConsumerGroupHeartbeat as %s: %v", user, err)
		}
		return resp
	}
	byName := func(names ...string) func(*kmsg.ConsumerGroupHeartbeatRequest) {
		return func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.SubscribedTopicNames = names }
	}
	if code := heartbeat("bob", byName("rx-a")).ErrorCode; code != kerr.GroupAuthorizationFailed.Code {
		t.Fatalf("bob without READ on the group: %v", kerr.ErrorForCode(code))
	}
	if code := heartbeat("alice", byName("rx-a", "rx-b")).ErrorCode; code != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("alice naming a topic she may not DESCRIBE: %v", kerr.ErrorForCode(code))
	}
	resp := heartbeat("alice", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.SubscribedTopicRegex = kmsg.StringPtr("rx-.*") })
	if resp.ErrorCode != 0 || resp.Assignment == nil {
		t.Fatalf("alice's regular expression: %v, assignment %v", kerr.ErrorForCode(resp.ErrorCode), resp.Assignment)
	}
	var got []string
	for _, tp := range resp.Assignment.Topics {
		got = append(got, fmt.Sprintf("%x:%v", tp.TopicID, tp.Partitions))
	}
	if want := []string{fmt.Sprintf("%x:[0]", rxA)}; !slices.Equal(got, want) {
		t.Fatalf("alice's regular expression assigned %v, want only rx-a's partition %v", got, want)
	}

	describe := kmsg.NewPtrConsumerGroupDescribeRequest()
	describe.Groups = []string{"g-acl"}
	dresp, err := describe.RequestWith(testContext(t, 10*time.Second), as(t, b, "bob", kgo.RetryTimeout(2*time.Second)))
	if !errors.Is(err, kerr.GroupAuthorizationFailed) && (err != nil || dresp.Groups[0].ErrorCode != kerr.GroupAuthorizationFailed.Code) {
		t.Fatalf("bob's ConsumerGroupDescribe: %v %+v", err, dresp)
	}
}

// TestConsumerGroupOwnConfigs: a group's own consumer.heartbeat.interval.ms,
// set with IncrementalAlterConfigs on its GROUP resource, is what its
// members are told; another group keeps the broker's; a value outside the
// broker's bounds is INVALID_CONFIG.
func TestConsumerGroupOwnConfigs(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), groupBrokerOverrides...)
	cl := newClient(t, b.Addr)
	ctx := testContext(t, 30*time.Second)
	alter := func(group, key, value string) int16 {
		t.Helper()
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value, c.Op = key, kmsg.StringPtr(value), kmsg.IncrementalAlterConfigOpSet
		rr.Configs = append(rr.Configs, c)
		req.Resources = append(req.Resources, rr)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("IncrementalAlterConfigs: %v", err)
		}
		return resp.Resources[0].ErrorCode
	}
	if code := alter("g-own", "consumer.heartbeat.interval.ms", "700"); code != 0 {
		t.Fatalf("setting g-own's heartbeat interval: %v", kerr.ErrorForCode(code))
	}
	if code := alter("g-own", "consumer.heartbeat.interval.ms", "20000"); code != kerr.InvalidConfig.Code {
		t.Fatalf("a heartbeat interval over group.consumer.max.heartbeat.interval.ms: %v", kerr.ErrorForCode(code))
	}
	createTopic(t, newAdmin(t, b.Addr), "own-configs", 1, nil)
	for group, want := range map[string]int32{"g-own": 700, "g-plain": 300} {
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Group, req.MemberID, req.RebalanceTimeoutMillis = group, "m-"+group, 30_000
		req.SubscribedTopicNames, req.Topics = []string{"own-configs"}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil || resp.ErrorCode != 0 || resp.HeartbeatIntervalMillis != want {
			t.Fatalf("join of %s: %v, %+v; want heartbeat interval %d", group, err, resp, want)
		}
	}
}

// TestGroupCountsMetric: /metrics counts the groups the broker
// coordinates by type and state (strata_groups).
func TestGroupCountsMetric(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), append(groupBrokerOverrides, "strata.metrics.listener=127.0.0.1:0")...)
	base := metricsBase(t, b)
	adm := newAdmin(t, b.Addr)
	createTopic(t, adm, "counted", 1, nil)
	cl := newClient(t, b.Addr)
	ctx := testContext(t, 30*time.Second)
	join := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	join.Group, join.MemberID, join.RebalanceTimeoutMillis = "g-counted", "m-1", 30_000
	join.SubscribedTopicNames, join.Topics = []string{"counted"}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	if resp, err := join.RequestWith(ctx, cl); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("join: %v %+v", err, resp)
	}
	offsets := kadm.Offsets{}
	offsets.Add(kadm.Offset{Topic: "counted", Partition: 0, At: 1, LeaderEpoch: -1})
	if _, err := adm.CommitOffsets(ctx, "g-simple", offsets); err != nil {
		t.Fatalf("simple commit: %v", err)
	}
	want := map[string]float64{`strata_groups{state="Stable",type="consumer"}`: 1, `strata_groups{state="Empty",type="classic"}`: 1}
	waitFor(t, 10*time.Second, fmt.Sprintf("/metrics to show %v", want), func() bool {
		s := scrape(t, base+"/metrics")
		for k, v := range want {
			if s[k] != v {
				return false
			}
		}
		return true
	})
}

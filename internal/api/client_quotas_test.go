package api

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/partition"
)

func TestClientQuotasAdvertised(t *testing.T) {
	checkAdvertised(t, 48, 0, 1)
	checkAdvertised(t, 49, 0, 1)
}

// quotaEntry is one AlterClientQuotas entry: entity parts as type=name
// ("user=alice"; "user=" for the default) and ops as key=value ("key=-"
// removes).
func quotaEntry(entity []string, ops ...string) kmsg.AlterClientQuotasRequestEntry {
	e := kmsg.NewAlterClientQuotasRequestEntry()
	for _, p := range entity {
		typ, name, _ := strings.Cut(p, "=")
		ee := kmsg.NewAlterClientQuotasRequestEntryEntity()
		ee.Type = typ
		if name != "" {
			ee.Name = &name
		}
		e.Entity = append(e.Entity, ee)
	}
	for _, o := range ops {
		key, value, _ := strings.Cut(o, "=")
		op := kmsg.NewAlterClientQuotasRequestEntryOp()
		op.Key = key
		if value == "-" {
			op.Remove = true
		} else {
			v, err := strconv.ParseFloat(value, 64)
			if err != nil {
				panic(err)
			}
			op.Value = v
		}
		e.Ops = append(e.Ops, op)
	}
	return e
}

func alterQuotas(rh *replicaHarness, version int16, validateOnly bool, entries ...kmsg.AlterClientQuotasRequestEntry) []int16 {
	rh.t.Helper()
	r := kmsg.NewPtrAlterClientQuotasRequest()
	r.Entries, r.ValidateOnly = entries, validateOnly
	resp := rh.handle(49, version, r, "User:ANONYMOUS").(*kmsg.AlterClientQuotasResponse)
	codes := make([]int16, len(resp.Entries))
	for i, e := range resp.Entries {
		codes[i] = e.ErrorCode
	}
	return codes
}

// describeQuotas is DescribeClientQuotas with components type:match[:name]
// (match e = exact, d = default, s = specified), as "entity -> k=v" lines.
func describeQuotas(rh *replicaHarness, strict bool, comps ...string) ([]string, int16) {
	rh.t.Helper()
	r := kmsg.NewPtrDescribeClientQuotasRequest()
	r.Strict = strict
	for _, c := range comps {
		f := strings.SplitN(c, ":", 3)
		comp := kmsg.NewDescribeClientQuotasRequestComponent()
		comp.EntityType = f[0]
		switch f[1] {
		case "e":
			comp.MatchType = 0
			if len(f) == 3 {
				comp.Match = &f[2]
			}
		case "d":
			comp.MatchType = 1
		case "s":
			comp.MatchType = 2
		}
		r.Components = append(r.Components, comp)
	}
	resp := rh.handle(48, 1, r, "User:ANONYMOUS").(*kmsg.DescribeClientQuotasResponse)
	var out []string
	for _, e := range resp.Entries {
		var parts, values []string
		for _, p := range e.Entity {
			name := "<default>"
			if p.Name != nil {
				name = *p.Name
			}
			parts = append(parts, p.Type+"="+name)
		}
		for _, v := range e.Values {
			values = append(values, v.Key+"="+strconv.FormatFloat(v.Value, 'f', -1, 64))
		}
		out = append(out, strings.Join(parts, ",")+" -> "+strings.Join(values, ","))
	}
	return out, resp.ErrorCode
}

func TestAlterAndDescribeClientQuotas(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	codes := alterQuotas(rh, 1, false,
		quotaEntry([]string{"user=alice"}, "producer_byte_rate=1024", "consumer_byte_rate=2048"),
		quotaEntry([]string{"user=", "client-id=app"}, "producer_byte_rate=512"),
		quotaEntry([]string{"client-id="}, "consumer_byte_rate=4096"),
	)
	for i, c := range codes {
		if c != 0 {
			t.Fatalf("entry %d: error %d", i, c)
		}
	}
	all, code := describeQuotas(rh, false)
	want := []string{
		"client-id=<default> -> consumer_byte_rate=4096",
		"user=<default>,client-id=app -> producer_byte_rate=512",
		"user=alice -> consumer_byte_rate=2048,producer_byte_rate=1024",
	}
	if code != 0 || strings.Join(all, "\n") != strings.Join(want, "\n") {
		t.Fatalf("describe all: %d\n%s\nwant\n%s", code, strings.Join(all, "\n"), strings.Join(want, "\n"))
	}
	if got, _ := describeQuotas(rh, true, "user:e:alice"); len(got) != 1 || got[0] != want[2] {
		t.Fatalf("user=alice strict: %v", got)
	}
	if got, _ := describeQuotas(rh, false, "client-id:s"); len(got) != 2 {
		t.Fatalf("any client id: %v, want the two entities with a client id", got)
	}
	if _, code := describeQuotas(rh, false, "user:e"); code != kerr.InvalidRequest.Code {
		t.Fatalf("exact match without a name: code %d, want INVALID_REQUEST", code)
	}
	if _, code := describeQuotas(rh, false, "group:s"); code != kerr.UnsupportedVersion.Code {
		t.Fatalf("unknown entity type: code %d, want UNSUPPORTED_VERSION", code)
	}

	// Removing alice's last keys removes the entity; removing a key that
	// is not set is fine.
	if codes := alterQuotas(rh, 0, false, quotaEntry([]string{"user=alice"}, "producer_byte_rate=-", "consumer_byte_rate=-"),
		quotaEntry([]string{"client-id="}, "producer_byte_rate=-")); codes[0] != 0 || codes[1] != 0 {
		t.Fatalf("removals: %v", codes)
	}
	if got, _ := describeQuotas(rh, false, "user:e:alice"); len(got) != 0 {
		t.Fatalf("alice still described after her quotas were removed: %v", got)
	}
}

func TestAlterClientQuotasRefusals(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	codes := alterQuotas(rh, 1, false,
		quotaEntry(nil, "producer_byte_rate=1"),                                          // no entity part
		quotaEntry([]string{"ip=10.0.0.1"}, "producer_byte_rate=5"),                      // not an ip's quota
		quotaEntry([]string{"user=bob"}, "connection_creation_rate=50"),                  // an ip's quota
		quotaEntry([]string{"user=bob"}, "bogus=1"),                                      // unknown key
		quotaEntry([]string{"user=bob"}, "producer_byte_rate=0"),                         // not positive
		quotaEntry([]string{"user=bob"}, "producer_byte_rate=10.5"),                      // not whole
		quotaEntry([]string{"user=bob"}, "producer_byte_rate=1", "producer_byte_rate=-"), // key twice
		quotaEntry([]string{"user=carol"}, "producer_byte_rate=100"),                     // valid
		quotaEntry([]string{"user=carol"}, "consumer_byte_rate=100"),                     // entity twice
		quotaEntry([]string{"client-id=\xff"}, "consumer_byte_rate=100"),                 // not UTF-8
	)
	want := []int16{kerr.InvalidRequest.Code, kerr.InvalidRequest.Code, kerr.InvalidRequest.Code, kerr.InvalidRequest.Code,
		kerr.InvalidRequest.Code, kerr.InvalidRequest.Code, kerr.InvalidRequest.Code, 0, kerr.InvalidRequest.Code, kerr.InvalidRequest.Code}
	for i := range want {
		if codes[i] != want[i] {
			t.Errorf("entry %d: code %d, want %d", i, codes[i], want[i])
		}
	}
	if got, _ := describeQuotas(rh, false); len(got) != 1 || got[0] != "user=carol -> producer_byte_rate=100" {
		t.Fatalf("stored %v, want only carol's valid entry", got)
	}
	if codes := alterQuotas(rh, 1, true, quotaEntry([]string{"user=dave"}, "producer_byte_rate=100")); codes[0] != 0 {
		t.Fatalf("validate_only: code %d", codes[0])
	}
	if got, _ := describeQuotas(rh, false, "user:e:dave"); len(got) != 0 {
		t.Fatalf("validate_only stored %v", got)
	}
}

// TestProduceOverQuotaIsThrottled: a client over its producer_byte_rate
// gets a throttle_time_ms; another client, without a quota, does not.
func TestProduceOverQuotaIsThrottled(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("quota", map[string]string{"min.insync.replicas": "1"}, []int32{1})
	if codes := alterQuotas(rh, 1, false, quotaEntry([]string{"client-id=slow"}, "producer_byte_rate=100")); codes[0] != 0 {
		t.Fatalf("setting the quota: %v", codes)
	}
	produce := func(clientID string) *kmsg.ProduceResponse {
		r := kmsg.NewPtrProduceRequest()
		r.Acks, r.TimeoutMillis = 1, 10000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "quota"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = oneRecordBatch(strings.Repeat("x", 10000))
		rt.Partitions = append(rt.Partitions, rp)
		r.Topics = append(r.Topics, rt)
		r.SetVersion(9)
		reply := rh.h.Handle(rh.t.Context(), &Request{Key: 0, Version: 9, Body: r, Principal: "User:ANONYMOUS", ClientID: &clientID})
		resp := reply.Resp
		if reply.Wait != nil {
			resp = reply.Wait()
		}
		return resp.(*kmsg.ProduceResponse)
	}
	slow := produce("slow")
	if code := slow.Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("produce: error %d", code)
	}
	// 10 kB against 100 B/s over a 10 s window: (1007-100)/100 of 10 s,
	// about 91 s, uncapped as Kafka's byte rate throttles.
	if slow.ThrottleMillis < 85000 || slow.ThrottleMillis > 95000 {
		t.Fatalf("throttle %d ms for 10 kB against 100 B/s, want about 91 s", slow.ThrottleMillis)
	}
	if other := produce("other"); other.ThrottleMillis != 0 {
		t.Fatalf("a client without a quota was throttled %d ms", other.ThrottleMillis)
	}
}

// TestFetchOverQuotaIsAnsweredEmpty: a consumer's fetch asks for at most
// its quota's window; one that would put it over its consumer_byte_rate is
// answered as Kafka answers it: no records, a throttle_time_ms; another
// client is served meanwhile.
func TestFetchOverQuotaIsAnsweredEmpty(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("cq", map[string]string{"min.insync.replicas": "1"}, []int32{1})
	p := rh.partition("cq", 0)
	for range 10 {
		if _, _, err := p.Append(oneRecordBatch(strings.Repeat("x", 400)), partition.AcksLeader); err != nil {
			t.Fatal(err)
		}
	}
	if codes := alterQuotas(rh, 1, false, quotaEntry([]string{"client-id=reader"}, "consumer_byte_rate=100")); codes[0] != 0 {
		t.Fatalf("setting the quota: %v", codes)
	}
	fetch := func(clientID string, offset int64) *kmsg.FetchResponse {
		r := fetchRequest(0, -1, topicParts("cq", 0))
		r.ReplicaID, r.MaxBytes, r.MaxWaitMillis = -1, 50<<20, 0
		r.Topics[0].Partitions[0].FetchOffset = offset
		r.SetVersion(12)
		reply := rh.h.Handle(rh.t.Context(), &Request{Key: 1, Version: 12, Body: r, Principal: "User:ANONYMOUS", ClientID: &clientID})
		if reply.Release != nil {
			defer reply.Release()
		}
		resp := reply.Resp
		if reply.Wait != nil {
			resp = reply.Wait()
		}
		return resp.(*kmsg.FetchResponse)
	}
	first := fetch("reader", 0)
	if first.ThrottleMillis != 0 || len(first.Topics) != 1 {
		t.Fatalf("first fetch: throttle %d ms, %d topics; want served", first.ThrottleMillis, len(first.Topics))
	}
	// 100 B/s over ten windows: at most 1000 bytes in one go.
	if n := len(first.Topics[0].Partitions[0].RecordBatches); n == 0 || n > 1000 {
		t.Fatalf("first fetch read %d bytes; want some, at most the quota's window of 1000", n)
	}
	second := fetch("reader", 1)
	if second.ThrottleMillis <= 0 || len(second.Topics) != 0 {
		t.Fatalf("fetch over the quota: throttle %d ms, %d topics; want throttled and empty", second.ThrottleMillis, len(second.Topics))
	}
	if other := fetch("other", 0); other.ThrottleMillis != 0 || len(other.Topics) != 1 || len(other.Topics[0].Partitions[0].RecordBatches) < 4000 {
		t.Fatalf("a client without a quota: throttle %d ms, %d topics", other.ThrottleMillis, len(other.Topics))
	}
}

// TestIPQuotas: connection_creation_rate on ip entities (KIP-612), as
// kafka-configs --entity-type ips sets them, and their refusals.
func TestIPQuotas(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	codes := alterQuotas(rh, 1, false,
		quotaEntry([]string{"ip=10.0.0.1"}, "connection_creation_rate=5"),
		quotaEntry([]string{"ip="}, "connection_creation_rate=1"),
		quotaEntry([]string{"ip=localhost"}, "connection_creation_rate=100"),          // a host name that resolves
		quotaEntry([]string{"ip=no-such-host.invalid"}, "connection_creation_rate=1"), // one that does not
		quotaEntry([]string{"ip=10.0.0.2", "user=bob"}, "connection_creation_rate=1"), // combined
		quotaEntry([]string{"ip=10.0.0.0/8"}, "connection_creation_rate=1"),           // not an address
		quotaEntry([]string{"ip=10.0.0.3"}, "connection_creation_rate=1.5"),           // not whole
		quotaEntry([]string{"ip=10.0.0.3"}, "connection_creation_rate=-1"),            // negative
		quotaEntry([]string{"ip=10.0.0.3"}, "connection_creation_rate=0"),             // 0, as Kafka
	)
	want := []int16{0, 0, 0, kerr.InvalidRequest.Code, kerr.InvalidRequest.Code, kerr.InvalidRequest.Code,
		kerr.InvalidRequest.Code, kerr.InvalidRequest.Code, kerr.InvalidRequest.Code}
	for i := range want {
		if codes[i] != want[i] {
			t.Errorf("entry %d: code %d, want %d", i, codes[i], want[i])
		}
	}
	if codes := alterQuotas(rh, 1, false, quotaEntry([]string{"user=alice"}, "producer_byte_rate=1")); codes[0] != 0 {
		t.Fatalf("a user's quota: code %d", codes[0])
	}
	ips := []string{
		"ip=<default> -> connection_creation_rate=1",
		"ip=10.0.0.1 -> connection_creation_rate=5",
		"ip=localhost -> connection_creation_rate=100",
	}
	for _, tc := range []struct {
		strict bool
		comps  []string
		want   []string
	}{
		{false, []string{"ip:s"}, ips},
		{true, []string{"ip:s"}, ips},
		{false, []string{"ip:e:10.0.0.1"}, ips[1:2]},
		{true, []string{"ip:d"}, ips[:1]},
		{false, []string{"user:s"}, []string{"user=alice -> producer_byte_rate=1"}},
		{false, nil, append(slices.Clone(ips), "user=alice -> producer_byte_rate=1")},
	} {
		got, code := describeQuotas(rh, tc.strict, tc.comps...)
		if code != 0 || strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("describe %v strict=%v: %d\n%s\nwant\n%s", tc.comps, tc.strict, code, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
	if _, code := describeQuotas(rh, false, "ip:s", "client-id:s"); code != kerr.InvalidRequest.Code {
		t.Fatalf("an ip filter with a client-id one: code %d, want INVALID_REQUEST", code)
	}
}

package e2e

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestClusterLeaderHints: a node that does not lead a partition answers
// Produce, Fetch, ShareFetch and ShareAcknowledge for it with
// NOT_LEADER_OR_FOLLOWER and, as Kafka (KIP-951), names the partition's
// leader and leader epoch and where the client reaches it, so that
// franz-go and the Java client move the partition without a metadata
// round trip.
func TestClusterLeaderHints(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3)
	adm := c.newAdmin()
	// One replica: the other nodes do not host it, so that even a Fetch,
	// which a follower serves (KIP-392), is not served there.
	c.createTopic(adm, "hinted", 1, 1, nil)
	leader := c.leaderOf(adm, "hinted", 0)
	other := leader%3 + 1
	topics, err := adm.ListTopics(testContext(t, 10*time.Second), "hinted")
	if err != nil {
		t.Fatal(err)
	}
	td := topics["hinted"]
	wantEpoch := td.Partitions[0].LeaderEpoch
	seed := newClient(t, c.Node(other).Addr).SeedBrokers()[0]
	ctx := testContext(t, 30*time.Second)
	notLeader := kerr.NotLeaderForPartition.Code

	type hint struct {
		code          int16
		leader, epoch int32
		endpoints     map[int32]string
	}
	check := func(api string, got hint) {
		t.Helper()
		want := hint{notLeader, leader, wantEpoch, map[int32]string{leader: c.Node(leader).Addr}}
		if got.code != want.code || got.leader != want.leader || got.epoch != want.epoch ||
			len(got.endpoints) != 1 || got.endpoints[leader] != want.endpoints[leader] {
			t.Fatalf("%s to node %d: got %+v, want %+v", api, other, got, want)
		}
	}
	addr := func(host string, port int32) string { return net.JoinHostPort(host, strconv.Itoa(int(port))) }

	produce := kmsg.NewPtrProduceRequest()
	produce.Acks, produce.TimeoutMillis = -1, 5000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic, pt.TopicID = "hinted", td.ID
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Records = recordBatch(time.Now(), []byte("v"))
	pt.Partitions = append(pt.Partitions, pp)
	produce.Topics = append(produce.Topics, pt)
	// The node learns of the topic from the metadata quorum a moment
	// after the node that created it.
	var presp *kmsg.ProduceResponse
	for {
		presp, err = produce.RequestWith(ctx, seed)
		if err != nil {
			t.Fatal(err)
		}
		if code := presp.Topics[0].Partitions[0].ErrorCode; code != kerr.UnknownTopicID.Code && code != kerr.UnknownTopicOrPartition.Code {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	ps := presp.Topics[0].Partitions[0]
	got := hint{ps.ErrorCode, ps.CurrentLeader.LeaderID, ps.CurrentLeader.LeaderEpoch, map[int32]string{}}
	for _, b := range presp.Brokers {
		got.endpoints[b.NodeID] = addr(b.Host, b.Port)
	}
	check("Produce", got)

	fetch := kmsg.NewPtrFetchRequest()
	fetch.SetVersion(16)
	fetch.MaxBytes = 1 << 20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic, ft.TopicID = "hinted", td.ID
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = 1 << 20
	ft.Partitions = append(ft.Partitions, fp)
	fetch.Topics = append(fetch.Topics, ft)
	fresp, err := fetch.RequestWith(ctx, seed)
	if err != nil {
		t.Fatal(err)
	}
	fs := fresp.Topics[0].Partitions[0]
	got = hint{fs.ErrorCode, fs.CurrentLeader.LeaderID, fs.CurrentLeader.LeaderEpoch, map[int32]string{}}
	for _, b := range fresp.Brokers {
		got.endpoints[b.NodeID] = addr(b.Host, b.Port)
	}
	check("Fetch v16", got)

	member := "hint-member-0000000000000000000000"
	sf := kmsg.NewPtrShareFetchRequest()
	sf.GroupID, sf.MemberID = kmsg.StringPtr("hint-group"), kmsg.StringPtr(member)
	sf.ShareSessionEpoch, sf.MaxBytes, sf.MaxRecords, sf.BatchSize = 0, 1<<20, 100, 100
	st := kmsg.NewShareFetchRequestTopic()
	st.TopicID = td.ID
	sp := kmsg.NewShareFetchRequestTopicPartition()
	st.Partitions = append(st.Partitions, sp)
	sf.Topics = append(sf.Topics, st)
	sfresp, err := sf.RequestWith(ctx, seed)
	if err != nil {
		t.Fatal(err)
	}
	if sfresp.ErrorCode != 0 || len(sfresp.Topics) != 1 || len(sfresp.Topics[0].Partitions) != 1 {
		t.Fatalf("ShareFetch answered %d with %d topics", sfresp.ErrorCode, len(sfresp.Topics))
	}
	sfp := sfresp.Topics[0].Partitions[0]
	got = hint{sfp.ErrorCode, sfp.CurrentLeader.LeaderID, sfp.CurrentLeader.LeaderEpoch, map[int32]string{}}
	for _, b := range sfresp.NodeEndpoints {
		got.endpoints[b.NodeID] = addr(b.Host, b.Port)
	}
	check("ShareFetch", got)

	ack := kmsg.NewPtrShareAcknowledgeRequest()
	ack.GroupID, ack.MemberID, ack.ShareSessionEpoch = kmsg.StringPtr("hint-group"), kmsg.StringPtr(member), 1
	at := kmsg.NewShareAcknowledgeRequestTopic()
	at.TopicID = td.ID
	ap := kmsg.NewShareAcknowledgeRequestTopicPartition()
	ab := kmsg.NewShareAcknowledgeRequestTopicPartitionAcknowledgementBatch()
	ab.FirstOffset, ab.LastOffset, ab.AcknowledgeTypes = 0, 0, []int8{1}
	ap.AcknowledgementBatches = append(ap.AcknowledgementBatches, ab)
	at.Partitions = append(at.Partitions, ap)
	ack.Topics = append(ack.Topics, at)
	aresp, err := ack.RequestWith(ctx, seed)
	if err != nil {
		t.Fatal(err)
	}
	if aresp.ErrorCode != 0 || len(aresp.Topics) != 1 || len(aresp.Topics[0].Partitions) != 1 {
		t.Fatalf("ShareAcknowledge answered %d with %d topics", aresp.ErrorCode, len(aresp.Topics))
	}
	ap2 := aresp.Topics[0].Partitions[0]
	got = hint{ap2.ErrorCode, ap2.CurrentLeader.LeaderID, ap2.CurrentLeader.LeaderEpoch, map[int32]string{}}
	for _, b := range aresp.NodeEndpoints {
		got.endpoints[b.NodeID] = addr(b.Host, b.Port)
	}
	check("ShareAcknowledge", got)

	// franz-go acts on the hints: its producer, which learnt the leader,
	// sends its next batch there after the leadership moved, and follows
	// the answer's hint to the new leader.
	var logs syncBuffer
	c.createTopic(adm, "hinted-moves", 1, 3, nil)
	cl := c.newClient(kgo.MetadataMaxAge(time.Hour), kgo.WithLogger(kgo.BasicLogger(&logs, kgo.LogLevelInfo, nil)))
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "hinted-moves", Value: []byte("before")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	moved := c.leaderOf(adm, "hinted-moves", 0)%3 + 1
	leadAll(t, c, adm, "hinted-moves", 1, moved)
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "hinted-moves", Value: []byte("after")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "moving producing partition due to kip-951") {
		t.Fatalf("franz-go did not follow a leader hint; its log:\n%s", logs.String())
	}
}

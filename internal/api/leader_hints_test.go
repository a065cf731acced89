package api

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// leaderSeen is what one partition's answer says of its leader (KIP-951).
type leaderSeen struct {
	code          int16
	leader, epoch int32
	endpoints     []int32 // NodeEndpoints' node ids, with their ports checked
}

// Produce (v10+) and consumer Fetch (v16+) name a partition's current
// leader when they answer it NOT_LEADER_OR_FOLLOWER, with where the
// client reaches that leader; earlier versions do not; a partition
// without a leader is (-1, -1) with no endpoint.
func TestLeaderHintsOnNotLeader(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("away", nil, []int32{2, 3})      // led by 2, not hosted here
	rh.createTopic("following", nil, []int32{3, 1}) // hosted here as a follower
	rh.createTopic("here", nil, []int32{1, 2})      // led here
	rh.createTopic("orphan", nil, []int32{2})       // leaderless once 2 is fenced
	produce := func(version int16, topic string) leaderSeen {
		t.Helper()
		r := kmsg.NewPtrProduceRequest()
		r.Acks, r.TimeoutMillis = 1, 5000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic, rt.TopicID = topic, rh.meta.Image().Topics[topic].ID
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = oneRecordBatch("v")
		rt.Partitions = append(rt.Partitions, rp)
		r.Topics = append(r.Topics, rt)
		resp := rh.handle(0, version, r, "User:ANONYMOUS").(*kmsg.ProduceResponse)
		sp := resp.Topics[0].Partitions[0]
		seen := leaderSeen{code: sp.ErrorCode, leader: sp.CurrentLeader.LeaderID, epoch: sp.CurrentLeader.LeaderEpoch}
		for _, b := range resp.Brokers {
			if b.Port != 9090+b.NodeID || b.Host != "127.0.0.1" {
				t.Fatalf("produce v%d: endpoint of %d is %s:%d", version, b.NodeID, b.Host, b.Port)
			}
			seen.endpoints = append(seen.endpoints, b.NodeID)
		}
		return seen
	}
	fetch := func(version int16, topic string) leaderSeen {
		t.Helper()
		r := kmsg.NewPtrFetchRequest()
		r.MaxWaitMillis, r.MaxBytes = 0, 1<<20
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = topic, rh.meta.Image().Topics[topic].ID
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.PartitionMaxBytes = 1 << 20
		rt.Partitions = append(rt.Partitions, rp)
		r.Topics = append(r.Topics, rt)
		sp := onlyPartition(t, rh.handle(1, version, r, "User:ANONYMOUS").(*kmsg.FetchResponse))
		return leaderSeen{code: sp.ErrorCode, leader: sp.CurrentLeader.LeaderID, epoch: sp.CurrentLeader.LeaderEpoch}
	}
	notLeader := kerr.NotLeaderForPartition.Code
	epochOf := func(topic string) int32 { return int32(rh.meta.Image().Topics[topic].Partitions[0].LeaderEpoch) }
	check := func(what string, got, want leaderSeen) {
		t.Helper()
		if got.code != want.code || got.leader != want.leader || got.epoch != want.epoch || !slices.Equal(got.endpoints, want.endpoints) {
			t.Fatalf("%s: got %+v, want %+v", what, got, want)
		}
	}
	check("produce v9 away", produce(9, "away"), leaderSeen{code: notLeader, leader: -1, epoch: -1})
	check("produce v10 away", produce(10, "away"), leaderSeen{code: notLeader, leader: 2, epoch: epochOf("away"), endpoints: []int32{2}})
	check("produce v13 following", produce(13, "following"), leaderSeen{code: notLeader, leader: 3, epoch: epochOf("following"), endpoints: []int32{3}})
	check("produce v13 here", produce(13, "here"), leaderSeen{leader: -1, epoch: -1})
	check("fetch v15 away", fetch(15, "away"), leaderSeen{code: notLeader, leader: -1, epoch: -1})
	check("fetch v16 away", fetch(16, "away"), leaderSeen{code: notLeader, leader: 2, epoch: epochOf("away")})
	check("fetch v16 here", fetch(16, "here"), leaderSeen{leader: -1, epoch: -1})

	before := epochOf("away")
	rh.fence(2)
	if epochOf("away") <= before {
		t.Fatalf("fencing broker 2 left away's leader epoch at %d", epochOf("away"))
	}
	check("produce v13 away after 2 fenced", produce(13, "away"), leaderSeen{code: notLeader, leader: 3, epoch: epochOf("away"), endpoints: []int32{3}})
	check("produce v13 orphan", produce(13, "orphan"), leaderSeen{code: notLeader, leader: -1, epoch: -1})
}

// A fetch response lists each leader it names once, with its endpoint.
func TestLeaderHintsListEachLeaderOnce(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("two", nil, []int32{2, 3}, []int32{2, 3}, []int32{3, 2})
	r := kmsg.NewPtrFetchRequest()
	r.MaxBytes = 1 << 20
	rt := kmsg.NewFetchRequestTopic()
	rt.TopicID = rh.meta.Image().Topics["two"].ID
	for i := range int32(3) {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.PartitionMaxBytes = i, 1<<20
		rt.Partitions = append(rt.Partitions, rp)
	}
	r.Topics = append(r.Topics, rt)
	resp := rh.handle(1, 16, r, "User:ANONYMOUS").(*kmsg.FetchResponse)
	var leaders, endpoints []int32
	for _, p := range resp.Topics[0].Partitions {
		leaders = append(leaders, p.CurrentLeader.LeaderID)
	}
	for _, b := range resp.Brokers {
		endpoints = append(endpoints, b.NodeID)
	}
	if !slices.Equal(leaders, []int32{2, 2, 3}) || !slices.Equal(endpoints, []int32{2, 3}) {
		t.Fatalf("leaders %v, endpoints %v; want [2 2 3] and [2 3]", leaders, endpoints)
	}
}

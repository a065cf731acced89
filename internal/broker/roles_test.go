package broker

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/partition"
)

// TestRolesFollowTheImage: the broker hosts every partition with a replica
// here, leads those the image says it leads and follows the others;
// Followers hears whom each follower follows (nobody without a leader),
// OnOpen and OnClose hear of leadership only, and a change of leader
// never deletes a partition's data.
func TestRolesFollowTheImage(t *testing.T) {
	f := newReplicationFixture(t, replicatedConfig(1))
	f.createTopic("roles", []int32{1, 2, 3}, []int32{2, 1, 3}, []int32{3, 2})
	led := base.TopicPartition{Topic: "roles", Partition: 0}
	followed := base.TopicPartition{Topic: "roles", Partition: 1}
	elsewhere := base.TopicPartition{Topic: "roles", Partition: 2}
	if !f.hosted(led).IsLeader() || f.hosted(followed).IsLeader() || f.isHosted(elsewhere) {
		t.Fatalf("want %v led, %v followed and %v not hosted", led, followed, elsewhere)
	}
	if got, want := f.follows.take(), []string{"follow roles-1 2@0"}; !sameCalls(got, want) {
		t.Fatalf("Followers heard %v, want %v", got, want)
	}
	if got, want := f.leads.take(), []string{"open roles-0"}; !sameCalls(got, want) {
		t.Fatalf("OnOpen/OnClose heard %v, want %v", got, want)
	}
	appendRecords(t, f.hosted(led), 5)
	dir := f.b.partitionDir(led)

	// Broker 2 fenced: this node leads partition 1 (its next ISR replica).
	f.fence(2)
	if p := f.hosted(followed); !p.IsLeader() || p.Offsets().LeaderEpoch != 1 {
		t.Fatalf("%v: leader %v in epoch %d, want the leader in epoch 1", followed, p.IsLeader(), p.Offsets().LeaderEpoch)
	}
	if got, want := f.follows.take(), []string{"unfollow roles-1"}; !sameCalls(got, want) {
		t.Fatalf("after fencing 2, Followers heard %v, want %v", got, want)
	}
	if got, want := f.leads.take(), []string{"open roles-1"}; !sameCalls(got, want) {
		t.Fatalf("after fencing 2, OnOpen/OnClose heard %v, want %v", got, want)
	}
	f.unfence(2)

	// This node fenced: broker 3, the only other ISR member left, leads
	// both; both follow it here, their data kept.
	f.fence(1)
	p := f.hosted(led)
	if p.IsLeader() || p.Offsets().LogEnd != 5 {
		t.Fatalf("%v after losing leadership: leader %v, log end %d; want a follower keeping 5 records", led, p.IsLeader(), p.Offsets().LogEnd)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the data of %v is gone after a leadership change: %v", led, err)
	}
	if got, want := f.follows.take(), f.followCalls(led, followed); !sameCalls(got, want) {
		t.Fatalf("after fencing 1, Followers heard %v, want %v", got, want)
	}
	if got, want := f.leads.take(), []string{"close roles-0", "close roles-1"}; !sameCalls(got, want) {
		t.Fatalf("after fencing 1, OnOpen/OnClose heard %v, want %v", got, want)
	}

	// Their leader fenced too: no leader, and the followers here follow
	// nobody; when it is back they follow it again.
	f.fence(3)
	if pa := f.imagePartition(led); pa.Leader != metadata.NoLeader {
		t.Fatalf("%v is led by %d, want no leader", led, pa.Leader)
	}
	if p := f.hosted(led); p.IsLeader() || p.Offsets().LogEnd != 5 {
		t.Fatalf("%v without a leader: leader %v, log end %d", led, p.IsLeader(), p.Offsets().LogEnd)
	}
	if got, want := f.follows.take(), []string{"unfollow roles-0", "unfollow roles-1"}; !sameCalls(got, want) {
		t.Fatalf("without a leader, Followers heard %v, want %v", got, want)
	}
	f.unfence(3)
	if got, want := f.follows.take(), f.followCalls(led, followed); !sameCalls(got, want) {
		t.Fatalf("with the leader back, Followers heard %v, want %v", got, want)
	}
	if got := f.leads.take(); len(got) != 0 {
		t.Fatalf("a follower's changes reached OnOpen/OnClose: %v", got)
	}

	// The topic deleted: fetching stops, then the data goes.
	if err := f.meta.DeleteTopic(t.Context(), "roles"); err != nil {
		t.Fatal(err)
	}
	f.reconcile()
	if f.isHosted(led) || f.isHosted(followed) {
		t.Fatal("partitions of a deleted topic are still hosted")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the data of a deleted topic is still there: %v", err)
	}
	if got, want := f.follows.take(), []string{"unfollow roles-0", "unfollow roles-1"}; !sameCalls(got, want) {
		t.Fatalf("deleting the topic, Followers heard %v, want %v", got, want)
	}
}

// followCalls are the Follow calls that the image asks for tps.
func (f *replicationFixture) followCalls(tps ...base.TopicPartition) []string {
	var out []string
	for _, tp := range tps {
		pa := f.imagePartition(tp)
		out = append(out, fmt.Sprintf("follow %v %d@%d", tp, pa.Leader, pa.LeaderEpoch))
	}
	return out
}

// overrideMeta serves a hand-made image in place of the store's, so that a
// test can remove a replica at once, without a reassignment's steps.
type overrideMeta struct {
	*metadata.Store
	img atomic.Pointer[metadata.Image]
}

func (m *overrideMeta) Image() *metadata.Image {
	if img := m.img.Load(); img != nil {
		return img
	}
	return m.Store.Image()
}

// serveChanged serves, as the next image, the current one with partition
// index of topic changed by change.
func (m *overrideMeta) serveChanged(topic string, index int32, change func(*metadata.Partition)) {
	m.img.Store(changedImage(m.Image(), topic, index, change))
}

// changedImage is the image after from with partition index of topic
// changed by change; from is left as it is.
func changedImage(from *metadata.Image, topic string, index int32, change func(*metadata.Partition)) *metadata.Image {
	img := *from
	t := *img.Topics[topic]
	t.Partitions = slices.Clone(t.Partitions)
	change(&t.Partitions[index])
	img.Topics, img.TopicsByID = maps.Clone(img.Topics), maps.Clone(img.TopicsByID)
	img.Topics[topic], img.TopicsByID[t.ID] = &t, &t
	img.Version++
	return &img
}

// TestFollowerHearsANewLeaderEpoch: a follower whose leader is re-elected
// in a new epoch (an image that skipped another leader's term) is told to
// fetch in that epoch.
func TestFollowerHearsANewLeaderEpoch(t *testing.T) {
	meta := &overrideMeta{Store: openTestMeta(t)}
	f := newReplicationFixtureOn(t, meta, replicatedConfig(1))
	f.createTopic("reelected", []int32{2, 1})
	tp := base.TopicPartition{Topic: "reelected", Partition: 0}
	f.follows.take()
	epoch := f.imagePartition(tp).LeaderEpoch
	meta.serveChanged("reelected", 0, func(pa *metadata.Partition) { pa.LeaderEpoch++; pa.PartitionEpoch++ })
	f.reconcile()
	if got, want := f.follows.take(), []string{fmt.Sprintf("follow %v 2@%d", tp, epoch+1)}; !slices.Equal(got, want) {
		t.Fatalf("re-elected, Followers heard %v, want %v", got, want)
	}
}

// TestReplicaRemovedDeletesItsData: a partition whose replicas no longer
// include this node is closed and its data deleted; the others stay.
func TestReplicaRemovedDeletesItsData(t *testing.T) {
	meta := &overrideMeta{Store: openTestMeta(t)}
	f := newReplicationFixtureOn(t, meta, replicatedConfig(1))
	f.createTopic("moving", []int32{2, 1}, []int32{1, 2})
	gone := base.TopicPartition{Topic: "moving", Partition: 0}
	kept := base.TopicPartition{Topic: "moving", Partition: 1}
	dir := f.b.partitionDir(gone)
	f.follows.take()

	img := *f.meta.Image()
	t0 := *img.Topics["moving"]
	t0.Partitions = slices.Clone(t0.Partitions)
	t0.Partitions[0].Replicas, t0.Partitions[0].ISR = []int32{2, 3}, []int32{2, 3}
	img.Topics = map[string]*metadata.Topic{"moving": &t0}
	img.TopicsByID = map[base.TopicID]*metadata.Topic{t0.ID: &t0}
	img.Version++
	meta.img.Store(&img)
	f.reconcile()

	if f.isHosted(gone) || !f.isHosted(kept) {
		t.Fatalf("hosted %v: %v, %v: %v; want only %v", gone, f.isHosted(gone), kept, f.isHosted(kept), kept)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the data of a partition no longer assigned here is still there: %v", err)
	}
	if got, want := f.follows.take(), []string{"unfollow moving-0"}; !sameCalls(got, want) {
		t.Fatalf("Followers heard %v, want %v", got, want)
	}
}

// TestFollowerRunsNoTierLoop: a tiered partition's tier loop runs while
// this node leads it and stops when it follows (DESIGN §4: only leaders
// copy and expire).
func TestFollowerRunsNoTierLoop(t *testing.T) {
	meta := openTestMeta(t)
	b := newTieredTestBroker(t, meta, nil)
	createTopic(t, meta, "tiered", 1)
	if err := b.Reconcile(); err != nil {
		t.Fatal(err)
	}
	tp := base.TopicPartition{Topic: "tiered", Partition: 0}
	tierLoop := func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.mu.parts[tp].tier != nil
	}
	if !tierLoop() {
		t.Fatal("the leader runs no tier loop")
	}
	b.mu.Lock()
	h := b.mu.parts[tp]
	pa := meta.Image().Topics["tiered"].Partitions[0]
	pa.Leader, pa.LeaderEpoch = 2, pa.LeaderEpoch+1
	err := b.applyRoleLocked(h, pa)
	b.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if tierLoop() {
		t.Fatal("a follower runs a tier loop")
	}
}

// TestPlanHostingKeepsEveryReplica is planHosting's property: whatever
// the image and the hosted set, a hosted partition is removed exactly
// when its topic id is gone from the image or this node is not among its
// replicas there, and every partition with a replica here is hosted,
// whoever leads it.
func TestPlanHostingKeepsEveryReplica(t *testing.T) {
	const node = int32(1)
	rapid.Check(t, func(t *rapid.T) {
		img := &metadata.Image{Topics: map[string]*metadata.Topic{}, TopicsByID: map[base.TopicID]*metadata.Topic{}}
		for i := range rapid.IntRange(0, 4).Draw(t, "topics") {
			tt := &metadata.Topic{Name: string(rune('a' + i)), ID: base.TopicID{byte(i + 1)}}
			for p := range rapid.IntRange(1, 3).Draw(t, "partitions") {
				replicas := rapid.SliceOfNDistinct(rapid.Int32Range(1, 4), 1, 3, rapid.ID).Draw(t, "replicas")
				leader := rapid.SampledFrom(append(slices.Clone(replicas), metadata.NoLeader)).Draw(t, "leader")
				tt.Partitions = append(tt.Partitions, metadata.Partition{Index: int32(p), Leader: leader, Replicas: replicas, ISR: replicas})
			}
			img.Topics[tt.Name], img.TopicsByID[tt.ID] = tt, tt
		}
		hosted := map[base.TopicPartition]base.TopicID{}
		for range rapid.IntRange(0, 6).Draw(t, "hosted") {
			tp := base.TopicPartition{Topic: string(rune('a' + rapid.IntRange(0, 5).Draw(t, "topic"))), Partition: rapid.Int32Range(0, 3).Draw(t, "partition")}
			hosted[tp] = base.TopicID{byte(rapid.IntRange(1, 6).Draw(t, "id"))}
		}
		plan := planHosting(img, hosted, node)
		for tp, id := range hosted {
			tt, ok := img.TopicsByID[id]
			assigned := ok && tt.Name == tp.Topic && int(tp.Partition) < len(tt.Partitions) &&
				slices.Contains(tt.Partitions[tp.Partition].Replicas, node)
			why, removed := plan.remove[tp]
			if removed == assigned {
				t.Fatalf("hosted %v (topic id %x): removed %v, but assigned here %v", tp, id[0], removed, assigned)
			}
			gone := !ok || tt.Name != tp.Topic || int(tp.Partition) >= len(tt.Partitions)
			if removed && (why == removeTopicGone) != gone {
				t.Fatalf("hosted %v (topic id %x) removed because %v; its topic gone: %v", tp, id[0], why, gone)
			}
		}
		want := 0
		for _, tt := range img.Topics {
			for _, pa := range tt.Partitions {
				if slices.Contains(pa.Replicas, node) {
					want++
				}
			}
		}
		if len(plan.host) != want {
			t.Fatalf("plan hosts %d partitions, want %d", len(plan.host), want)
		}
		for _, a := range plan.host {
			if !slices.Contains(a.part.Replicas, node) {
				t.Fatalf("plan hosts %v, which has no replica here", a.tp)
			}
		}
	})
}

// TestSingleNodeHasNoLeaderState: a partition with one replica gets no
// leader state: no follower can fetch it and acks=all is the local sync.
func TestSingleNodeHasNoLeaderState(t *testing.T) {
	meta := openTestMeta(t)
	b := startTestBroker(t, idleTestOptions(t, meta, replicatedConfig(1)))
	createTopic(t, meta, "alone", 1)
	tp := base.TopicPartition{Topic: "alone", Partition: 0}
	p := hostedPartition(t, b, "alone")
	if ls := b.leaderStates(); len(ls) != 0 {
		t.Fatalf("%d leader states on a single node", len(ls))
	}
	if _, err := b.ReplicaFetch(ReplicaFetch{TP: tp, ReplicaID: 2}); err != ErrNotReplica {
		t.Fatalf("a replica fetch of a single-replica partition: %v, want ErrNotReplica", err)
	}
	if _, _, err := p.Append(keyedBatch("k"), partition.AcksAll); err != nil {
		t.Fatal(err)
	}
	if done, err := b.AcksAllDone(p, 1); !done || err != nil {
		t.Fatalf("AcksAllDone on a single node = %v, %v; want done", done, err)
	}
}

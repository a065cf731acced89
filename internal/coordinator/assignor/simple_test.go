package assignor

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
)

// poolKey names the existing topics a member subscribes to: members with
// the same key share their partitions.
func poolKey(spec Spec, m Member) string { return string(topicKey(existingTopics(spec, m.Subscribed))) }

// checkSimple fails unless out keeps Simple's contract for spec: members
// get only partitions of the topics they subscribe to; in each pool every
// partition has between 1 and ceil(M/P) holders and the members' counts
// differ by at most one.
func checkSimple(t *rapid.T, spec Spec, out map[string]Assignment) {
	if len(out) != len(spec.Members) {
		t.Fatalf("%d results for %d members", len(out), len(spec.Members))
	}
	pools := map[string][]Member{}
	for _, m := range spec.Members {
		a := out[m.ID]
		for topic, ps := range a {
			if !slices.Contains(m.Subscribed, topic) || len(ps) == 0 || !slices.IsSorted(ps) || len(slices.Compact(slices.Clone(ps))) != len(ps) {
				t.Fatalf("member %s: %v of topic %x (subscribed %x)", m.ID, ps, topic[0], m.Subscribed)
			}
			for _, p := range ps {
				if p < 0 || p >= spec.Topics[topic].Partitions {
					t.Fatalf("member %s: partition %d of topic %x out of range", m.ID, p, topic[0])
				}
			}
		}
		if key := poolKey(spec, m); key != "" {
			pools[key] = append(pools[key], m)
		} else if a.Size() != 0 {
			t.Fatalf("member %s subscribes to nothing and got %v", m.ID, a)
		}
	}
	for _, members := range pools {
		topics := existingTopics(spec, members[0].Subscribed)
		parts := 0
		for _, tp := range topics {
			parts += int(spec.Topics[tp].Partitions)
		}
		sharing := (len(members) + parts - 1) / parts
		holders := map[topicPartition]int{}
		minCount, maxCount := parts+1, -1
		for _, m := range members {
			n := 0
			for topic, ps := range out[m.ID] {
				for _, p := range ps {
					holders[topicPartition{topic, p}]++
					n++
				}
			}
			minCount, maxCount = min(minCount, n), max(maxCount, n)
		}
		for _, topic := range topics {
			for p := range spec.Topics[topic].Partitions {
				if h := holders[topicPartition{topic, p}]; h < 1 || h > sharing {
					t.Fatalf("partition %x-%d has %d holders, sharing %d", topic[0], p, h, sharing)
				}
			}
		}
		if maxCount-minCount > 1 {
			t.Fatalf("pool of %d members over %d partitions: counts from %d to %d", len(members), parts, minCount, maxCount)
		}
	}
}

func TestSimpleProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		spec := genSpec(t, rapid.Bool().Draw(t, "homogeneous"))
		out := Simple{}.Assign(spec)
		checkSimple(t, spec, out)
		if again := (Simple{}).Assign(rebuilt(spec)); !reflect.DeepEqual(normalized(again), normalized(out)) {
			t.Fatalf("not deterministic: %v then %v", out, again)
		}
		next := spec
		next.Members = slices.Clone(spec.Members)
		for i := range next.Members {
			next.Members[i].Current = out[next.Members[i].ID]
		}
		if fixed := (Simple{}).Assign(next); !reflect.DeepEqual(normalized(fixed), normalized(out)) {
			t.Fatalf("not a fixed point: %v then %v", out, fixed)
		}
	})
}

// normalized drops empty topic entries so that results compare by content.
func normalized(m map[string]Assignment) map[string]Assignment {
	out := map[string]Assignment{}
	for id, a := range m {
		c := Assignment{}
		for t, ps := range a {
			if len(ps) > 0 {
				c[t] = ps
			}
		}
		out[id] = c
	}
	return out
}

func TestSimpleShares(t *testing.T) {
	t1, t2 := tid(1), tid(2)
	topics := map[base.TopicID]Topic{t1: {Name: "t1", Partitions: 2}, t2: {Name: "t2", Partitions: 4}}
	tests := []struct {
		name    string
		members []Member
		want    string
	}{
		{
			name:    "fewer members than partitions: each partition once",
			members: []Member{{ID: "a", Subscribed: []base.TopicID{t2}}, {ID: "b", Subscribed: []base.TopicID{t2}}},
			want:    "a:[0 2] b:[1 3]",
		},
		{
			name: "more members than partitions: partitions shared by ceil(M/P)",
			members: []Member{
				{ID: "a", Subscribed: []base.TopicID{t1}}, {ID: "b", Subscribed: []base.TopicID{t1}},
				{ID: "c", Subscribed: []base.TopicID{t1}},
			},
			want: "a:[0 1] b:[0] c:[1]",
		},
		{
			name: "a member keeps what it holds",
			members: []Member{
				{ID: "a", Subscribed: []base.TopicID{t2}, Current: Assignment{t2: {2, 3}}},
				{ID: "b", Subscribed: []base.TopicID{t2}},
			},
			want: "a:[2 3] b:[0 1]",
		},
	}
	for _, tt := range tests {
		out := Simple{}.Assign(Spec{Members: tt.members, Topics: topics})
		got := ""
		for i, m := range tt.members {
			if i > 0 {
				got += " "
			}
			var ps []int32
			for _, topic := range []base.TopicID{t1, t2} {
				ps = append(ps, out[m.ID][topic]...)
			}
			got += fmt.Sprintf("%s:%v", m.ID, ps)
		}
		if got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

// Found by TestSimpleProperties: three members of two one-partition
// topics (sharing 2, four slots), the last holding the second topic's
// partition. The extra slot goes to it, and it holds the one partition
// still short of holders, so the room is used by a swap: every slot is
// filled, and the result, taken as Current, comes back unchanged.
func TestSimpleUsesTheRoomOfAMemberHoldingTheShortPartition(t *testing.T) {
	t3, t6 := base.TopicID{15: 3}, base.TopicID{15: 6}
	both := []base.TopicID{t3, t6}
	spec := Spec{
		Topics: map[base.TopicID]Topic{t3: {Name: "t3", Partitions: 1}, t6: {Name: "t6", Partitions: 1}},
		Members: []Member{{ID: "a", Subscribed: both}, {ID: "b", Subscribed: both},
			{ID: "c", Subscribed: both, Current: Assignment{t6: {0}}}},
	}
	out := Simple{}.Assign(spec)
	slots := 0
	for _, a := range out {
		for _, ps := range a {
			slots += len(ps)
		}
	}
	if slots != 4 {
		t.Fatalf("%d of the 4 slots used: %v", slots, out)
	}
	for i := range spec.Members {
		spec.Members[i].Current = out[spec.Members[i].ID]
	}
	if again := (Simple{}).Assign(spec); !reflect.DeepEqual(normalized(again), normalized(out)) {
		t.Fatalf("not a fixed point: %v then %v", out, again)
	}
}

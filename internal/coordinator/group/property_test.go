package group

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"pgregory.net/rapid"
)

// model is what the property test remembers of the members it drives.
type model struct {
	ids  map[string]string // "group/slot" → the member id last handed out
	gens map[string]int32  // group → highest generation seen in the coordinator
}

func TestPropertyRandomOps(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		opts := testOptions()
		opts.Random = rand.NewChaCha8([32]byte{byte(rapid.IntRange(0, 255).Draw(rt, "seed"))})
		opts.InitialRebalanceDelay = rapid.SampledFrom([]time.Duration{0, 3 * time.Second}).Draw(rt, "delay")
		opts.MaxSize = rapid.IntRange(1, 4).Draw(rt, "maxSize")
		opts.OffsetsRetention = time.Hour
		opts.OffsetsRetentionCheckInterval = time.Minute
		h := newHarness(rt, opts)
		m := &model{ids: map[string]string{}, gens: map[string]int32{}}
		steps := rapid.IntRange(1, 120).Draw(rt, "steps")
		for range steps {
			step(rt, h, m)
			checkInvariants(rt, h.c)
			for id, g := range h.c.groups {
				if prev, ok := m.gens[id]; ok && g.generation < prev {
					rt.Fatalf("group %s: generation went from %d to %d", id, prev, g.generation)
				}
				m.gens[id] = g.generation
			}
			for id := range m.gens {
				if _, ok := h.c.groups[id]; !ok {
					delete(m.gens, id) // deleted groups start over
				}
			}
		}
		// Every op is answered once the timers have run out.
		for range 10 {
			h.advance(time.Minute)
		}
		for tok, req := range h.issued {
			if !h.answered(tok) {
				rt.Fatalf("op %d (%T) never answered", tok, req)
			}
		}
		live, loaded := snapshotOf(h.c), snapshotOf(replayAll(rt, opts, h.records))
		if fmt.Sprint(live) != fmt.Sprint(loaded) {
			rt.Fatalf("replay differs:\nlive   %v\nloaded %v", live, loaded)
		}
	})
}

func step(rt *rapid.T, h *harness, m *model) {
	group := rapid.SampledFrom([]string{"g1", "g2"}).Draw(rt, "group")
	slot := rapid.IntRange(0, 3).Draw(rt, "slot")
	key := fmt.Sprintf("%s/%d", group, slot)
	id := m.ids[key]
	if rapid.IntRange(0, 9).Draw(rt, "stale") == 0 {
		id = "stale-" + id
	}
	var instance *string
	if slot == 3 {
		instance = kmsg.StringPtr("static-" + group)
	}
	gen := m.gens[group] + int32(rapid.IntRange(-1, 1).Draw(rt, "genSkew"))
	client := fmt.Sprintf("client-%d", slot)
	switch rapid.IntRange(0, 11).Draw(rt, "op") {
	case 0, 1:
		protocols := rapid.SampledFrom([][]string{{"range"}, {"range", "rr"}, {"rr"}}).Draw(rt, "protocols")
		req := joinReq(group, id, instance, protocols...)
		req.Version = int16(rapid.SampledFrom([]int{3, 5, 9}).Draw(rt, "joinVersion"))
		if rapid.Bool().Draw(rt, "fresh") {
			req.MemberID = ""
		}
		tok := h.do(req, client)
		if r, ok := h.replies[tok].(*kmsg.JoinGroupResponse); ok && r.MemberID != "" {
			m.ids[key] = r.MemberID
		}
	case 2:
		assign := map[string][]byte{}
		for s := range 4 {
			if mid := m.ids[fmt.Sprintf("%s/%d", group, s)]; mid != "" {
				assign[mid] = []byte{byte(s)}
			}
		}
		req := syncReq(group, id, gen, assign)
		req.InstanceID = instance
		h.do(req, client)
	case 3, 4:
		req := heartbeatReq(group, id, gen)
		req.InstanceID = instance
		h.do(req, client)
	case 5:
		req := kmsg.NewPtrLeaveGroupRequest()
		req.Version = 3
		req.Group = group
		req.Members = []kmsg.LeaveGroupRequestMember{{MemberID: id, InstanceID: instance}}
		h.do(req, client)
	case 6:
		if rapid.Bool().Draw(rt, "simple") {
			h.do(commitReq(group, "", -1, "t", int64(rapid.IntRange(0, 100).Draw(rt, "offset"))), client)
		} else {
			req := commitReq(group, id, gen, rapid.SampledFrom([]string{"t", "u"}).Draw(rt, "topic"), int64(rapid.IntRange(0, 100).Draw(rt, "offset")))
			req.InstanceID = instance
			h.do(req, client)
		}
	case 7:
		h.do(fetchV7(group, nil), client)
		d := kmsg.NewPtrDescribeGroupsRequest()
		d.Groups = []string{group}
		h.do(d, client)
		h.do(kmsg.NewPtrListGroupsRequest(), client)
	case 8:
		req := kmsg.NewPtrDeleteGroupsRequest()
		req.Groups = []string{group}
		h.do(req, client)
	case 9:
		req := kmsg.NewPtrOffsetDeleteRequest()
		req.Group = group
		req.Topics = []kmsg.OffsetDeleteRequestTopic{{Topic: rapid.SampledFrom([]string{"t", "u"}).Draw(rt, "delTopic"), Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}}}
		h.do(req, client)
	case 10, 11:
		h.advance(rapid.SampledFrom([]time.Duration{0, time.Second, 5 * time.Second, 11 * time.Second, 31 * time.Second, 2 * time.Hour}).Draw(rt, "advance"))
	}
}

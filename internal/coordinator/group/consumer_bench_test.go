package group

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// BenchmarkConsumerHeartbeatSteadyState is one heartbeat of a member of a
// settled consumer-protocol group of n members on one 1,000-partition
// topic: what every member costs the coordinator every heartbeat interval.
func BenchmarkConsumerHeartbeatSteadyState(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("members=%d", n), func(b *testing.B) {
			opts := testOptions()
			view := versionedView{viewOf(map[string]int32{"t1": 1000}), 1}
			opts.Topics = func() TopicsView { return view }
			c, err := New(opts)
			if err != nil {
				b.Fatal(err)
			}
			now := t0
			tok := uint64(0)
			members := make([]*cgClient, n)
			send := func(m *cgClient, epoch int32, join bool) {
				tok++
				req := cgBeatReq("g", m.id, epoch, m.owned)
				if join {
					req = cgJoinReq("g", m.id, "t1")
				}
				res := c.Handle(runtime.Op{Token: tok, Req: req}, now)
				resp := res.Replies[0].Resp
				hb := resp.(*kmsg.ConsumerGroupHeartbeatResponse)
				if hb.ErrorCode != 0 {
					b.Fatalf("heartbeat of %s: error %d", m.id, hb.ErrorCode)
				}
				m.epoch = hb.MemberEpoch
				if a := assigned(hb); a != nil {
					m.owned = a
				}
			}
			for i := range members {
				members[i] = &cgClient{id: fmt.Sprintf("m-%05d", i)}
				send(members[i], 0, true)
			}
			for range 5 {
				for _, m := range members {
					send(m, m.epoch, false)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				m := members[i%n]
				send(m, m.epoch, false)
				now = now.Add(time.Millisecond)
			}
		})
	}
}

// versionedView is a view with a fixed version: a metadata image's
// Version is a field, and the coordinator asks for it at every request;
// topicsView hashes its contents, which the benchmark must not count.
type versionedView struct {
	topicsView
	version int64
}

func (v versionedView) Version() int64 { return v.version }

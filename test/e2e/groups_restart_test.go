package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// offsetWatch polls a group's committed offsets and remembers any
// partition whose committed offset went backwards.
type offsetWatch struct {
	mu        sync.Mutex
	max       map[int32]int64
	backwards []string
	cancel    context.CancelFunc
	done      chan struct{}
}

func watchCommitted(adm *kadm.Client, group, topic string) *offsetWatch {
	ctx, cancel := context.WithCancel(context.Background())
	w := &offsetWatch{max: map[int32]int64{}, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for ctx.Err() == nil {
			rctx, rcancel := context.WithTimeout(ctx, 2*time.Second)
			resp, err := adm.FetchOffsets(rctx, group)
			rcancel()
			if err == nil {
				w.observe(resp, topic)
			}
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return w
}

func (w *offsetWatch) observe(resp kadm.OffsetResponses, topic string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	resp.Each(func(o kadm.OffsetResponse) {
		if o.Err != nil || o.Topic != topic {
			return
		}
		if prev, ok := w.max[o.Partition]; ok && o.At < prev {
			w.backwards = append(w.backwards, fmt.Sprintf("%s/%d: %d -> %d", topic, o.Partition, prev, o.At))
		}
		if o.At > w.max[o.Partition] {
			w.max[o.Partition] = o.At
		}
	})
}

func (w *offsetWatch) stop(t *testing.T) {
	t.Helper()
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.backwards) > 0 {
		t.Fatalf("committed offsets went backwards: %v", w.backwards)
	}
}

// TestGroupSurvivesBrokerRestarts consumes with a committing kgo group
// while the broker is stopped cleanly and later killed with SIGKILL, each
// time restarted. The group resumes from its committed offsets: no record is
// lost, a record is consumed twice only if the commit after it failed (an
// acknowledged commit survives even kill -9), and the committed offset of
// every partition never goes backwards during the whole run. Both group
// protocols: classic, consumer (KIP-848), whose members keep their member
// epochs across the reload of the group's records, and a consumer group
// with a classic member (the online migration's mixed group).
func TestGroupSurvivesBrokerRestarts(t *testing.T) {
	t.Parallel()
	serverSide := []kgo.Opt{kgo.Balancers(kgo.CooperativeStickyBalancer()), kgo.ServerSideBalancer()}
	for _, protocol := range []struct {
		name    string
		members [][]kgo.Opt
		classic int // the classic members of a consumer-protocol group
	}{
		{"classic", [][]kgo.Opt{nil}, 0},
		{"consumer-protocol", [][]kgo.Opt{serverSide}, 0},
		{"mixed", [][]kgo.Opt{serverSide, {kgo.Balancers(kgo.CooperativeStickyBalancer())}}, 1},
	} {
		t.Run(protocol.name, func(t *testing.T) {
			t.Parallel()
			b := startBroker(t, t.TempDir(), groupBrokerOverrides...)
			adm := newAdmin(t, b.Addr)
			const topic, group, partitions, n = "groups-restart", "g-restart", 6, 6000
			createTopic(t, adm, topic, partitions, nil)
			ends := produceSpread(t, manualPartitioner(t, b.Addr), topic, partitions, n)

			l := newLedger()
			var members []*groupMember
			for _, opts := range protocol.members {
				members = append(members, startMember(t, b.Addr, group, topic, l, memberPace{maxPoll: 20, pause: 15 * time.Millisecond}, opts...))
			}
			w := watchCommitted(newAdmin(t, b.Addr), group, topic)

			waitFor(t, 60*time.Second, "a third consumed", func() bool { return l.count() > n/3 })
			b.Stop()
			b.Restart()
			waitFor(t, 60*time.Second, "two thirds consumed", func() bool { return l.count() > 2*n/3 })
			b.Kill()
			b.Restart()
			waitFor(t, 90*time.Second, "everything consumed", func() bool { return l.count() >= n })
			// A member whose last commit failed (the broker was restarting)
			// commits again only when it polls more, and there is no more:
			// commit what each member consumed, as a client does before it
			// leaves, until the group's offsets are at the ends.
			waitFor(t, 60*time.Second, "everything committed", func() bool {
				for _, m := range members {
					cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					_ = m.cl.CommitUncommittedOffsets(cctx)
					cancel()
				}
				return committedAt(t, adm, group, topic, ends)
			})
			if protocol.members[0] != nil {
				requireGroupMembers(t, members[0].cl, group, true, protocol.classic, len(members)-protocol.classic)
			}
			for _, m := range members {
				m.leave()
			}
			w.stop(t)
			l.check(t, ends)
			requireCommitted(t, adm, group, topic, ends)
		})
	}
}

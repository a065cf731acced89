package runtime

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnShard is kvShard plus events and transactional records: the event
// txnEvent{pid, commit: false, key} writes key=pending as a transactional
// record of pid; txnEvent{pid, commit: true} writes a commit marker for
// pid and the effect "done <pid>". Replayed transactional records and
// markers are counted.
type txnShard struct {
	kvShard
	replayedTxn, replayedMarkers []int64
}

type txnEvent struct {
	pid    int64
	commit bool
	key    string
	fail   error
}

func (s *txnShard) Handle(op Op, now time.Time) Result {
	ev, ok := op.Event.(txnEvent)
	if !ok {
		return s.kvShard.Handle(op, now)
	}
	reply := []Reply{{Token: op.Token, Err: ev.fail}}
	p := Producer{ID: ev.pid, Epoch: 3}
	if ev.commit {
		return Result{Markers: []Marker{{Producer: p, Commit: true, CoordinatorEpoch: 9}},
			Effects: []any{fmt.Sprintf("done %d", ev.pid)}, Replies: reply}
	}
	return Result{Txn: &p, Records: []Record{{Key: []byte(ev.key), Value: []byte("pending")}}, Replies: reply}
}

func (s *txnShard) ReplayTxn(p Producer, key, value []byte) error {
	s.replayedTxn = append(s.replayedTxn, p.ID)
	return s.kvShard.Replay(key, value)
}

func (s *txnShard) ReplayMarker(m Marker) error {
	if !m.Commit || m.CoordinatorEpoch != 9 {
		return errors.New("unexpected marker")
	}
	s.replayedMarkers = append(s.replayedMarkers, m.Producer.ID)
	return nil
}

func (f *fixture) submitEvent(p int32, ev any) chan error {
	ch := make(chan error, 1)
	f.rt.SubmitEvent(p, ev, func(err error) { ch <- err })
	return ch
}

func recvErr(t *testing.T, ch chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("no answer to the event")
		return nil
	}
}

func TestEventsWriteTransactionalBatchesMarkersAndEffects(t *testing.T) {
	log := &memLog{readBatch: 10}
	effects := make(chan string, 10)
	var shards []*txnShard
	f := newFixtureWith(t, log, func(o *Options) {
		o.NewShard = func(int32) (Shard, error) {
			s := &txnShard{kvShard: kvShard{kv: map[string]string{}}}
			shards = append(shards, s)
			return s, nil
		}
		o.OnEffects = func(p int32, effs []any) {
			for _, e := range effs {
				effects <- fmt.Sprintf("%d: %v", p, e)
			}
		}
	})
	f.rt.Start(0)
	f.read("warm")
	if err := recvErr(t, f.submitEvent(0, txnEvent{pid: 7, key: "a"})); err != nil {
		t.Fatalf("event: %v", err)
	}
	if err := recvErr(t, f.submitEvent(0, txnEvent{pid: 7, commit: true})); err != nil {
		t.Fatalf("commit event: %v", err)
	}
	select {
	case e := <-effects:
		if e != "0: done 7" {
			t.Fatalf("effect %q", e)
		}
	default:
		t.Fatal("the effect was not handed over before the reply")
	}
	shaped := errors.New("stale")
	if err := recvErr(t, f.submitEvent(0, txnEvent{pid: 8, key: "b", fail: shaped})); !errors.Is(err, shaped) {
		t.Fatalf("an event's error reply: %v", err)
	}
	log.mu.Lock()
	got := slices.Clone(log.recs)
	log.mu.Unlock()
	if len(got) != 3 || got[0].Txn == nil || got[0].Txn.ID != 7 || got[1].Marker == nil || got[1].Marker.Producer.ID != 7 || got[2].Txn.ID != 8 {
		t.Fatalf("stored %+v", got)
	}

	f.rt.Resign(0)
	f.rt.Start(0)
	f.read("a")
	s := shards[len(shards)-1]
	if !slices.Equal(s.replayedTxn, []int64{7, 8}) || !slices.Equal(s.replayedMarkers, []int64{7}) {
		t.Fatalf("replayed txn records of %v, markers of %v", s.replayedTxn, s.replayedMarkers)
	}
}

func TestEventsFailWithCodes(t *testing.T) {
	log := &memLog{readBatch: 10}
	f := newFixtureWith(t, log, func(o *Options) {
		o.NewShard = func(int32) (Shard, error) { return &txnShard{kvShard: kvShard{kv: map[string]string{}}}, nil }
	})
	var ce *CodeError
	if err := recvErr(t, f.submitEvent(0, txnEvent{pid: 1, key: "a"})); !errors.As(err, &ce) || ce.Code != kerr.NotCoordinator.Code {
		t.Fatalf("event on a partition not led here: %v", err)
	}
	f.rt.Start(0)
	f.read("warm")
	log.mu.Lock()
	log.failNext = errors.New("disk on fire")
	log.mu.Unlock()
	if err := recvErr(t, f.submitEvent(0, txnEvent{pid: 1, key: "a"})); !errors.As(err, &ce) || ce.Code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("event whose append failed: %v", err)
	}
}

func TestTransactionalRecordFailsTheLoadOfAShardThatCannotReadIt(t *testing.T) {
	p := Producer{ID: 1}
	log := &memLog{readBatch: 10, recs: []Record{{Key: []byte("a"), Value: []byte("1"), Txn: &p}}}
	f := newFixture(t, log)
	f.rt.Start(0)
	time.Sleep(20 * time.Millisecond)
	code := recv(t, f.submit(set("a", "x"))).(*kmsg.HeartbeatResponse).ErrorCode
	if code != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("op on a partition that cannot load: %v", kerr.ErrorForCode(code))
	}
}

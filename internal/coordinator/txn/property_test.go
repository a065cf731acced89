package txn

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// model is what the property test remembers of the producers it drives:
// the producer id and epoch each transactional id last handed out.
type model struct {
	producers map[string]producer
	seen      map[string]producer // the coordinator's producer of each id after the last step
}

var (
	propIDs        = []string{"a", "b", "c"}
	propPartitions = []base.TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}, {Topic: "u", Partition: 0}}
)

func propOptions(o *Options) {
	o.MaxTimeout = 15 * time.Minute
	o.IDExpiration = time.Hour
	o.ExpiryCheckInterval = 10 * time.Minute
	o.AbortCheckInterval = 10 * time.Second
}

// TestPropertyReplayMatchesLive: for random requests, events, ticks and
// reloads, (1) the invariants of doc.go hold after every step and the epoch
// of a producer id never goes down; (2) replaying every record, in order,
// into a fresh coordinator gives the persisted state of the live one; (3)
// the first Tick of that reload emits WriteMarkers for exactly the
// transactions in Prepare*.
func TestPropertyReplayMatchesLive(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		h := newHarnessWith(rt, propOptions)
		m := &model{producers: map[string]producer{}, seen: map[string]producer{}}
		steps := rapid.IntRange(1, 150).Draw(rt, "steps")
		for range steps {
			step(rt, h, m)
			checkInvariants(rt, h.c)
			checkEpochs(rt, h.c, m)
		}
		loaded := replayAll(rt, h.opts, h.records)
		if live, got := snapshotOf(h.c), snapshotOf(loaded); !maps.Equal(live, got) {
			rt.Fatalf("replay differs:\nlive   %v\nloaded %v", live, got)
		}
		checkInvariants(rt, loaded)
		res := loaded.Tick(h.now)
		if len(res.Records) != 0 || len(res.Replies) != 0 {
			rt.Fatalf("the first tick after a load wrote %d records, %d replies", len(res.Records), len(res.Replies))
		}
		want := preparing(h.c)
		if len(res.Effects) != len(want) {
			rt.Fatalf("reload emitted %d WriteMarkers, want %d (%+v)", len(res.Effects), len(want), want)
		}
		for i, e := range res.Effects {
			if wm := e.(WriteMarkers); !equalMarkers(wm, want[i]) {
				rt.Fatalf("reload emitted %+v, want %+v", wm, want[i])
			}
		}
	})
}

func checkEpochs(rt *rapid.T, c *Coordinator, m *model) {
	for id, t := range c.txns {
		if prev, ok := m.seen[id]; ok && prev.id == t.producerID && t.epoch < prev.epoch {
			rt.Fatalf("%s: epoch of producer %d went from %d to %d", id, t.producerID, prev.epoch, t.epoch)
		}
		m.seen[id] = producer{id: t.producerID, epoch: t.epoch}
	}
	for id := range m.seen {
		if c.txns[id] == nil {
			delete(m.seen, id) // expired: starts over
		}
	}
}

// presented is the producer a client shows: the one it was given, or now
// and then a stale or made-up one.
func presented(rt *rapid.T, m *model, id string) producer {
	p, ok := m.producers[id]
	if !ok || rapid.IntRange(0, 7).Draw(rt, "skew") == 0 {
		p = producer{id: int64(rapid.IntRange(999, 1010).Draw(rt, "pid")), epoch: int16(rapid.IntRange(0, 4).Draw(rt, "epoch"))}
	}
	return p
}

func step(rt *rapid.T, h *harness, m *model) {
	id := rapid.SampledFrom(propIDs).Draw(rt, "id")
	switch rapid.IntRange(0, 15).Draw(rt, "op") {
	case 0, 1:
		version := int16(rapid.SampledFrom([]int{0, 2, 3, 4}).Draw(rt, "initVersion"))
		req := initReq(id, version)
		req.TransactionTimeoutMillis = int32(rapid.SampledFrom([]int{1000, 60_000, 20 * 60_000}).Draw(rt, "timeoutMs"))
		if version >= 3 && rapid.Bool().Draw(rt, "kip360") {
			p := presented(rt, m, id)
			req.ProducerID, req.ProducerEpoch = p.id, p.epoch
		}
		if r := h.init(req); r.ErrorCode == 0 {
			m.producers[id] = producer{id: r.ProducerID, epoch: r.ProducerEpoch}
		}
	case 2, 3:
		p := presented(rt, m, id)
		var tps []base.TopicPartition
		for _, tp := range propPartitions {
			if rapid.Bool().Draw(rt, "partition") {
				tps = append(tps, tp)
			}
		}
		h.do(addReq(id, p.id, p.epoch, int16(rapid.IntRange(0, 3).Draw(rt, "addVersion")), tps...))
	case 4:
		p := presented(rt, m, id)
		h.do(offsetsReq(id, p.id, p.epoch, int16(rapid.IntRange(0, 4).Draw(rt, "offsetsVersion")), rapid.SampledFrom([]string{"g", "gg"}).Draw(rt, "group")))
	case 5, 6:
		p := presented(rt, m, id)
		version := int16(rapid.IntRange(0, endTxnV2Version).Draw(rt, "endVersion"))
		r := h.do(endReq(id, p.id, p.epoch, version, rapid.Bool().Draw(rt, "commit"))).(*kmsg.EndTxnResponse)
		if r.ErrorCode == 0 && version >= endTxnV2Version {
			m.producers[id] = producer{id: r.ProducerID, epoch: r.ProducerEpoch}
		}
	case 7, 8:
		if len(h.effects) == 0 {
			return
		}
		i := rapid.IntRange(0, len(h.effects)-1).Draw(rt, "effect")
		wm := h.effects[i]
		if !rapid.Bool().Draw(rt, "keepDuplicate") {
			h.effects = slices.Delete(h.effects, i, i+1)
		}
		h.written(MarkersWritten{TransactionalID: wm.TransactionalID, ProducerID: wm.ProducerID, ProducerEpoch: wm.ProducerEpoch})
	case 9:
		p := presented(rt, m, id)
		h.written(MarkersWritten{TransactionalID: id, ProducerID: p.id, ProducerEpoch: p.epoch})
	case 10:
		h.advance(rapid.SampledFrom([]time.Duration{0, time.Second, 11 * time.Second, 70 * time.Second, 2 * time.Hour}).Draw(rt, "advance"))
	case 11:
		n := len(h.records)
		d := kmsg.NewPtrDescribeTransactionsRequest()
		d.TransactionalIDs = propIDs
		h.do(d)
		l := kmsg.NewPtrListTransactionsRequest()
		l.Version = 1
		l.DurationFilterMillis = int64(rapid.IntRange(-1, 100_000).Draw(rt, "duration"))
		h.do(l)
		if len(h.records) != n {
			rt.Fatal("Describe or List wrote records")
		}
	case 12:
		h.reload()
	case 14, 15:
		// A partition leader (or the group coordinator) adds or verifies
		// for the client.
		p := presented(rt, m, id)
		tps := []base.TopicPartition{rapid.SampledFrom(propPartitions).Draw(rt, "implicit")}
		h.handle(runtime.Op{Event: Verify{TransactionalID: id, ProducerID: p.id, ProducerEpoch: p.epoch, Partitions: tps,
			Add: rapid.Bool().Draw(rt, "add")}})
	case 13:
		if h.pidErr == nil {
			h.pidErr = errAllocator
		} else {
			h.pidErr = nil
		}
	}
}

func TestPropertyStepsAreDeterministic(t *testing.T) {
	// Two harnesses fed the same draws produce the same records: the
	// coordinator depends on nothing but its inputs (no map order).
	rapid.Check(t, func(rt *rapid.T) {
		seed := rapid.Uint64().Draw(rt, "seed")
		var runs [2][]string
		for i := range runs {
			r := rapid.Custom(func(rt *rapid.T) []string {
				h := newHarnessWith(rt, propOptions)
				m := &model{producers: map[string]producer{}, seen: map[string]producer{}}
				for range 60 {
					step(rt, h, m)
				}
				var out []string
				for _, rec := range h.records {
					out = append(out, fmt.Sprintf("%x/%x", rec.Key, rec.Value))
				}
				return out
			})
			runs[i] = r.Example(int(seed % 1000))
		}
		if !slices.Equal(runs[0], runs[1]) {
			rt.Fatalf("two runs of the same steps wrote different records")
		}
	})
}

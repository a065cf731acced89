package producers

import (
	"errors"
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
)

// modelProducer keeps the whole batch history of the current epoch; the
// duplicate window is the suffix from windowStart, which only moves forward
// as batches are appended (truncation shortens the history from the end).
type modelProducer struct {
	epoch       int16
	hist        []BatchMeta
	windowStart int
	lastTsMs    int64
	coordEpoch  int32
	txnFirst    base.Offset
	txnOpen     bool
}

func (m *modelProducer) window() []BatchMeta { return m.hist[m.windowStart:] }

// newEpoch forgets the batch history, as any change of epoch does.
func (m *modelProducer) newEpoch(epoch int16) {
	m.epoch, m.hist, m.windowStart = epoch, nil, 0
}

type model map[base.ProducerID]*modelProducer

// check restates Kafka's rules as a list of cases, in Kafka's order.
func (md model) check(pid base.ProducerID, epoch int16, first, last int32, txnl bool) (Verdict, int16) {
	m, ok := md[pid]
	switch {
	case !ok:
		return Verdict{Kind: Append}, 0
	case epoch < m.epoch:
		return Verdict{}, CodeInvalidProducerEpoch
	case epoch > m.epoch && first != 0:
		return Verdict{}, CodeOutOfOrderSequenceNumber
	case epoch == m.epoch:
		for _, b := range m.window() {
			if b.FirstSeq == first && b.LastSeq == last {
				return Verdict{Kind: Duplicate, Original: b}, 0
			}
		}
		lastSeq := int64(-1)
		if w := m.window(); len(w) > 0 {
			lastSeq = int64(w[len(w)-1].LastSeq)
		}
		if int64(first) != (lastSeq+1)%(math.MaxInt32+1) {
			return Verdict{}, CodeOutOfOrderSequenceNumber
		}
	}
	if m.txnOpen && !txnl {
		return Verdict{}, CodeInvalidTxnState
	}
	return Verdict{Kind: Append}, 0
}

func (md model) get(pid base.ProducerID, epoch int16) *modelProducer {
	m, ok := md[pid]
	if !ok {
		m = &modelProducer{epoch: epoch, coordEpoch: NoCoordinatorEpoch}
		md[pid] = m
	}
	if m.epoch != epoch {
		m.newEpoch(epoch)
	}
	return m
}

func (md model) update(pid base.ProducerID, epoch int16, b BatchMeta, txnl bool) {
	m := md.get(pid, epoch)
	m.hist = append(m.hist, b)
	m.windowStart = max(m.windowStart, len(m.hist)-MaxBatches)
	m.lastTsMs = b.TimestampMs
	if txnl && !m.txnOpen {
		m.txnFirst, m.txnOpen = b.FirstOffset, true
	}
}

func (md model) checkMarker(mk Marker) int16 {
	m, ok := md[mk.ProducerID]
	switch {
	case !ok:
		return 0
	case mk.Epoch < m.epoch:
		return CodeInvalidProducerEpoch
	case mk.CoordinatorEpoch < m.coordEpoch:
		return CodeTransactionCoordinatorFenced
	}
	return 0
}

func (md model) applyMarker(mk Marker, o base.Offset, tsMs int64) (CompletedTxn, bool) {
	m := md.get(mk.ProducerID, mk.Epoch)
	m.coordEpoch, m.lastTsMs = mk.CoordinatorEpoch, tsMs
	if !m.txnOpen {
		return CompletedTxn{}, false
	}
	m.txnOpen = false
	return CompletedTxn{ProducerID: mk.ProducerID, FirstOffset: m.txnFirst, LastOffset: o, Aborted: !mk.Commit}, true
}

func (md model) truncate(o base.Offset) {
	for pid, m := range md {
		had := len(m.window()) > 0
		for len(m.hist) > 0 && m.hist[len(m.hist)-1].LastOffset >= o {
			m.hist = m.hist[:len(m.hist)-1]
		}
		if m.txnOpen && m.txnFirst >= o {
			m.txnOpen = false
		}
		if len(m.hist) <= m.windowStart {
			m.hist, m.windowStart = nil, 0
			if had && !m.txnOpen {
				delete(md, pid)
			}
			continue
		}
		m.lastTsMs = m.hist[len(m.hist)-1].TimestampMs
	}
}

func (md model) expire(nowMs, expirationMs int64) {
	for pid, m := range md {
		if !m.txnOpen && nowMs-m.lastTsMs >= expirationMs {
			delete(md, pid)
		}
	}
}

func (md model) openTxns() []OpenTxn {
	var out []OpenTxn
	for pid, m := range md {
		if m.txnOpen {
			out = append(out, OpenTxn{ProducerID: pid, FirstOffset: m.txnFirst})
		}
	}
	slices.SortFunc(out, cmpOpenTxn)
	return out
}

func wrapSeq(seq int64) int32 { return int32(seq % (math.MaxInt32 + 1)) }

func TestStateAgainstModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, md := New(), model{}
		logEnd, clockMs := base.Offset(0), int64(0)
		wantCode := func(err error, code int16, what string) {
			var ce *CodeError
			if code == 0 && err != nil || code != 0 && (!errors.As(err, &ce) || ce.Code != code) {
				t.Fatalf("%s: error %v, model wants code %d", what, err, code)
			}
		}
		t.Repeat(map[string]func(*rapid.T){
			"produce": func(t *rapid.T) {
				pid := base.ProducerID(rapid.IntRange(1, 3).Draw(t, "pid"))
				count := rapid.Int32Range(1, 3).Draw(t, "count")
				txnl := rapid.Bool().Draw(t, "transactional")
				var epoch int16
				var first, last int32
				dup := false
				if m, ok := md[pid]; ok {
					epoch = max(0, m.epoch+int16(rapid.IntRange(-1, 1).Draw(t, "epochDelta")))
					w := m.window()
					switch mode := rapid.IntRange(0, 3).Draw(t, "seqMode"); {
					case mode == 0 && len(w) > 0:
						first = wrapSeq(int64(w[len(w)-1].LastSeq) + 1)
					case mode == 1 && len(w) > 0:
						b := w[rapid.IntRange(0, len(w)-1).Draw(t, "dup")]
						first, last, dup = b.FirstSeq, b.LastSeq, true
					case mode <= 2:
						first = 0
					default:
						first = rapid.Int32Range(0, 40).Draw(t, "seq")
					}
				} else {
					epoch = int16(rapid.IntRange(0, 2).Draw(t, "epoch"))
					first = rapid.SampledFrom([]int32{0, math.MaxInt32 - 1, 17}).Draw(t, "seq")
				}
				if !dup {
					last = wrapSeq(int64(first) + int64(count) - 1)
				}
				wantV, code := md.check(pid, epoch, first, last, txnl)
				v, err := s.Check(pid, epoch, first, last, txnl)
				wantCode(err, code, "Check")
				if code != 0 {
					return
				}
				if v != wantV {
					t.Fatalf("Check(%d, %d, %d, %d, %v) = %+v; want %+v", pid, epoch, first, last, txnl, v, wantV)
				}
				if v.Kind == Duplicate {
					return
				}
				clockMs += rapid.Int64Range(0, 10).Draw(t, "dt")
				n := base.Offset(rapid.IntRange(1, 3).Draw(t, "records"))
				b := BatchMeta{FirstSeq: first, LastSeq: last, FirstOffset: logEnd, LastOffset: logEnd + n - 1, TimestampMs: clockMs}
				logEnd += n
				s.Update(pid, epoch, b, txnl)
				md.update(pid, epoch, b, txnl)
			},
			"coordinator": func(t *rapid.T) {
				pid := base.ProducerID(rapid.IntRange(1, 3).Draw(t, "pid"))
				epoch := int16(rapid.IntRange(0, 3).Draw(t, "epoch"))
				txnl := rapid.Bool().Draw(t, "transactional")
				code := int16(0)
				if m, ok := md[pid]; ok && epoch < m.epoch {
					code = CodeInvalidProducerEpoch
				} else if ok && m.txnOpen && !txnl {
					code = CodeInvalidTxnState
				}
				wantCode(s.CheckCoordinator(pid, epoch, txnl), code, "CheckCoordinator")
				if code != 0 {
					return
				}
				clockMs += rapid.Int64Range(0, 10).Draw(t, "dt")
				s.UpdateCoordinator(pid, epoch, logEnd, clockMs, txnl)
				m := md.get(pid, epoch)
				m.lastTsMs = clockMs
				if txnl && !m.txnOpen {
					m.txnFirst, m.txnOpen = logEnd, true
				}
				logEnd++
			},
			"marker": func(t *rapid.T) {
				mk := Marker{
					ProducerID:       base.ProducerID(rapid.IntRange(1, 3).Draw(t, "pid")),
					Epoch:            int16(rapid.IntRange(0, 3).Draw(t, "epoch")),
					Commit:           rapid.Bool().Draw(t, "commit"),
					CoordinatorEpoch: int32(rapid.IntRange(0, 2).Draw(t, "coordinatorEpoch")),
				}
				code := md.checkMarker(mk)
				wantCode(s.CheckMarker(mk), code, "CheckMarker")
				if code != 0 {
					return
				}
				clockMs += rapid.Int64Range(0, 10).Draw(t, "dt")
				got, gotOK := s.ApplyMarker(mk, logEnd, clockMs)
				want, wantOK := md.applyMarker(mk, logEnd, clockMs)
				if got != want || gotOK != wantOK {
					t.Fatalf("ApplyMarker(%+v, %d) = %+v, %v; model %+v, %v", mk, logEnd, got, gotOK, want, wantOK)
				}
				logEnd++
			},
			"truncate": func(t *rapid.T) {
				logEnd = base.Offset(rapid.Int64Range(0, int64(logEnd)).Draw(t, "to"))
				s.TruncateTo(logEnd)
				md.truncate(logEnd)
			},
			"expire": func(t *rapid.T) {
				now := clockMs + rapid.Int64Range(0, 20).Draw(t, "ahead")
				exp := rapid.Int64Range(0, 60).Draw(t, "expirationMs")
				s.ExpireBefore(now, exp)
				md.expire(now, exp)
			},
			"restart": func(t *rapid.T) {
				var err error
				if s, err = Restore(s.Snapshot()); err != nil {
					t.Fatalf("Restore of a fresh snapshot: %v", err)
				}
			},
			"": func(t *rapid.T) { compare(t, s, md, logEnd) },
		})
	})
}

func compare(t *rapid.T, s *State, md model, logEnd base.Offset) {
	if s.Len() != len(md) {
		t.Fatalf("%d producers, model has %d", s.Len(), len(md))
	}
	for pid, m := range md {
		e, ok := s.Entry(pid)
		w := m.window()
		if len(w) == 0 {
			w = nil
		}
		txn := OptionalOffset{}
		if m.txnOpen {
			txn = SomeOffset(m.txnFirst)
		}
		if !ok || e.Epoch != m.epoch || e.LastTimestampMs != m.lastTsMs || !slices.Equal(e.Batches, w) ||
			e.CoordinatorEpoch != m.coordEpoch || e.CurrentTxnFirstOffset != txn {
			t.Fatalf("producer %d: %+v, %v; model %+v window %+v", pid, e, ok, *m, w)
		}
	}
	open := md.openTxns()
	if got := s.OpenTxns(); !slices.Equal(got, open) {
		t.Fatalf("OpenTxns = %v, model %v", got, open)
	}
	wantLSO := logEnd
	for _, o := range open {
		wantLSO = min(wantLSO, o.FirstOffset)
	}
	if got := s.LastStable(0, logEnd); got != wantLSO {
		t.Fatalf("LastStable = %d, model %d", got, wantLSO)
	}
}

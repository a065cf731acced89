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
}

func (m *modelProducer) window() []BatchMeta { return m.hist[m.windowStart:] }

type model map[base.ProducerID]*modelProducer

// check restates Kafka's rules as a list of cases, in Kafka's order.
func (md model) check(pid base.ProducerID, epoch int16, first, last int32) (Verdict, int16) {
	m, ok := md[pid]
	switch {
	case !ok:
		return Verdict{Kind: Append}, 0
	case epoch < m.epoch:
		return Verdict{}, CodeInvalidProducerEpoch
	case epoch > m.epoch && first == 0:
		return Verdict{Kind: Append}, 0
	case epoch > m.epoch:
		return Verdict{}, CodeOutOfOrderSequenceNumber
	}
	for _, b := range m.window() {
		if b.FirstSeq == first && b.LastSeq == last {
			return Verdict{Kind: Duplicate, Original: b}, 0
		}
	}
	if int64(first) == (int64(m.hist[len(m.hist)-1].LastSeq)+1)%(math.MaxInt32+1) {
		return Verdict{Kind: Append}, 0
	}
	return Verdict{}, CodeOutOfOrderSequenceNumber
}

func (md model) update(pid base.ProducerID, epoch int16, b BatchMeta) {
	m, ok := md[pid]
	if !ok || m.epoch != epoch {
		m = &modelProducer{epoch: epoch}
		md[pid] = m
	}
	m.hist = append(m.hist, b)
	m.windowStart = max(m.windowStart, len(m.hist)-MaxBatches)
	m.lastTsMs = b.TimestampMs
}

func (md model) truncate(o base.Offset) {
	for pid, m := range md {
		for len(m.hist) > 0 && m.hist[len(m.hist)-1].LastOffset >= o {
			m.hist = m.hist[:len(m.hist)-1]
		}
		if len(m.hist) <= m.windowStart {
			delete(md, pid)
			continue
		}
		m.lastTsMs = m.hist[len(m.hist)-1].TimestampMs
	}
}

func (md model) expire(nowMs, expirationMs int64) {
	for pid, m := range md {
		if nowMs-m.lastTsMs >= expirationMs {
			delete(md, pid)
		}
	}
}

func wrapSeq(seq int64) int32 { return int32(seq % (math.MaxInt32 + 1)) }

func TestStateAgainstModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, md := New(), model{}
		logEnd, clockMs := base.Offset(0), int64(0)
		t.Repeat(map[string]func(*rapid.T){
			"produce": func(t *rapid.T) {
				pid := base.ProducerID(rapid.IntRange(1, 3).Draw(t, "pid"))
				count := rapid.Int32Range(1, 3).Draw(t, "count")
				var epoch int16
				var first, last int32
				dup := false
				if m, ok := md[pid]; ok {
					epoch = max(0, m.epoch+int16(rapid.IntRange(-1, 1).Draw(t, "epochDelta")))
					w := m.window()
					switch rapid.IntRange(0, 3).Draw(t, "seqMode") {
					case 0:
						first = wrapSeq(int64(m.hist[len(m.hist)-1].LastSeq) + 1)
					case 1:
						b := w[rapid.IntRange(0, len(w)-1).Draw(t, "dup")]
						first, last, dup = b.FirstSeq, b.LastSeq, true
					case 2:
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
				wantV, wantCode := md.check(pid, epoch, first, last)
				v, err := s.Check(pid, epoch, first, last)
				var ce *CodeError
				if wantCode != 0 {
					if !errors.As(err, &ce) || ce.Code != wantCode {
						t.Fatalf("Check(%d, %d, %d, %d) = %+v, %v; want code %d", pid, epoch, first, last, v, err, wantCode)
					}
					return
				}
				if err != nil || v != wantV {
					t.Fatalf("Check(%d, %d, %d, %d) = %+v, %v; want %+v", pid, epoch, first, last, v, err, wantV)
				}
				if v.Kind == Duplicate {
					return
				}
				clockMs += rapid.Int64Range(0, 10).Draw(t, "dt")
				n := base.Offset(rapid.IntRange(1, 3).Draw(t, "records"))
				b := BatchMeta{FirstSeq: first, LastSeq: last, FirstOffset: logEnd, LastOffset: logEnd + n - 1, TimestampMs: clockMs}
				logEnd += n
				s.Update(pid, epoch, b)
				md.update(pid, epoch, b)
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
			"": func(t *rapid.T) { compare(t, s, md) },
		})
	})
}

func compare(t *rapid.T, s *State, md model) {
	if s.Len() != len(md) {
		t.Fatalf("%d producers, model has %d", s.Len(), len(md))
	}
	for pid, m := range md {
		e, ok := s.Entry(pid)
		if !ok || e.Epoch != m.epoch || e.LastTimestampMs != m.lastTsMs || !slices.Equal(e.Batches, m.window()) {
			t.Fatalf("producer %d: %+v, %v; model epoch %d batches %+v ts %d", pid, e, ok, m.epoch, m.window(), m.lastTsMs)
		}
	}
}

package producers

import (
	"errors"
	"math"
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

// fixture: producer 1 at epoch 3 has appended six batches (the first has
// left the window); producer 2 ends at MaxInt32; producer 3 has a batch
// whose sequences wrap.
func fixture() (*State, []BatchMeta) {
	s := New()
	seqs := [][2]int32{{0, 1}, {2, 2}, {3, 5}, {6, 6}, {7, 9}, {10, 10}}
	var metas []BatchMeta
	off := base.Offset(100)
	for i, q := range seqs {
		n := base.Offset(q[1] - q[0])
		b := BatchMeta{FirstSeq: q[0], LastSeq: q[1], FirstOffset: off, LastOffset: off + n, TimestampMs: int64(1000 + i)}
		s.Update(1, 3, b, false)
		metas = append(metas, b)
		off += n + 1
	}
	s.Update(2, 0, BatchMeta{FirstSeq: math.MaxInt32 - 1, LastSeq: math.MaxInt32, FirstOffset: 200, LastOffset: 201}, false)
	s.Update(3, 0, BatchMeta{FirstSeq: math.MaxInt32 - 1, LastSeq: 1, FirstOffset: 202, LastOffset: 205}, false)
	return s, metas
}

func TestCheck(t *testing.T) {
	_, metas := fixture()
	for _, tc := range []struct {
		name        string
		pid         base.ProducerID
		epoch       int16
		first, last int32
		want        VerdictKind
		original    BatchMeta
		wantErr     error
	}{
		{"unknown producer at 0", 9, 0, 0, 4, Append, BatchMeta{}, nil},
		{"unknown producer at any sequence", 9, 7, 42, 50, Append, BatchMeta{}, nil},
		{"next in sequence", 1, 3, 11, 12, Append, BatchMeta{}, nil},
		{"gap", 1, 3, 12, 12, 0, BatchMeta{}, ErrOutOfOrderSequence},
		{"duplicate of the last batch", 1, 3, 10, 10, Duplicate, metas[5], nil},
		{"duplicate of the oldest cached batch", 1, 3, 2, 2, Duplicate, metas[1], nil},
		{"batch that left the window", 1, 3, 0, 1, 0, BatchMeta{}, ErrOutOfOrderSequence},
		{"same first sequence, other last", 1, 3, 7, 8, 0, BatchMeta{}, ErrOutOfOrderSequence},
		{"older epoch", 1, 2, 11, 11, 0, BatchMeta{}, ErrInvalidProducerEpoch},
		{"older epoch, even a duplicate", 1, 2, 10, 10, 0, BatchMeta{}, ErrInvalidProducerEpoch},
		{"new epoch from 0", 1, 4, 0, 3, Append, BatchMeta{}, nil},
		{"new epoch not from 0", 1, 4, 11, 11, 0, BatchMeta{}, ErrOutOfOrderSequence},
		{"new epoch is never a duplicate", 1, 4, 10, 10, 0, BatchMeta{}, ErrOutOfOrderSequence},
		{"wraps from MaxInt32 to 0", 2, 0, 0, 5, Append, BatchMeta{}, nil},
		{"no 1 after MaxInt32", 2, 0, 1, 5, 0, BatchMeta{}, ErrOutOfOrderSequence},
		{"follows a wrapped batch", 3, 0, 2, 2, Append, BatchMeta{}, nil},
		{"negative sequence", 1, 3, -1, 0, 0, BatchMeta{}, ErrInvalidRecord},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := fixture()
			before := s.Snapshot()
			v, err := s.Check(tc.pid, tc.epoch, tc.first, tc.last, false)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Check = %v, %v; want error %v", v, err, tc.wantErr)
				}
				var ce *CodeError
				if !errors.As(err, &ce) || ce.Code != tc.wantErr.(*CodeError).Code {
					t.Fatalf("error %v does not carry code %d", err, tc.wantErr.(*CodeError).Code)
				}
			} else if err != nil || v.Kind != tc.want || v.Original != tc.original {
				t.Fatalf("Check = %+v, %v; want %v %+v", v, err, tc.want, tc.original)
			}
			if string(s.Snapshot()) != string(before) {
				t.Error("Check changed the state")
			}
		})
	}
}

func TestUpdateKeepsLastFiveAndResetsOnNewEpoch(t *testing.T) {
	s, metas := fixture()
	e, _ := s.Entry(1)
	if len(e.Batches) != MaxBatches || e.Batches[0] != metas[1] || e.Batches[4] != metas[5] || e.LastTimestampMs != 1005 {
		t.Fatalf("entry = %+v", e)
	}
	b := BatchMeta{FirstSeq: 0, LastSeq: 0, FirstOffset: 300, LastOffset: 300, TimestampMs: 2000}
	s.Update(1, 4, b, false)
	e, _ = s.Entry(1)
	if e.Epoch != 4 || len(e.Batches) != 1 || e.Batches[0] != b {
		t.Fatalf("after epoch bump entry = %+v", e)
	}
}

func TestUpdatePanicsOnOffsetsGoingBack(t *testing.T) {
	s, _ := fixture()
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	s.Update(1, 3, BatchMeta{FirstSeq: 11, LastSeq: 11, FirstOffset: 50, LastOffset: 50}, false)
}

func TestTruncateTo(t *testing.T) {
	s, metas := fixture()
	s.TruncateTo(metas[4].LastOffset) // drops metas[4] and metas[5]
	e, ok := s.Entry(1)
	if !ok || len(e.Batches) != 3 || e.Batches[2] != metas[3] || e.LastTimestampMs != metas[3].TimestampMs {
		t.Fatalf("entry after truncate = %+v, %v", e, ok)
	}
	if v, err := s.Check(1, 3, metas[4].FirstSeq, metas[4].LastSeq, false); err != nil || v.Kind != Append {
		t.Fatalf("re-append of a truncated batch: %+v, %v", v, err)
	}
	if _, ok := s.Entry(2); ok {
		t.Error("producer 2, wholly after the truncation point, survived")
	}
	s.TruncateTo(0)
	if s.Len() != 0 {
		t.Errorf("Len after TruncateTo(0) = %d", s.Len())
	}
}

func TestExpireBefore(t *testing.T) {
	s, _ := fixture() // producer 1 last at 1005, producers 2 and 3 at 0
	s.ExpireBefore(1000, 1000)
	if _, ok := s.Entry(2); ok {
		t.Error("producer 2 idle for exactly the expiration time survived")
	}
	if _, ok := s.Entry(1); !ok {
		t.Error("producer 1 expired early")
	}
	s.ExpireBefore(2005, 1000)
	if s.Len() != 0 {
		t.Errorf("Len = %d, want 0", s.Len())
	}
}

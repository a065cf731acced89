package base

import "testing"

func TestEndOffsetForEpoch(t *testing.T) {
	lineage := []EpochStart{{Epoch: 2, Start: 10}, {Epoch: 4, Start: 25}, {Epoch: 7, Start: 40}}
	const logEnd = 55
	for _, tc := range []struct {
		asked     Epoch
		wantEpoch Epoch
		wantEnd   Offset
		wantOK    bool
	}{
		{asked: 7, wantEpoch: 7, wantEnd: logEnd, wantOK: true}, // the latest: the log end
		{asked: 8, wantOK: false},                               // above the latest: undefined
		{asked: 4, wantEpoch: 4, wantEnd: 40, wantOK: true},
		{asked: 5, wantEpoch: 4, wantEnd: 40, wantOK: true}, // between: the epoch below
		{asked: 6, wantEpoch: 4, wantEnd: 40, wantOK: true},
		{asked: 2, wantEpoch: 2, wantEnd: 25, wantOK: true},
		{asked: 3, wantEpoch: 2, wantEnd: 25, wantOK: true},
		{asked: 1, wantEpoch: 1, wantEnd: 10, wantOK: true}, // below all: the first start
	} {
		e, end, ok := EndOffsetForEpoch(lineage, logEnd, tc.asked)
		if ok != tc.wantOK || (ok && (e != tc.wantEpoch || end != tc.wantEnd)) {
			t.Errorf("EndOffsetForEpoch(%d) = %d, %d, %v; want %d, %d, %v", tc.asked, e, end, ok, tc.wantEpoch, tc.wantEnd, tc.wantOK)
		}
	}
	if _, _, ok := EndOffsetForEpoch(nil, 0, 0); ok {
		t.Error("an empty lineage answered")
	}
}

func TestEndOffsetForEpochEmptyEpochs(t *testing.T) {
	// Epoch 3 was led without an append (the partition cache keeps such an
	// entry), and epoch 5 is the current, still empty, epoch.
	lineage := []EpochStart{{Epoch: 1, Start: 0}, {Epoch: 3, Start: 8}, {Epoch: 4, Start: 8}, {Epoch: 5, Start: 12}}
	for _, tc := range []struct {
		asked, wantEpoch Epoch
		wantEnd          Offset
	}{
		{3, 3, 8}, {2, 1, 8}, {4, 4, 12}, {5, 5, 12},
	} {
		e, end, ok := EndOffsetForEpoch(lineage, 12, tc.asked)
		if !ok || e != tc.wantEpoch || end != tc.wantEnd {
			t.Errorf("EndOffsetForEpoch(%d) = %d, %d, %v; want %d, %d", tc.asked, e, end, ok, tc.wantEpoch, tc.wantEnd)
		}
	}
}

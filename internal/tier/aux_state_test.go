package tier

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// A follower rebuilding its state reads back what the copier uploaded
// with the segment: the leader-epoch checkpoint (as the quorum's epochs)
// and the producer snapshot; a segment uploaded without a snapshot has
// none, and a segment not COPY_FINISHED is not read.
func TestSegmentStateReadsWhatTheCopierUploaded(t *testing.T) {
	l := newTestLog(t, 30, 1<<20)
	r := newRig(t, objstore.NewMem())
	local := LocalSegmentsOf(l.Segments())[0]
	epochs := []base.EpochStart{{Epoch: 3, Start: 0}, {Epoch: 5, Start: 10}}
	task := CopyTask{Segment: local, Range: local.Range(), LeaderEpochs: epochs}
	seg, err := r.copier.Copy(t.Context(), task, fullSource(l), testTopicID, testTP, 5)
	if err != nil {
		t.Fatal(err)
	}
	gotEpochs, snap, err := r.reader.SegmentState(t.Context(), seg)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gotEpochs, epochs) || string(snap) != fmt.Sprintf("snapshot at %d", local.NextOffset) {
		t.Fatalf("SegmentState = %v, %q", gotEpochs, snap)
	}

	r2 := newRig(t, objstore.NewMem())
	bare, err := r2.copier.Copy(t.Context(), task, LogSource{Log: l}, testTopicID, testTP, 5)
	if err != nil {
		t.Fatal(err)
	}
	if _, snap, err := r2.reader.SegmentState(t.Context(), bare); err != nil || snap != nil {
		t.Fatalf("a segment uploaded without a snapshot: %q, %v", snap, err)
	}
	started := seg
	started.State = remotemeta.CopyStarted
	if _, _, err := r.reader.SegmentState(t.Context(), started); !errors.Is(err, ErrNotReadable) {
		t.Fatalf("a COPY_STARTED segment: %v, want ErrNotReadable", err)
	}
}

// A checkpoint that breaks its format or its segment's bounds, or is
// larger than its segment allows, is ErrCorruptObject naming the key.
func TestSegmentStateRefusesACorruptCheckpoint(t *testing.T) {
	seg := remotemeta.RemoteSegment{
		ID: remotemeta.SegmentID{7}, TopicID: testTopicID, TP: testTP, State: remotemeta.CopyFinished,
		Range: base.Range{Start: 100, End: 200}, SizeBytes: 4096,
		LeaderEpochs: []base.EpochStart{{Epoch: 1, Start: 100}},
	}
	for name, body := range map[string]string{
		"version":               "1\n1\n1 100\n",
		"count":                 "0\n2\n1 100\n",
		"entry":                 "0\n1\n1\n",
		"negative epoch":        "0\n1\n-1 100\n",
		"below the range":       "0\n1\n1 99\n",
		"past the range":        "0\n1\n1 200\n",
		"epochs repeat":         "0\n2\n1 100\n1 150\n",
		"starts repeat":         "0\n2\n1 100\n2 100\n",
		"larger than size":      "0\n1\n1 100\n" + strings.Repeat(" ", 1<<20),
		"one line":              "0\n",
		"epoch not a number":    "0\n1\nx 100\n",
		"start not a number":    "0\n1\n1 y\n",
		"a byte past the bound": padded("0\n1\n1 100", checkpointBound(seg)+1),
	} {
		store := objstore.NewMem()
		key := SegmentKey(seg, SuffixLeaderEpoch)
		if err := store.Put(t.Context(), key, bytes.NewReader([]byte(body)), int64(len(body))); err != nil {
			t.Fatal(err)
		}
		_, _, err := (&Reader{Store: store}).SegmentState(t.Context(), seg)
		if !errors.Is(err, ErrCorruptObject) || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: %v, want ErrCorruptObject naming %s", name, err, key)
		}
	}
}

// checkpointBound is the size a checkpoint of seg may have: a header and a
// line for each offset of the segment, or each byte and one, if fewer.
func checkpointBound(seg remotemeta.RemoteSegment) int {
	lines := min(int(seg.Range.End-seg.Range.Start), int(seg.SizeBytes)+1)
	return 32 + lines*42
}

// padded is body with spaces after it, n bytes in all.
func padded(body string, n int) string {
	return body + strings.Repeat(" ", n-len(body))
}

// TestSegmentStateReadsACheckpointAtItsBounds: epoch 0, no entries, and a
// checkpoint of exactly the size its segment allows (by its offsets, or by
// its bytes when it has fewer) are read.
func TestSegmentStateReadsACheckpointAtItsBounds(t *testing.T) {
	wide := remotemeta.RemoteSegment{
		ID: remotemeta.SegmentID{7}, TopicID: testTopicID, TP: testTP, State: remotemeta.CopyFinished,
		Range: base.Range{Start: 100, End: 200}, SizeBytes: 4096,
	}
	small := wide
	small.SizeBytes = 10
	for _, tc := range []struct {
		name string
		seg  remotemeta.RemoteSegment
		body string
		want []base.EpochStart
	}{
		{"epoch 0", wide, "0\n1\n0 100\n", []base.EpochStart{{Epoch: 0, Start: 100}}},
		{"no entries", wide, "0\n0\n", nil},
		{"at the bound by offsets", wide, padded("0\n1\n1 150", checkpointBound(wide)), []base.EpochStart{{Epoch: 1, Start: 150}}},
		{"at the bound by bytes", small, padded("0\n1\n1 150", checkpointBound(small)), []base.EpochStart{{Epoch: 1, Start: 150}}},
	} {
		store := objstore.NewMem()
		key := SegmentKey(tc.seg, SuffixLeaderEpoch)
		if err := store.Put(t.Context(), key, strings.NewReader(tc.body), int64(len(tc.body))); err != nil {
			t.Fatal(err)
		}
		got, _, err := (&Reader{Store: store}).SegmentState(t.Context(), tc.seg)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: SegmentState = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}

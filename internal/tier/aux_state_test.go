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
		"version":          "1\n1\n1 100\n",
		"count":            "0\n2\n1 100\n",
		"entry":            "0\n1\n1\n",
		"negative epoch":   "0\n1\n-1 100\n",
		"below the range":  "0\n1\n1 99\n",
		"past the range":   "0\n1\n1 200\n",
		"epochs repeat":    "0\n2\n1 100\n1 150\n",
		"starts repeat":    "0\n2\n1 100\n2 100\n",
		"larger than size": "0\n1\n1 100\n" + strings.Repeat(" ", 1<<20),
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

package tier

import (
	"bytes"
	"io"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

var testTP = base.TopicPartition{Topic: "t", Partition: 0}

func sid(n int) remotemeta.SegmentID {
	var id remotemeta.SegmentID
	id[14], id[15] = byte(n>>8), byte(n)
	id[0] = 0xAA // never zero
	return id
}

func rng(start, end base.Offset) base.Range { return base.Range{Start: start, End: end} }

// rseg is a remote segment of epoch 0 (or the given epochs).
func rseg(n int, start, end base.Offset, size int64, st remotemeta.State, epochs ...base.EpochStart) remotemeta.RemoteSegment {
	if len(epochs) == 0 {
		epochs = []base.EpochStart{{Epoch: 0, Start: start}}
	}
	return remotemeta.RemoteSegment{
		ID: sid(n), TP: testTP, Range: rng(start, end), LeaderEpochs: epochs,
		SizeBytes: size, MaxTimestampMs: int64(end), State: st,
	}
}

func mustView(segs ...remotemeta.RemoteSegment) PartitionView {
	v, err := NewPartitionView(segs)
	if err != nil {
		panic(err)
	}
	return v
}

var epoch0 = []base.EpochStart{{Epoch: 0, Start: 0}}

// mustPanic fails t unless f panics; what names the case.
func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", what)
		}
	}()
	f()
}

func lseg(start, end base.Offset, size int64) LocalSegment {
	return LocalSegment{BaseOffset: start, NextOffset: end, SizeBytes: size, MaxTimestampMs: int64(end)}
}

func active(start, end base.Offset, size int64) LocalSegment {
	s := lseg(start, end, size)
	s.Active = true
	return s
}

// es is one lineage entry: epoch starts at offset start.
func es(epoch base.Epoch, start base.Offset) base.EpochStart {
	return base.EpochStart{Epoch: epoch, Start: start}
}

// readObject reads the whole object at key of s.
func readObject(t *testing.T, s objstore.Store, key string) ([]byte, error) {
	t.Helper()
	rc, _, err := s.Get(t.Context(), key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// getObject is the whole object at key of s, which must be there.
func getObject(t *testing.T, s objstore.Store, key string) []byte {
	t.Helper()
	b, err := readObject(t, s, key)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// putObject writes b at key of s.
func putObject(t *testing.T, s objstore.Store, key string, b []byte) {
	t.Helper()
	if err := s.Put(t.Context(), key, bytes.NewReader(b), int64(len(b))); err != nil {
		t.Fatal(err)
	}
}

// putLogOnly writes obj as seg's .log, with empty offset and time indexes
// (as the indexes of a segment smaller than an index interval, less its
// closing time index entry).
func putLogOnly(t *testing.T, s objstore.Store, seg remotemeta.RemoteSegment, obj []byte) {
	t.Helper()
	putObject(t, s, SegmentKey(seg, SuffixLog), obj)
	putObject(t, s, SegmentKey(seg, SuffixIndex), nil)
	putObject(t, s, SegmentKey(seg, SuffixTimeIndex), nil)
}

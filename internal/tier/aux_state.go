package tier

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// Limits on the objects a follower downloads to rebuild its state (KIP-405
// auxiliary state): a checkpoint holds at most one line per epoch of its
// segment, and no producer snapshot of a sane partition comes near the
// snapshot limit; a bigger object is corrupt and is not read into memory.
const (
	checkpointLineMaxBytes   int64 = 2*20 + 2 // two int64s, a space and a newline
	checkpointHeaderBytes    int64 = 32
	producerSnapshotMaxBytes int64 = 256 << 20
)

// SegmentState returns what a follower rebuilds its state from at the end
// of COPY_FINISHED segment seg (Kafka's TierStateMachine reads the same
// two objects): its leader-epoch checkpoint, decoded and checked against
// seg (Kafka's text format; every entry inside seg.Range, ascending), and
// its producer-state snapshot as uploaded, nil when the upload had none
// (its content is checked by the partition that restores it). An object
// that fails a check is an error wrapping ErrCorruptObject that names its
// key. A segment in any other state is ErrNotReadable.
func (r *Reader) SegmentState(ctx context.Context, seg remotemeta.RemoteSegment) ([]base.EpochStart, []byte, error) {
	if seg.State != remotemeta.CopyFinished {
		return nil, nil, fmt.Errorf("%w: state of %v segment %v", ErrNotReadable, seg.State, seg.ID)
	}
	key := SegmentKey(seg, SuffixLeaderEpoch)
	limit := checkpointHeaderBytes + min(int64(seg.Range.End-seg.Range.Start), seg.SizeBytes+1)*checkpointLineMaxBytes
	b, err := r.getObject(ctx, key, limit)
	if err != nil {
		return nil, nil, err
	}
	epochs, err := decodeLeaderEpochCheckpoint(key, b, seg.Range)
	if err != nil {
		return nil, nil, err
	}
	snapshot, err := r.getObject(ctx, SegmentKey(seg, SuffixSnapshot), producerSnapshotMaxBytes)
	if errors.Is(err, objstore.ErrNotFound) {
		return epochs, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return epochs, snapshot, nil
}

// getObject reads the whole object under key, which must be at most limit
// bytes.
func (r *Reader) getObject(ctx context.Context, key string, limit int64) ([]byte, error) {
	rc, size, err := r.Store.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("tier: get %s: %w", key, err)
	}
	defer rc.Close()
	if size > limit {
		return nil, corruptf(key, "%d bytes, more than the %d such an object may have", size, limit)
	}
	b, err := readFull(rc, size)
	if err != nil {
		return nil, fmt.Errorf("tier: read %s: %w", key, err)
	}
	return b, nil
}

// decodeLeaderEpochCheckpoint is the gateway for a checkpoint object
// (encodeLeaderEpochCheckpoint's format): version 0, the entry count, then
// that many "epoch startOffset" lines, epochs and starts strictly
// ascending, every start inside rng.
func decodeLeaderEpochCheckpoint(key string, b []byte, rng base.Range) ([]base.EpochStart, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	var lines []string
	for sc.Scan() {
		lines = append(lines, strings.TrimSpace(sc.Text()))
	}
	if err := sc.Err(); err != nil {
		return nil, corruptf(key, "%v", err)
	}
	if len(lines) < 2 || lines[0] != "0" {
		return nil, corruptf(key, "not a version 0 leader-epoch checkpoint")
	}
	n, err := strconv.Atoi(lines[1])
	if err != nil || n != len(lines)-2 {
		return nil, corruptf(key, "entry count %q for %d entries", lines[1], len(lines)-2)
	}
	out := make([]base.EpochStart, 0, n)
	for i, l := range lines[2:] {
		f := strings.Fields(l)
		if len(f) != 2 {
			return nil, corruptf(key, "entry %d: %q", i, l)
		}
		e, eerr := strconv.ParseInt(f[0], 10, 32)
		o, oerr := strconv.ParseInt(f[1], 10, 64)
		switch {
		case eerr != nil || oerr != nil || e < 0:
			return nil, corruptf(key, "entry %d: %q", i, l)
		case !rng.Contains(base.Offset(o)):
			return nil, corruptf(key, "entry %d starts at %d, outside the segment %v", i, o, rng)
		case i > 0 && (base.Epoch(e) <= out[i-1].Epoch || base.Offset(o) <= out[i-1].Start):
			return nil, corruptf(key, "entry %d %q not above the one before", i, l)
		}
		out = append(out, base.EpochStart{Epoch: base.Epoch(e), Start: base.Offset(o)})
	}
	return out, nil
}

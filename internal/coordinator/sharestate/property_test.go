package sharestate

import (
	"bytes"
	"maps"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
)

// The share-partitions the property test drives: two groups, a topic of two
// partitions, one of one, and one that metadata does not know, each with
// partitions 0 to 2 (some of which do not exist).
var (
	propGroups = []string{"g", "h"}
	propTopics = [][16]byte{topicA, topicB, topicGone}
)

func drawKey(rt *rapid.T) partitionKey {
	return partitionKey{
		group:     rapid.SampledFrom(propGroups).Draw(rt, "group"),
		topicID:   rapid.SampledFrom(propTopics).Draw(rt, "topic"),
		partition: int32(rapid.IntRange(0, 2).Draw(rt, "partition")),
	}
}

func allPropKeys() []partitionKey {
	var out []partitionKey
	for _, g := range propGroups {
		for _, id := range propTopics {
			for p := range int32(3) {
				out = append(out, partitionKey{g, id, p})
			}
		}
	}
	return out
}

// offsetModel is what a share-partition's batches must hold, offset by
// offset: every batch written since its last initialize, the highest
// ranked one winning, minus the offsets below the start offset of each
// write.
type offsetModel map[partitionKey]map[base.Offset]rank

func (m offsetModel) write(k partitionKey, batches []stateBatch, start optional[base.Offset]) {
	merged := modelCombine(start, batches)
	for o, r := range m[k] {
		if start.ok && o < start.v {
			continue
		}
		if nr, ok := merged[o]; !ok || r.outranks(nr) {
			merged[o] = r
		}
	}
	m[k] = merged
}

// TestPropertyReplayMatchesLive: for random requests, reloads and clock
// moves, (1) the invariants of doc.go hold after every step; (2) every
// successful Read answers the per-offset model of the writes; (3) a fresh
// coordinator replaying every record holds the live one's state and
// answers every later Read and ReadSummary, and writes every record, alike.
func TestPropertyReplayMatchesLive(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		h := newHarness(rt)
		model := offsetModel{}
		for range rapid.IntRange(1, 120).Draw(rt, "steps") {
			step(rt, h, model)
			checkInvariants(rt, h.c)
		}
		loaded := &harness{tb: rt, opts: h.opts, c: replayAll(rt, h.opts, h.records), now: h.now}
		if live, got := snapshotOf(h.c), snapshotOf(loaded.c); !maps.Equal(live, got) {
			rt.Fatalf("replay differs:\nlive   %v\nloaded %v", live, got)
		}
		checkInvariants(rt, loaded.c)
		for _, k := range allPropKeys() {
			epoch := int32(rapid.IntRange(-1, 7).Draw(rt, "finalLeaderEpoch"))
			sameAnswers(rt, h, loaded, readReq(k.group, k.topicID, k.partition, epoch))
			sameAnswers(rt, h, loaded, summaryReq(1, k.group, k.topicID, k.partition))
		}
	})
}

// sameAnswers sends req to both harnesses and compares the responses and
// the records, byte for byte.
func sameAnswers(rt *rapid.T, live, loaded *harness, req kmsg.Request) {
	nLive, nLoaded := len(live.records), len(loaded.records)
	a, b := live.do(req).AppendTo(nil), loaded.do(req).AppendTo(nil)
	if !bytes.Equal(a, b) {
		rt.Fatalf("%T answered differently:\nlive   %x\nloaded %x", req, a, b)
	}
	ra, rb := live.records[nLive:], loaded.records[nLoaded:]
	if len(ra) != len(rb) {
		rt.Fatalf("%T wrote %d records live, %d loaded", req, len(ra), len(rb))
	}
	for i := range ra {
		if !bytes.Equal(ra[i].Key, rb[i].Key) || !bytes.Equal(ra[i].Value, rb[i].Value) {
			rt.Fatalf("%T wrote different records: %x/%x vs %x/%x", req, ra[i].Key, ra[i].Value, rb[i].Key, rb[i].Value)
		}
	}
}

func drawEpoch(rt *rapid.T, label string) int32 {
	return int32(rapid.IntRange(-1, 6).Draw(rt, label))
}

func drawWireStart(rt *rapid.T) int64 {
	return rapid.SampledFrom([]int64{-1, -1, 0, 5, 10, 20, 30, 45, -2}).Draw(rt, "start")
}

func step(rt *rapid.T, h *harness, model offsetModel) {
	k := drawKey(rt)
	switch rapid.IntRange(0, 11).Draw(rt, "op") {
	case 0, 1:
		if h.initialize(k.group, k.topicID, k.partition, drawEpoch(rt, "stateEpoch"), drawWireStart(rt)) == 0 {
			model[k] = map[base.Offset]rank{}
		}
	case 2, 3, 4, 5:
		stepWrite(rt, h, model, k)
	case 6, 7:
		r := h.read(k.group, k.topicID, k.partition, drawEpoch(rt, "leaderEpoch"))
		if r.ErrorCode == 0 && !equalRanks(expand(batchesOf(r)), model[k]) {
			rt.Fatalf("%s reads %v, the model holds %v", k, batchesOf(r), model[k])
		}
	case 8:
		h.summary(int16(rapid.IntRange(0, 1).Draw(rt, "summaryVersion")), k.group, k.topicID, k.partition)
	case 9:
		if h.deleteState(k.group, k.topicID, k.partition) == 0 {
			delete(model, k)
		}
	case 10:
		h.reload()
	case 11:
		h.now = h.now.Add(time.Duration(rapid.IntRange(0, 5000).Draw(rt, "advanceMs")) * time.Millisecond)
		h.absorb(h.c.Tick(h.now))
	}
}

func stepWrite(rt *rapid.T, h *harness, model offsetModel, k partitionKey) {
	w := writeArgs{
		version:          int16(rapid.IntRange(0, 1).Draw(rt, "writeVersion")),
		group:            k.group,
		topic:            k.topicID,
		partition:        k.partition,
		stateEpoch:       drawEpoch(rt, "stateEpoch"),
		leaderEpoch:      drawEpoch(rt, "leaderEpoch"),
		start:            drawWireStart(rt),
		deliveryComplete: int32(rapid.IntRange(-1, 20).Draw(rt, "deliveryComplete")),
		batches:          drawBatches(rt, "batches"),
	}
	if h.write(w) != 0 {
		return
	}
	start := h.c.states[k].start
	model.write(k, w.batches, start)
}

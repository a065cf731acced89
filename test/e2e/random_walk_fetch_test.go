package e2e

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetchWalker is a consumer reading the walk topic with Fetch sessions
// (KIP-227): it opens a session with a full fetch, then sends only what
// changed (a partition whose position moved, one added back) and the
// partitions it forgets, now and then closes the session or fetches
// without one. It checks what a consumer relies on: the answer holds only
// partitions the session holds, and each partition's records start with
// the batch holding the offset asked for and run on without gaps.
type fetchWalker struct {
	isolation int8
	sessionID int32
	epoch     int32           // the session's next epoch; 0 with no session
	held      map[int32]bool  // the partitions the session holds
	pos       map[int32]int64 // the next offset to read, by partition
	sent      map[int32]int64 // the offset the broker has for each held partition
	forget    []int32         // to drop from the session in the next fetch
	next      int
}

const (
	fetchNext = iota
	fetchForget
	fetchClose
	fetchSteps
)

func newFetchWalker(isolation int8) *fetchWalker {
	return &fetchWalker{isolation: isolation, held: map[int32]bool{}, pos: map[int32]int64{}, sent: map[int32]int64{}}
}

func (f *fetchWalker) step(w *walker) {
	switch w.pick(f.next, fetchSteps) {
	case fetchNext:
		f.fetch(w, false)
	case fetchForget:
		if held := f.heldPartitions(); len(held) > 0 && f.sessionID != 0 {
			f.forget = append(f.forget, held[w.rng.IntN(len(held))])
		}
		f.fetch(w, false)
	case fetchClose:
		f.fetch(w, true)
	}
}

func (f *fetchWalker) heldPartitions() []int32 {
	var out []int32
	for p := range f.held {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// fetch sends the session's next fetch: full (opening a session, or
// without one), incremental, or closing the session (close).
func (f *fetchWalker) fetch(w *walker, close bool) {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.IsolationLevel = -1, f.isolation
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = int32(w.rng.IntN(100)), 1, int32(1<<10+w.rng.IntN(1<<20))
	full := f.sessionID == 0 || close
	switch {
	case close:
		req.SessionID, req.SessionEpoch = f.sessionID, -1
	case full && w.oneIn(4):
		req.SessionEpoch = -1 // no session
	case full:
		req.SessionEpoch = 0
	default:
		req.SessionID, req.SessionEpoch = f.sessionID, f.epoch
	}
	// A full fetch lists most partitions, and the session's next fetches
	// add the others; an incremental one lists what the broker's copy of
	// the session lacks.
	wanted := map[int32]int64{}
	for _, p := range w.homePartitions() {
		switch {
		case full && (len(wanted) == 0 || !w.oneIn(4)):
			wanted[p] = f.pos[p]
		case full, slices.Contains(f.forget, p):
		case !f.held[p] || f.pos[p] != f.sent[p]:
			wanted[p] = f.pos[p]
		}
	}
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = walkTopic, w.env.topicID
	for _, p := range sortedKeys(wanted) {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.CurrentLeaderEpoch, rp.LogStartOffset = p, wanted[p], -1, -1
		rp.PartitionMaxBytes = int32(1 + w.rng.IntN(64<<10))
		rt.Partitions = append(rt.Partitions, rp)
	}
	if len(rt.Partitions) > 0 {
		req.Topics = append(req.Topics, rt)
	}
	if !full && len(f.forget) > 0 {
		ft := kmsg.NewFetchRequestForgottenTopic()
		ft.Topic, ft.TopicID, ft.Partitions = walkTopic, w.env.topicID, f.forget
		req.ForgottenTopics = append(req.ForgottenTopics, ft)
	}
	resp, ok := w.send(req).(*kmsg.FetchResponse)
	if !ok || w.mutated || resp.ErrorCode != 0 {
		f.reset() // what the broker holds of the session is unknown
		return
	}
	f.answered(w, req, wanted, full, resp)
}

func (f *fetchWalker) reset() {
	f.sessionID, f.epoch, f.forget = 0, 0, nil
	clear(f.held)
	clear(f.sent)
}

// answered moves the session on after a clean answer to req and checks
// the answer against it.
func (f *fetchWalker) answered(w *walker, req *kmsg.FetchRequest, wanted map[int32]int64, full bool, resp *kmsg.FetchResponse) {
	sessionless := req.Version < 7 || req.SessionEpoch == -1 || resp.SessionID == 0
	switch {
	case sessionless || full:
		f.reset()
		if !sessionless {
			f.sessionID, f.epoch = resp.SessionID, 1
		}
	case f.epoch == math.MaxInt32:
		f.epoch = 1
	default:
		f.epoch++
	}
	for _, p := range f.forget {
		delete(f.held, p)
		delete(f.sent, p)
	}
	f.forget = nil
	for p, o := range wanted {
		f.held[p], f.sent[p] = true, o
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if !f.held[rp.Partition] {
				w.fail("%s (seed %d): Fetch v%d (session %d epoch %d) answered partition %d, which the session does not hold (it holds %v): %s",
					w.name, w.env.seed, req.Version, req.SessionID, req.SessionEpoch, rp.Partition, f.heldPartitions(), requestJSON(req))
				return
			}
			f.partitionAnswered(w, req, rp)
		}
	}
	if sessionless {
		f.reset() // the partitions were held for this answer only
	}
	f.next = fetchNext
	if w.oneIn(10) {
		f.next = []int{fetchForget, fetchClose}[w.rng.IntN(2)]
	}
}

// partitionAnswered checks one partition's records: the first batch holds
// the offset asked for, the batches follow one another without a gap
// (the walk topic is neither compacted nor trimmed); the position moves
// past the last whole batch.
func (f *fetchWalker) partitionAnswered(w *walker, req *kmsg.FetchRequest, rp kmsg.FetchResponseTopicPartition) {
	asked := f.sent[rp.Partition]
	switch kerr.ErrorForCode(rp.ErrorCode) {
	case nil:
	case kerr.OffsetOutOfRange:
		f.pos[rp.Partition] = max(0, rp.LogStartOffset)
		return
	default:
		return
	}
	expect := asked
	for i, b := range batchSpans(rp.RecordBatches) {
		if i == 0 && (b.base > asked || b.last < asked) || i > 0 && b.base != expect {
			w.fail("%s (seed %d): Fetch v%d of partition %d at offset %d answered batches %v (isolation %d, session %d epoch %d)",
				w.name, w.env.seed, req.Version, rp.Partition, asked, batchSpans(rp.RecordBatches), req.IsolationLevel, req.SessionID, req.SessionEpoch)
			return
		}
		expect = b.last + 1
		w.env.batchesChecked.Add(1)
	}
	f.pos[rp.Partition] = expect
}

// batchSpan is the offsets a record batch covers.
type batchSpan struct{ base, last int64 }

// batchSpans lists the whole batches of a Fetch answer's records (a
// partial batch may end them).
func batchSpans(records []byte) []batchSpan {
	var out []batchSpan
	for len(records) >= 61 { // a v2 batch header
		length := int(int32(binary.BigEndian.Uint32(records[8:12])))
		if length < 49 || len(records) < 12+length {
			break
		}
		base := int64(binary.BigEndian.Uint64(records[:8]))
		lastDelta := int64(int32(binary.BigEndian.Uint32(records[23:27])))
		out = append(out, batchSpan{base, base + lastDelta})
		records = records[12+length:]
	}
	return out
}

func sortedKeys[V any](m map[int32]V) []int32 {
	out := make([]int32, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

package api

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"pgregory.net/rapid"
)

func TestClassifySession(t *testing.T) {
	for _, tc := range []struct {
		id, epoch int32
		kind      sessionKind
		closes    bool
	}{
		{0, -1, sessionNone, false}, // sarama, librdkafka: sessionless
		{-1, -1, sessionNone, true}, // kafka-go's Client.Fetch: id -1 is closed, though none has it
		{7, -1, sessionNone, true},  // close session 7, fetch in full
		{0, 0, sessionOpen, false},  // open a session
		{7, 0, sessionOpen, true},   // close 7 and open another
		{7, 1, sessionIncremental, false},
		{7, 1<<31 - 1, sessionIncremental, false},
		{0, 3, sessionIncremental, false}, // id 0 is never open: FETCH_SESSION_ID_NOT_FOUND
	} {
		kind, closes := classifySession(tc.id, tc.epoch)
		if kind != tc.kind || closes != tc.closes {
			t.Errorf("classifySession(%d, %d) = %v, %v; want %v, %v", tc.id, tc.epoch, kind, closes, tc.kind, tc.closes)
		}
	}
}

func TestNextSessionEpoch(t *testing.T) {
	for _, tc := range []struct{ in, want int32 }{{0, 1}, {1, 2}, {41, 42}, {1<<31 - 1, 1}, {-1, 1}} {
		if got := nextSessionEpoch(tc.in); got != tc.want {
			t.Errorf("nextSessionEpoch(%d) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestPartitionNews(t *testing.T) {
	known := sentState{highWatermark: 10, lastStable: 10, logStart: 2}
	lsoBehind := part(10, 2, 0, nil)
	lsoBehind.LastStableOffset = 7
	withReplica := part(10, 2, 0, nil)
	withReplica.PreferredReadReplica = 3
	for _, tc := range []struct {
		name    string
		part    kmsg.FetchResponseTopicPartition
		news    bool
		nowSent sentState
	}{
		{"nothing new", part(10, 2, 0, nil), false, known},
		{"records", part(10, 2, 0, []byte{1}), true, known},
		{"high watermark moved", part(12, 2, 0, nil), true, sentState{12, 12, 2}},
		{"last stable offset moved", lsoBehind, true, sentState{10, 7, 2}},
		{"log start moved", part(10, 5, 0, nil), true, sentState{10, 10, 5}},
		{"error: sent again once it clears", part(-1, -1, kerr.NotLeaderForPartition.Code, nil), true, sentState{-1, -1, -1}},
		{"a preferred read replica", withReplica, true, known},
	} {
		news, now := partitionNews(known, &tc.part)
		if news != tc.news || now != tc.nowSent {
			t.Errorf("%s: partitionNews = %v, %+v; want %v, %+v", tc.name, news, now, tc.news, tc.nowSent)
		}
	}
	// After an error the next clean answer is news even if the offsets are
	// those the client heard before the error.
	_, afterErr := partitionNews(known, ptr(part(10, 2, kerr.UnknownTopicOrPartition.Code, nil)))
	if news, _ := partitionNews(afterErr, ptr(part(10, 2, 0, nil))); !news {
		t.Error("the answer after an error was not news")
	}
	// An error is news every time, even the same one again.
	notLeader := part(-1, -1, kerr.NotLeaderForPartition.Code, nil)
	_, errSent := partitionNews(known, &notLeader)
	if news, _ := partitionNews(errSent, &notLeader); !news {
		t.Error("a repeated error was not news")
	}
}

func TestPickEviction(t *testing.T) {
	const idle = int64(2 * time.Minute)
	now := int64(10 * time.Minute)
	recent := now - int64(time.Second)
	for _, tc := range []struct {
		name    string
		stats   []sessionStat
		newSize int
		id      int32
		ok      bool
	}{
		{"empty", nil, 5, 0, false},
		{"idle one goes first", []sessionStat{{1, recent, 1}, {2, now - idle, 50}}, 5, 2, true},
		{"least recently used of the idle", []sessionStat{{1, now - 3*idle, 9}, {2, now - 2*idle, 1}}, 5, 1, true},
		{"smallest, if smaller than the new", []sessionStat{{1, recent, 8}, {2, recent, 3}}, 5, 2, true},
		{"none smaller: refused", []sessionStat{{1, recent, 8}, {2, recent, 5}}, 5, 0, false},
		{"ties go to the lower id", []sessionStat{{9, recent, 3}, {4, recent, 3}}, 5, 4, true},
	} {
		id, ok := pickEviction(tc.stats, tc.newSize, now, idle)
		if id != tc.id || ok != tc.ok {
			t.Errorf("%s: pickEviction = %d, %v; want %d, %v", tc.name, id, ok, tc.id, tc.ok)
		}
	}
}

func TestFetchSessionLifecycle(t *testing.T) {
	clock := time.Unix(1000, 0)
	c := newFetchSessionCache(10, func() time.Time { return clock })

	full := fetchRequest(0, 0, topicParts("a", 0, 1), topicParts("b", 0))
	fc := c.begin(full, 12)
	if fc.errCode != 0 || fc.kind != sessionOpen || len(fc.wants) != 3 {
		t.Fatalf("full fetch: %+v", fc)
	}
	resp := answer(fc.wants, func(fetchWant) kmsg.FetchResponseTopicPartition { return part(5, 0, 0, nil) })
	c.finish(fc, resp)
	id := resp.SessionID
	if id <= 0 || countParts(resp) != 3 {
		t.Fatalf("full fetch opened session %d and answered %d partitions; want a session and all 3", id, countParts(resp))
	}

	// Nothing changed: an incremental fetch answers no partition.
	inc := fetchRequest(id, 1)
	fc = c.begin(inc, 12)
	if fc.errCode != 0 || len(fc.wants) != 3 {
		t.Fatalf("incremental fetch: %+v", fc)
	}
	resp = answer(fc.wants, func(fetchWant) kmsg.FetchResponseTopicPartition { return part(5, 0, 0, nil) })
	c.finish(fc, resp)
	if resp.SessionID != id || resp.ErrorCode != 0 || countParts(resp) != 0 {
		t.Fatalf("quiet incremental fetch: session %d, error %d, %d partitions", resp.SessionID, resp.ErrorCode, countParts(resp))
	}

	// a/1 moves on and gets records; b/0 is forgotten; c/0 is added.
	moved := topicParts("a", 1)
	moved.Partitions[0].FetchOffset = 42
	inc = fetchRequest(id, 2, moved, topicParts("c", 0))
	inc.ForgottenTopics = []kmsg.FetchRequestForgottenTopic{{Topic: "b", Partitions: []int32{0}}}
	fc = c.begin(inc, 12)
	if got := wantKeys(fc.wants); !slices.Equal(got, []string{"a/0", "a/1", "c/0"}) {
		t.Fatalf("session after the update: %v", got)
	}
	if fc.wants[1].offset != 42 {
		t.Fatalf("a/1 is read from %d, want the offset the incremental fetch named (42)", fc.wants[1].offset)
	}
	resp = answer(fc.wants, func(w fetchWant) kmsg.FetchResponseTopicPartition {
		if w.key.topic == "a" && w.key.partition == 1 {
			return part(9, 0, 0, []byte("records"))
		}
		return part(5, 0, 0, nil)
	})
	c.finish(fc, resp)
	if got := respKeys(resp); !slices.Equal(got, []string{"a/1", "c/0"}) {
		t.Fatalf("incremental answer: %v; want the partition with records and the new one", got)
	}
	// The partition that returned records is read last from now on.
	fc = c.begin(fetchRequest(id, 3), 12)
	if got := wantKeys(fc.wants); !slices.Equal(got, []string{"a/0", "c/0", "a/1"}) {
		t.Fatalf("session order after records: %v", got)
	}
	c.finish(fc, answer(fc.wants, func(fetchWant) kmsg.FetchResponseTopicPartition { return part(5, 0, 0, nil) }))

	for _, tc := range []struct {
		name    string
		req     *kmsg.FetchRequest
		version int16
		code    int16
	}{
		{"old epoch", fetchRequest(id, 3), 12, kerr.InvalidFetchSessionEpoch.Code},
		{"epoch ahead", fetchRequest(id, 9), 12, kerr.InvalidFetchSessionEpoch.Code},
		{"unknown id", fetchRequest(id+1, 1), 12, kerr.FetchSessionIDNotFound.Code},
		{"topic ids in a session of names", fetchRequest(id, 4), 13, kerr.FetchSessionTopicIDError.Code},
	} {
		if fc := c.begin(tc.req, tc.version); fc.errCode != tc.code {
			t.Errorf("%s: error %d, want %d", tc.name, fc.errCode, tc.code)
		}
	}

	// Epoch -1 closes the session and fetches in full, without one.
	fc = c.begin(fetchRequest(id, -1, topicParts("a", 0)), 12)
	if fc.kind != sessionNone || len(fc.wants) != 1 {
		t.Fatalf("closing fetch: %+v", fc)
	}
	if fc := c.begin(fetchRequest(id, 4), 12); fc.errCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("closed session still answers: %+v", fc)
	}
}

// TestFetchSessionDuplicateRequest: two requests of one epoch (a client
// that resent a fetch) cannot both use the session; the later answer of
// the first, if the second moved the session on, is only the error.
func TestFetchSessionDuplicateRequest(t *testing.T) {
	c := newFetchSessionCache(10, time.Now)
	fc := c.begin(fetchRequest(0, 0, topicParts("a", 0)), 12)
	resp := answer(fc.wants, func(fetchWant) kmsg.FetchResponseTopicPartition { return part(1, 0, 0, nil) })
	c.finish(fc, resp)
	id := resp.SessionID

	first := c.begin(fetchRequest(id, 1), 12)
	if dup := c.begin(fetchRequest(id, 1), 12); dup.errCode != kerr.InvalidFetchSessionEpoch.Code {
		t.Fatalf("duplicate of epoch 1: %+v", dup)
	}
	second := c.begin(fetchRequest(id, 2), 12)
	late := answer(first.wants, func(fetchWant) kmsg.FetchResponseTopicPartition { return part(2, 0, 0, nil) })
	c.finish(first, late)
	if late.ErrorCode != kerr.InvalidFetchSessionEpoch.Code || len(late.Topics) != 0 {
		t.Fatalf("late answer of epoch 1: error %d, %d topics", late.ErrorCode, len(late.Topics))
	}
	resp = answer(second.wants, func(fetchWant) kmsg.FetchResponseTopicPartition { return part(2, 0, 0, nil) })
	c.finish(second, resp)
	if resp.ErrorCode != 0 || countParts(resp) != 1 {
		t.Fatalf("answer of epoch 2: error %d, %d partitions; want the moved high watermark", resp.ErrorCode, countParts(resp))
	}
}

func TestFetchSessionCacheSlots(t *testing.T) {
	clock := time.Unix(1000, 0)
	c := newFetchSessionCache(2, func() time.Time { return clock })
	open := func(parts ...int32) int32 {
		fc := c.begin(fetchRequest(0, 0, topicParts("t", parts...)), 12)
		resp := answer(fc.wants, func(fetchWant) kmsg.FetchResponseTopicPartition { return part(0, 0, 0, nil) })
		c.finish(fc, resp)
		return resp.SessionID
	}
	small, big := open(0), open(0, 1, 2)
	if small == 0 || big == 0 {
		t.Fatal("no session opened with free slots")
	}
	if id := open(0, 1); id == 0 {
		t.Fatal("a 2-partition session did not evict the 1-partition one")
	}
	if c.get(small) != nil || c.get(big) == nil {
		t.Fatal("the wrong session was evicted")
	}
	if id := open(5); id != 0 {
		t.Fatal("a 1-partition session took a slot from larger, busy ones")
	}
	clock = clock.Add(sessionIdleEvictAfter)
	if id := open(5); id == 0 {
		t.Fatal("an idle session kept its slot")
	}
	if n, _ := c.counts(); n != 2 {
		t.Fatalf("%d sessions open, want 2", n)
	}
	none := newFetchSessionCache(0, time.Now)
	fc := none.begin(fetchRequest(0, 0, topicParts("t", 0)), 12)
	resp := answer(fc.wants, func(fetchWant) kmsg.FetchResponseTopicPartition { return part(0, 0, 0, nil) })
	none.finish(fc, resp)
	if resp.SessionID != 0 {
		t.Fatal("a cache with 0 slots opened a session")
	}
}

// TestFetchSessionClientViewProperty: a client that learns of partitions
// only from the answers of its session (a full answer, then incremental
// ones) always knows every partition's high watermark, log start and
// error, whatever changes between fetches and whatever it adds or forgets.
func TestFetchSessionClientViewProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := newFetchSessionCache(4, time.Now)
		type state struct {
			hw, logStart int64
			code         int16
		}
		truth := map[int32]state{}
		view := map[int32]state{}
		answerTruth := func(fc fetchContext) *kmsg.FetchResponse {
			return answer(fc.wants, func(w fetchWant) kmsg.FetchResponseTopicPartition {
				s := truth[w.key.partition]
				var recs []byte
				if rapid.Bool().Draw(t, "records") {
					recs = []byte{1}
				}
				return part(s.hw, s.logStart, s.code, recs)
			})
		}
		learn := func(resp *kmsg.FetchResponse) {
			for _, rt := range resp.Topics {
				for _, p := range rt.Partitions {
					view[p.Partition] = state{p.HighWatermark, p.LogStartOffset, p.ErrorCode}
				}
			}
		}
		mutate := func(p int32) {
			s := truth[p]
			switch rapid.IntRange(0, 3).Draw(t, "change") {
			case 1:
				s.hw += rapid.Int64Range(1, 3).Draw(t, "appended")
				s.code = 0
			case 2:
				s.logStart = min(s.hw, s.logStart+1)
				s.code = 0
			case 3:
				s.code = kerr.NotLeaderForPartition.Code
			}
			if s.code != 0 {
				s.hw, s.logStart = -1, -1
			} else if s.hw < 0 {
				s.hw, s.logStart = 0, 0
			}
			truth[p] = s
		}
		initial := rapid.SliceOfNDistinct(rapid.Int32Range(0, 7), 1, 8, rapid.ID[int32]).Draw(t, "initial")
		for _, p := range initial {
			truth[p] = state{}
		}
		fc := c.begin(fetchRequest(0, 0, topicParts("t", initial...)), 12)
		resp := answerTruth(fc)
		c.finish(fc, resp)
		learn(resp)
		id, epoch := resp.SessionID, int32(1)
		for round := range rapid.IntRange(1, 20).Draw(t, "rounds") {
			members := slices.Sorted(maps.Keys(truth))
			for _, p := range members {
				mutate(p)
			}
			req := fetchRequest(id, epoch)
			add := rapid.Int32Range(0, 9).Draw(t, "add")
			if _, in := truth[add]; !in && rapid.Bool().Draw(t, "adding") {
				req.Topics = append(req.Topics, topicParts("t", add))
				truth[add] = state{}
			}
			if len(members) > 0 && rapid.Bool().Draw(t, "forgetting") {
				forget := rapid.SampledFrom(members).Draw(t, "forget")
				req.ForgottenTopics = []kmsg.FetchRequestForgottenTopic{{Topic: "t", Partitions: []int32{forget}}}
				delete(truth, forget)
				delete(view, forget)
			}
			fc := c.begin(req, 12)
			if fc.errCode != 0 {
				t.Fatalf("round %d: session error %d", round, fc.errCode)
			}
			resp := answerTruth(fc)
			c.finish(fc, resp)
			learn(resp)
			epoch = nextSessionEpoch(epoch)
			for p, s := range truth {
				if got, ok := view[p]; !ok || got != s {
					t.Fatalf("round %d: partition %d: client knows %+v (%v), truth %+v", round, p, got, ok, s)
				}
			}
		}
	})
}

// Helpers: requests and answers built by hand, partitions named "topic/p".

func fetchRequest(id, epoch int32, topics ...kmsg.FetchRequestTopic) *kmsg.FetchRequest {
	r := kmsg.NewPtrFetchRequest()
	r.SessionID, r.SessionEpoch, r.Topics = id, epoch, topics
	return r
}

func topicParts(topic string, parts ...int32) kmsg.FetchRequestTopic {
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	for _, p := range parts {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.PartitionMaxBytes = p, 1<<20
		rt.Partitions = append(rt.Partitions, rp)
	}
	return rt
}

func part(hw, logStart int64, code int16, records []byte) kmsg.FetchResponseTopicPartition {
	p := kmsg.NewFetchResponseTopicPartition()
	p.HighWatermark, p.LastStableOffset, p.LogStartOffset, p.ErrorCode = hw, hw, logStart, code
	p.RecordBatches = records
	return p
}

func ptr[T any](v T) *T { return &v }

// answer builds a response to wants the way resolveFetch lays it out.
func answer(wants []fetchWant, fill func(fetchWant) kmsg.FetchResponseTopicPartition) *kmsg.FetchResponse {
	resp := kmsg.NewPtrFetchResponse()
	for _, w := range wants {
		n := len(resp.Topics)
		if n == 0 || resp.Topics[n-1].Topic != w.key.topic {
			rt := kmsg.NewFetchResponseTopic()
			rt.Topic = w.key.topic
			rt.Partitions = make([]kmsg.FetchResponseTopicPartition, 0, len(wants))
			resp.Topics = append(resp.Topics, rt)
		}
		p := fill(w)
		p.Partition = w.key.partition
		rt := &resp.Topics[len(resp.Topics)-1]
		rt.Partitions = append(rt.Partitions, p)
	}
	return resp
}

func countParts(resp *kmsg.FetchResponse) int { return len(respKeys(resp)) }

func respKeys(resp *kmsg.FetchResponse) []string {
	var keys []string
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			keys = append(keys, fmt.Sprintf("%s/%d", rt.Topic, p.Partition))
		}
	}
	return keys
}

func wantKeys(wants []fetchWant) []string {
	keys := make([]string, len(wants))
	for i, w := range wants {
		keys[i] = fmt.Sprintf("%s/%d", w.key.topic, w.key.partition)
	}
	return keys
}

// TestFetchSessionCacheConcurrent drives sessions from many goroutines
// over a cache too small for them all, with evictions and gauge reads in
// between; run with -race. Every answer is either a session error a
// client recovers from or consistent with the session's partitions.
func TestFetchSessionCacheConcurrent(t *testing.T) {
	c := newFetchSessionCache(4, time.Now)
	done := make(chan struct{})
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			id, epoch := int32(0), int32(0)
			for i := range 200 {
				req := fetchRequest(id, epoch, topicParts(fmt.Sprint("t", g), int32(i%5)))
				fc := c.begin(req, 12)
				if fc.errCode != 0 {
					id, epoch = 0, 0 // evicted or raced: start over, as a client does
					continue
				}
				resp := answer(fc.wants, func(fetchWant) kmsg.FetchResponseTopicPartition { return part(int64(i), 0, 0, nil) })
				c.finish(fc, resp)
				if resp.ErrorCode != 0 {
					errs <- fmt.Errorf("goroutine %d: error %d after a clean begin", g, resp.ErrorCode)
					return
				}
				if fc.kind == sessionOpen {
					id, epoch = resp.SessionID, 1
					if id == 0 {
						epoch = 0 // no slot: full fetches, asking again
					}
					continue
				}
				epoch = nextSessionEpoch(epoch)
			}
		}()
	}
	for range 8 {
		for {
			select {
			case <-done:
			default:
				c.counts()
				continue
			}
			break
		}
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n, _ := c.counts(); n > 4 {
		t.Fatalf("%d sessions in a cache of 4 slots", n)
	}
}

// A full fetch that names a partition twice opens a session holding it
// once, with the values given last (and what its answer there said).
func TestNewSessionPartsKeepsTheLastOfADuplicate(t *testing.T) {
	key := sessionKey{topic: "a", partition: 0}
	wants := []fetchWant{{key: key, offset: 5}, {key: sessionKey{topic: "b"}, offset: 1}, {key: key, offset: 9}}
	sent := []sentState{{highWatermark: 10}, {highWatermark: 3}, {highWatermark: 12}}
	parts, index := newSessionParts(wants, sent)
	if len(parts) != 2 || len(index) != 2 || parts[0] != index[key] {
		t.Fatalf("%d partitions, %d indexed; want a/0 then b/0, once each", len(parts), len(index))
	}
	if p := index[key]; p.want.offset != 9 || p.sent.highWatermark != 12 {
		t.Fatalf("a/0 kept offset %d, sent %+v; want the last: offset 9, high watermark 12", p.want.offset, p.sent)
	}
}

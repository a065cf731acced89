package replication

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// The fetcher tests drive one fetcher against a scripted leader: every
// request the fetcher sends is handed to the test (scriptedLeader.next),
// which looks at it and answers it, so the test and the fetcher's
// goroutine take turns and nothing depends on timing. A fake replica
// records what the fetcher does to it.

const testLeader = 1

var testTP = base.TopicPartition{Topic: "t", Partition: 0}

// leaderCall is one request of the fetcher, waiting for its answer.
type leaderCall struct {
	req   kmsg.Request
	reply chan kmsg.Response
}

// scriptedLeader is the fetcher's connection to its leader (a
// kmsg.Requestor).
type scriptedLeader struct{ calls chan leaderCall }

func (l *scriptedLeader) Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	c := leaderCall{req: req, reply: make(chan kmsg.Response, 1)}
	select {
	case l.calls <- c:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case r := <-c.reply:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// next is the fetcher's next request; the test must answer it. A fetcher
// that sends nothing for a long while fails the test rather than hanging
// it (a guard, not a timing assertion).
func (l *scriptedLeader) next(t *testing.T) leaderCall {
	t.Helper()
	select {
	case c := <-l.calls:
		return c
	case <-time.After(time.Minute):
		t.Fatal("the fetcher sent no request for a minute")
		return leaderCall{}
	}
}

// nextFetch is the fetcher's next request, which must be a Fetch, and
// its only partition.
func (l *scriptedLeader) nextFetch(t *testing.T) (leaderCall, kmsg.FetchRequestTopicPartition) {
	t.Helper()
	c := l.next(t)
	req, ok := c.req.(*kmsg.FetchRequest)
	if !ok {
		t.Fatalf("the fetcher sent %T, want a Fetch", c.req)
	}
	if len(req.Topics) != 1 || len(req.Topics[0].Partitions) != 1 {
		t.Fatalf("the fetch names %d topics, want one partition", len(req.Topics))
	}
	return c, req.Topics[0].Partitions[0]
}

// The leader's answers name testTP alone: a test states the partition's
// values and the answer helpers wrap them in its topic and response. The
// partition comes from its kmsg constructor for its -1 defaults (no
// diverging epoch, no offset); the topic and response types have none.

// answerFetch answers a Fetch for testTP with the partition edit makes.
func answerFetch(c leaderCall, edit func(*kmsg.FetchResponseTopicPartition)) {
	p := kmsg.NewFetchResponseTopicPartition()
	p.Partition = testTP.Partition
	if edit != nil {
		edit(&p)
	}
	c.reply <- &kmsg.FetchResponse{Topics: []kmsg.FetchResponseTopic{
		{Topic: testTP.Topic, Partitions: []kmsg.FetchResponseTopicPartition{p}},
	}}
}

// answerListOffsets answers a ListOffsets for testTP with offset o.
func answerListOffsets(c leaderCall, o int64) {
	p := kmsg.NewListOffsetsResponseTopicPartition()
	p.Partition, p.Offset = testTP.Partition, o
	c.reply <- &kmsg.ListOffsetsResponse{Topics: []kmsg.ListOffsetsResponseTopic{
		{Topic: testTP.Topic, Partitions: []kmsg.ListOffsetsResponseTopicPartition{p}},
	}}
}

// answerOffsetForLeaderEpoch answers an OffsetForLeaderEpoch for testTP
// with epoch and its end offset.
func answerOffsetForLeaderEpoch(c leaderCall, epoch int32, end int64) {
	p := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
	p.Partition, p.LeaderEpoch, p.EndOffset = testTP.Partition, epoch, end
	c.reply <- &kmsg.OffsetForLeaderEpochResponse{Topics: []kmsg.OffsetForLeaderEpochResponseTopic{
		{Topic: testTP.Topic, Partitions: []kmsg.OffsetForLeaderEpochResponseTopicPartition{p}},
	}}
}

// leaderLog is what a scripted leader answers about its log: ListOffsets
// by timestamp (-1 for a timestamp it lacks), OffsetForLeaderEpoch from
// its lineage and log end.
type leaderLog struct {
	byTimestamp map[int64]int64
	lineage     []base.EpochStart
	end         base.Offset
}

// serveOffsets answers the ListOffsets and OffsetForLeaderEpoch requests
// the fetcher sends before its next Fetch from log, calling before (if
// set) ahead of each answer, and returns that Fetch, unanswered, with the
// ListOffsets timestamps asked in order.
func (l *scriptedLeader) serveOffsets(t *testing.T, log leaderLog, before func()) (leaderCall, []int64) {
	t.Helper()
	var asked []int64
	for {
		c := l.next(t)
		if _, fetch := c.req.(*kmsg.FetchRequest); !fetch && before != nil {
			before()
		}
		switch req := c.req.(type) {
		case *kmsg.FetchRequest:
			return c, asked
		case *kmsg.ListOffsetsRequest:
			ts := req.Topics[0].Partitions[0].Timestamp
			asked = append(asked, ts)
			o, ok := log.byTimestamp[ts]
			if !ok {
				o = -1
			}
			answerListOffsets(c, o)
		case *kmsg.OffsetForLeaderEpochRequest:
			epoch, end := int32(-1), int64(-1)
			if e, o, ok := EndOffsetForEpoch(log.lineage, log.end, base.Epoch(req.Topics[0].Partitions[0].LeaderEpoch)); ok {
				epoch, end = int32(e), int64(o)
			}
			answerOffsetForLeaderEpoch(c, epoch, end)
		default:
			t.Fatalf("the fetcher sent %T", c.req)
		}
	}
}

// refuseFirstFetch has fs follow r from the leader in epoch 5, answers
// its first fetch with err and serves log's offsets as serveOffsets does
// (before included), returning what serveOffsets returns.
func (l *scriptedLeader) refuseFirstFetch(t *testing.T, fs *Fetchers, r *fakeReplica,
	err *kerr.Error, log leaderLog, before func(),
) (leaderCall, []int64) {
	t.Helper()
	fs.follow(r, testLeader, 5)
	c, _ := l.nextFetch(t)
	answerFetch(c, func(p *kmsg.FetchResponseTopicPartition) { p.ErrorCode = err.Code })
	return l.serveOffsets(t, log, before)
}

// fakeReplica is a follower partition that records what the fetcher does
// to it. An append of n bytes appends n offsets.
type fakeReplica struct {
	tiered bool

	mu      sync.Mutex
	off     partition.Offsets
	lineage []base.EpochStart
	events  []string
	starts  []partition.TierStart
}

func (r *fakeReplica) TP() base.TopicPartition { return testTP }
func (r *fakeReplica) TopicID() base.TopicID   { return base.TopicID{7} }
func (r *fakeReplica) Tiered() bool            { return r.tiered }

func (r *fakeReplica) Offsets() partition.Offsets {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.off
}

func (r *fakeReplica) Lineage() []base.EpochStart {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.lineage)
}

func (r *fakeReplica) LatestEpoch() (base.Epoch, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return LatestEpoch(r.lineage)
}

func (r *fakeReplica) record(format string, args ...any) {
	r.events = append(r.events, fmt.Sprintf(format, args...))
}

func (r *fakeReplica) AppendAsFollower(batches []byte) (partition.FollowerAppend, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	was := r.off.LogEnd
	r.off.LogEnd += base.Offset(len(batches))
	r.record("append %d", len(batches))
	return partition.FollowerAppend{Appended: base.Range{Start: was, End: r.off.LogEnd}, Bytes: len(batches), Batches: 1}, nil
}

func (r *fakeReplica) SyncFollower() (base.Offset, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("sync")
	return r.off.LogEnd, nil
}

func (r *fakeReplica) SetHighWatermarkFromLeader(hw base.Offset) (base.Offset, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.off.HighWatermark = min(hw, r.off.LogEnd)
	return r.off.HighWatermark, nil
}

func (r *fakeReplica) SetLogStartFromLeader(start base.Offset) error { return nil }

func (r *fakeReplica) TruncateTo(o base.Offset) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("truncate %d", o)
	r.off.LogEnd = min(r.off.LogEnd, o)
	r.off.HighWatermark = min(r.off.HighWatermark, r.off.LogEnd)
	r.lineage = TruncateLineage(r.lineage, o)
	return nil
}

func (r *fakeReplica) TruncateFullyAndStartAt(o base.Offset) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("start over %d", o)
	r.off = partition.Offsets{LogStart: o, LocalStart: o, HighWatermark: o, LogEnd: o}
	r.lineage = nil
	return nil
}

func (r *fakeReplica) StartOverFromTier(s partition.TierStart) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record("start over from the tier %d", s.LocalStart)
	r.starts = append(r.starts, s)
	r.off = partition.Offsets{LogStart: s.LogStart, LocalStart: s.LocalStart, HighWatermark: s.LocalStart, LogEnd: s.LocalStart}
	r.lineage = slices.Clone(s.Lineage)
	return nil
}

func (r *fakeReplica) history() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

func (r *fakeReplica) tierStarts() []partition.TierStart {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.starts)
}

// fakeTier is the remote tier's metadata and objects for testTP.
type fakeTier struct {
	segs []remotemeta.RemoteSegment
	// epochs, when set, is the leader-epoch checkpoint every segment's
	// download holds; else each holds the quorum's epochs.
	epochs   []base.EpochStart
	snapshot []byte
	aborted  map[byte][]partition.AbortedTxn // by segment id
	// onDownload, when set, runs as a segment's state is downloaded.
	onDownload func()
}

func (tr *fakeTier) FinishedSegments(base.TopicID, base.TopicPartition) ([]remotemeta.RemoteSegment, bool) {
	return tr.segs, true
}

func (tr *fakeTier) SegmentState(_ context.Context, seg remotemeta.RemoteSegment) ([]base.EpochStart, []byte, error) {
	if tr.onDownload != nil {
		tr.onDownload()
	}
	if tr.epochs != nil {
		return tr.epochs, tr.snapshot, nil
	}
	return seg.LeaderEpochs, tr.snapshot, nil
}

func (tr *fakeTier) AbortedTxns(_ context.Context, seg remotemeta.RemoteSegment) ([]partition.AbortedTxn, error) {
	return tr.aborted[seg.ID[0]], nil
}

// startFetchers returns fetchers of node 2 and the scripted leader they
// are connected to; Close runs at the end of the test.
func startFetchers(t *testing.T, edit func(*FetchersOptions)) (*scriptedLeader, *Fetchers) {
	t.Helper()
	l := &scriptedLeader{calls: make(chan leaderCall)}
	o := FetchersOptions{
		NodeID:      2,
		BrokerEpoch: func() int64 { return 33 },
		Client: func(leader int32, _ int) (kmsg.Requestor, error) {
			if leader != testLeader {
				return nil, fmt.Errorf("no broker %d", leader)
			}
			return l, nil
		},
		MaxWait: time.Millisecond, MinBytes: 1, MaxBytes: 1 << 20, PartitionMaxBytes: 1 << 20,
		// Never fires: a request waits for the test's answer, and a
		// backoff of zero retries at once.
		RequestTimeout: time.Hour,
		Clock:          clock.NewManual(time.Unix(1_000, 0)),
	}
	if edit != nil {
		edit(&o)
	}
	fs, err := NewFetchers(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fs.Close)
	return l, fs
}

// TestFetcherRequestNamesItsEpochs: a follower's fetch carries the leader
// epoch it follows in (so that a deposed or newer leader fences it) and
// the latest epoch of its log (so that the leader can tell it diverged,
// KIP-595), from its log end.
func TestFetcherRequestNamesItsEpochs(t *testing.T) {
	for name, tc := range map[string]struct {
		lineage []base.EpochStart
		last    int32
	}{
		"with a lineage": {lin(2, 0, 4, 30), 4},
		"empty lineage":  {nil, -1},
	} {
		t.Run(name, func(t *testing.T) {
			l, fs := startFetchers(t, nil)
			r := &fakeReplica{lineage: tc.lineage, off: partition.Offsets{LogStart: 10, LocalStart: 10, HighWatermark: 40, LogEnd: 50}}
			fs.follow(r, testLeader, 7)
			c, p := l.nextFetch(t)
			req := c.req.(*kmsg.FetchRequest)
			if req.ReplicaID != 2 || req.ReplicaState.ID != 2 || req.ReplicaState.Epoch != 33 {
				t.Errorf("replica id %d, state %+v; want 2, broker epoch 33", req.ReplicaID, req.ReplicaState)
			}
			if p.CurrentLeaderEpoch != 7 || p.LastFetchedEpoch != tc.last || p.FetchOffset != 50 || p.LogStartOffset != 10 || p.HighWatermark != 40 {
				t.Errorf("fetch: current leader epoch %d, last fetched epoch %d, offset %d, log start %d, hw %d; want 7, %d, 50, 10, 40",
					p.CurrentLeaderEpoch, p.LastFetchedEpoch, p.FetchOffset, p.LogStartOffset, p.HighWatermark, tc.last)
			}
			answerFetch(c, nil)
		})
	}
}

// TestFetcherTruncatesOnADivergingEpoch: a DivergingEpoch answer, epoch
// 0 included (only -1 means none), truncates the follower where
// TruncationPoint says before it fetches again.
func TestFetcherTruncatesOnADivergingEpoch(t *testing.T) {
	for name, tc := range map[string]struct {
		lineage  []base.EpochStart
		epoch    int32
		end      int64
		wantNext int64
	}{
		"epoch 0":               {lin(0, 0), 0, 6, 6},
		"a later epoch":         {lin(0, 0, 3, 4), 3, 8, 8},
		"an epoch it never had": {lin(0, 0, 3, 4), 2, 9, 4},
	} {
		t.Run(name, func(t *testing.T) {
			l, fs := startFetchers(t, nil)
			r := &fakeReplica{lineage: tc.lineage, off: partition.Offsets{HighWatermark: 2, LogEnd: 10}}
			fs.follow(r, testLeader, 5)
			c, _ := l.nextFetch(t)
			answerFetch(c, func(p *kmsg.FetchResponseTopicPartition) {
				p.DivergingEpoch.Epoch, p.DivergingEpoch.EndOffset = tc.epoch, tc.end
				p.HighWatermark = 2
			})
			c, p := l.nextFetch(t)
			if p.FetchOffset != tc.wantNext {
				t.Errorf("after a diverging epoch (%d, %d) the follower fetches from %d, want %d (events %v)",
					tc.epoch, tc.end, p.FetchOffset, tc.wantNext, r.history())
			}
			answerFetch(c, nil)
		})
	}
}

// TestFetcherSyncsBeforeItFetchesAgain: what a follower appended is
// durable before its next fetch tells the leader its new log end, which
// may acknowledge an acks=all produce.
func TestFetcherSyncsBeforeItFetchesAgain(t *testing.T) {
	l, fs := startFetchers(t, nil)
	r := &fakeReplica{lineage: lin(1, 0), off: partition.Offsets{LogEnd: 10, HighWatermark: 10}}
	fs.follow(r, testLeader, 1)
	c, _ := l.nextFetch(t)
	answerFetch(c, func(p *kmsg.FetchResponseTopicPartition) {
		p.RecordBatches = make([]byte, 3)
		p.HighWatermark = 10
	})
	c, p := l.nextFetch(t)
	if got, want := r.history(), []string{"append 3", "sync"}; p.FetchOffset != 13 || !slices.Equal(got, want) {
		t.Errorf("before the second fetch (from %d): %v, want %v from 13", p.FetchOffset, got, want)
	}
	answerFetch(c, nil)
}

// TestFetcherDropsTheAnswerOfAnEarlierEpoch: once a partition is followed
// in a new leader epoch, no answer to a fetch of the earlier one touches
// it: not its records, not a divergence, not an out-of-range reset.
func TestFetcherDropsTheAnswerOfAnEarlierEpoch(t *testing.T) {
	for name, edit := range map[string]func(*kmsg.FetchResponseTopicPartition){
		"records": func(p *kmsg.FetchResponseTopicPartition) { p.RecordBatches = make([]byte, 3) },
		"diverging": func(p *kmsg.FetchResponseTopicPartition) {
			p.DivergingEpoch.Epoch, p.DivergingEpoch.EndOffset = 1, 4
		},
	} {
		t.Run(name, func(t *testing.T) {
			l, fs := startFetchers(t, nil)
			r := &fakeReplica{lineage: lin(1, 0), off: partition.Offsets{LogEnd: 10, HighWatermark: 10}}
			fs.follow(r, testLeader, 5)
			c, _ := l.nextFetch(t)
			fs.follow(r, testLeader, 6) // the fetch is in flight
			answerFetch(c, edit)
			c, p := l.nextFetch(t)
			if p.CurrentLeaderEpoch != 6 || p.FetchOffset != 10 || len(r.history()) != 0 {
				t.Errorf("the answer of epoch 5 was applied in epoch 6: next fetch in %d from %d, events %v",
					p.CurrentLeaderEpoch, p.FetchOffset, r.history())
			}
			answerFetch(c, nil)
		})
	}
}

// TestFetcherOutOfRangeReset: OFFSET_OUT_OF_RANGE makes the follower ask
// its leader's log end and start and start over at a log start past its
// end, unless it is followed in a new epoch by the time it knows.
func TestFetcherOutOfRangeReset(t *testing.T) {
	for name, tc := range map[string]struct {
		newEpoch bool
		want     []string
	}{
		"same epoch":              {false, []string{"start over 100"}},
		"new epoch in the middle": {true, nil},
	} {
		t.Run(name, func(t *testing.T) {
			l, fs := startFetchers(t, nil)
			r := &fakeReplica{lineage: lin(1, 0), off: partition.Offsets{LogEnd: 10, HighWatermark: 10}}
			var refollow func()
			if tc.newEpoch {
				refollow = func() { fs.follow(r, testLeader, 6) }
			}
			leader := leaderLog{byTimestamp: map[int64]int64{-1: 300, -2: 100}}
			c, asked := l.refuseFirstFetch(t, fs, r, kerr.OffsetOutOfRange, leader, refollow)
			if !slices.Equal(asked, []int64{-1, -2}) {
				t.Errorf("asked ListOffsets %v, want the log end, then the log start", asked)
			}
			if got := r.history(); !slices.Equal(got, tc.want) {
				t.Errorf("events %v, want %v", got, tc.want)
			}
			answerFetch(c, nil)
		})
	}
}

// TestFetcherBootstrapsOnlyAnEmptyFollower: with
// follower.fetch.last.tiered.offset.enable, an empty follower of a tiered
// partition first asks its leader for the earliest pending upload offset
// (KIP-1023); one that holds anything fetches from its log end.
func TestFetcherBootstrapsOnlyAnEmptyFollower(t *testing.T) {
	for name, tc := range map[string]struct {
		logEnd    base.Offset
		bootstrap bool
	}{
		"empty":     {0, true},
		"non-empty": {10, false},
	} {
		t.Run(name, func(t *testing.T) {
			l, fs := startFetchers(t, func(o *FetchersOptions) {
				o.Tier, o.LastTieredOffsetBootstrap = &fakeTier{}, true
			})
			r := &fakeReplica{tiered: true, off: partition.Offsets{LogEnd: tc.logEnd, HighWatermark: tc.logEnd}}
			if tc.logEnd > 0 {
				r.lineage = lin(1, 0)
			}
			fs.follow(r, testLeader, 5)
			// Nothing tiered: the bootstrap fetches from the log start.
			c, asked := l.serveOffsets(t, leaderLog{byTimestamp: map[int64]int64{-6: 0, -2: 0, -4: 0}}, nil)
			if got := len(asked) > 0; got != tc.bootstrap || (got && asked[0] != -6) {
				t.Errorf("asked ListOffsets %v before the first fetch; want a bootstrap (-6 first): %v", asked, tc.bootstrap)
			}
			answerFetch(c, nil)
		})
	}
}

// tierLeader is a leader whose log [0, 300) is of epoch 1 and whose local
// log starts at 200; the tier holds [50, 200) of it in two segments.
var tierLeader = leaderLog{byTimestamp: map[int64]int64{-1: 300, -2: 0, -4: 200, -6: 200}, lineage: lin(1, 0), end: 300}

func tierOfTwoSegments() *fakeTier {
	return &fakeTier{
		segs:     []remotemeta.RemoteSegment{fin(1, 50, 100, 1, 50), fin(2, 100, 200, 1, 100)},
		snapshot: []byte("producers"),
		aborted: map[byte][]partition.AbortedTxn{
			1: {{ProducerID: 4, FirstOffset: 60, LastOffset: 70, LastStableOffset: 60}},
			2: {{ProducerID: 5, FirstOffset: 120, LastOffset: 130, LastStableOffset: 120}},
		},
	}
}

// TestFetcherRebuildsFromTheTier: OFFSET_MOVED_TO_TIERED_STORAGE makes
// the follower rebuild its state at its leader's local log start from the
// tier (KIP-405), claiming as its log start only what the tier holds, and
// with the aborted transactions of every remote segment below.
func TestFetcherRebuildsFromTheTier(t *testing.T) {
	tier := tierOfTwoSegments()
	l, fs := startFetchers(t, func(o *FetchersOptions) { o.Tier = tier })
	r := &fakeReplica{tiered: true}
	c, asked := l.refuseFirstFetch(t, fs, r, kerr.OffsetMovedToTieredStorage, tierLeader, nil)
	if !slices.Equal(asked, []int64{-4, -2}) {
		t.Errorf("asked ListOffsets %v, want the earliest local offset, then the log start", asked)
	}
	starts := r.tierStarts()
	if len(starts) != 1 {
		t.Fatalf("started over from the tier %d times, want once (events %v)", len(starts), r.history())
	}
	s := starts[0]
	want := partition.TierStart{
		LocalStart: 200, LogStart: 50, Lineage: lin(1, 50), ProducerSnapshot: []byte("producers"),
		Aborted: append(slices.Clone(tier.aborted[1]), tier.aborted[2]...),
	}
	if s.LocalStart != want.LocalStart || s.LogStart != want.LogStart || !slices.Equal(s.Lineage, want.Lineage) ||
		string(s.ProducerSnapshot) != string(want.ProducerSnapshot) || !slices.Equal(s.Aborted, want.Aborted) {
		t.Errorf("started over from the tier with %+v, want %+v", s, want)
	}
	req := c.req.(*kmsg.FetchRequest)
	if p := req.Topics[0].Partitions[0]; p.FetchOffset != 200 {
		t.Errorf("after the rebuild the follower fetches from %d, want 200", p.FetchOffset)
	}
	answerFetch(c, nil)
}

// TestFetcherRebuildRefusals: the follower does not start over from the
// tier when the top segment's leader-epoch checkpoint is not the
// quorum's, or when it is followed in a new epoch by then.
func TestFetcherRebuildRefusals(t *testing.T) {
	for name, edit := range map[string]func(*fakeTier, func()){
		"checkpoint differs": func(tr *fakeTier, _ func()) { tr.epochs = lin(1, 100, 2, 150) },
		"new epoch":          func(tr *fakeTier, refollow func()) { tr.onDownload = refollow },
	} {
		t.Run(name, func(t *testing.T) {
			tier := tierOfTwoSegments()
			l, fs := startFetchers(t, func(o *FetchersOptions) { o.Tier = tier })
			r := &fakeReplica{tiered: true}
			edit(tier, func() { fs.follow(r, testLeader, 6) })
			c, _ := l.refuseFirstFetch(t, fs, r, kerr.OffsetMovedToTieredStorage, tierLeader, nil)
			if starts := r.tierStarts(); len(starts) != 0 {
				t.Errorf("started over from the tier with %+v", starts)
			}
			answerFetch(c, nil)
		})
	}
}

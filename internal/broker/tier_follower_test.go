package broker

import (
	"bytes"
	"crypto/rand"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/retention"
	"github.com/strata-broker/strata/internal/tier"
)

// TestFollowerLocalRetention: a follower of a tiered topic deletes its
// local copies of the segments the quorum says are tiered (here all of
// them: local.retention.bytes=0), keeps its log start and its active
// segment, and logs it; a follower whose partition has nothing tiered and
// a partition led here (its tier loop's) keep every segment.
func TestFollowerLocalRetention(t *testing.T) {
	meta := openTestMeta(t)
	logs := &syncBuffer{}
	b := newFollowerRetentionBroker(t, meta, logs)
	for _, name := range []string{"tiered", "untiered-yet", "led"} {
		createTopic(t, meta, name, 1)
	}
	if err := b.Reconcile(); err != nil {
		t.Fatal(err)
	}
	parts := map[string]*partition.Partition{}
	for _, name := range []string{"tiered", "untiered-yet", "led"} {
		p := hostedPartition(t, b, name)
		appendRecords(t, p, 200)
		if len(p.TierLocal().Segments()) < 4 {
			t.Fatalf("%s: %d segments, want several", name, len(p.TierLocal().Segments()))
		}
		parts[name] = p
	}
	for _, name := range []string{"tiered", "led"} {
		copyWithoutRetention(t, b, parts[name])
	}
	for _, name := range []string{"tiered", "untiered-yet"} {
		follow(t, b, meta, parts[name])
	}
	before := map[string][]tier.LocalSegment{}
	for name, p := range parts {
		before[name] = p.TierLocal().Segments()
	}

	b.followerLocalRetentionPass()

	p := parts["tiered"]
	segs := p.TierLocal().Segments()
	active := before["tiered"][len(before["tiered"])-1]
	tieredNext := b.views(p).View().TieredNext(p.Lineage())
	if !tieredNext.Any || tieredNext.Next != active.BaseOffset {
		t.Fatalf("setup: tier %+v, want everything below the active segment at %d", tieredNext, active.BaseOffset)
	}
	if len(segs) != 1 || segs[0] != active {
		t.Fatalf("the follower kept %+v, want its active segment %+v alone", segs, active)
	}
	if off := p.Offsets(); off.LogStart != 0 || off.LocalStart != active.BaseOffset {
		t.Fatalf("follower offsets %+v, want log start 0, local log start %d", off, active.BaseOffset)
	}
	if !strings.Contains(logs.String(), "follower deleted tiered local segments") {
		t.Fatalf("nothing logged:\n%s", logs)
	}
	for _, name := range []string{"untiered-yet", "led"} {
		if got := parts[name].TierLocal().Segments(); !slices.Equal(got, before[name]) {
			t.Errorf("%s: segments %+v, were %+v", name, got, before[name])
		}
	}

	// A second pass has nothing more to delete.
	b.followerLocalRetentionPass()
	if got := p.TierLocal().Segments(); !slices.Equal(got, segs) {
		t.Fatalf("a second pass deleted more: %+v", got)
	}
}

// newFollowerRetentionBroker is node 1 of meta with the remote tier on an
// in-memory bucket; every topic is tiered, with 1 KiB segments and
// local.retention.bytes=0. Its loops are idle: the test runs the passes.
func newFollowerRetentionBroker(t *testing.T, meta *metadata.Store, logs *syncBuffer) *Broker {
	t.Helper()
	const idle = time.Hour
	store := objstore.NewMem()
	o := idleTestOptions(t, meta, partition.Config{SegmentBytes: 1024, IndexIntervalBytes: 4096, SegmentIndexBytes: 1 << 20,
		MaxMessageBytes: 1 << 20, Tiered: true, Retention: retention.Policy{LocalRetentionBytes: retention.LimitOf(0)}})
	o.Logger = slog.New(slog.NewTextHandler(logs, nil))
	o.Tier = &TierDeps{
		Copier:             &tier.Copier{Store: store, Meta: meta, Random: rand.Reader, Clock: clock.Real{}},
		Deleter:            &tier.Deleter{Store: store, Meta: meta},
		Reader:             &tier.Reader{Store: store},
		Interval:           idle,
		RetryBackoff:       idle,
		RetryBackoffMax:    idle,
		Jitter:             func() float64 { return 0 },
		ListOffsetsTimeout: time.Minute,
	}
	return startTestBroker(t, o)
}

// copyWithoutRetention uploads p's rolled segments as its leader's tier
// pass does, but with no retention, so that they stay local too.
func copyWithoutRetention(t *testing.T, b *Broker, p *partition.Partition) {
	t.Helper()
	off := p.Offsets()
	rep := tier.Pass(t.Context(), tier.PassInput{
		TopicID: p.TopicID(), TP: p.TP(), LeaderEpoch: off.LeaderEpoch, Lineage: p.Lineage(),
		LastStableOffset: off.LastStable, HighWatermark: off.HighWatermark, LogStart: off.LogStart,
		NowMs: time.Now().UnixMilli(),
	}, tier.PassDeps{Local: p.TierLocal(), Views: b.views(p), Copier: b.opts.Tier.Copier, Deleter: b.opts.Tier.Deleter})
	if rep.Failed != nil || len(rep.Copied) == 0 || len(rep.LocalDeleted) != 0 {
		t.Fatalf("copying %v: %+v", p.TP(), rep)
	}
}

// follow makes node 1 a follower of p, as an image electing node 2 in a
// newer epoch would (the quorum is not asked).
func follow(t *testing.T, b *Broker, meta *metadata.Store, p *partition.Partition) {
	t.Helper()
	tp := p.TP()
	b.mu.Lock()
	h := b.mu.parts[tp]
	pa := meta.Image().Topics[tp.Topic].Partitions[tp.Partition]
	pa.Leader, pa.LeaderEpoch = 2, pa.LeaderEpoch+1
	err := b.applyRoleLocked(h, pa)
	b.mu.Unlock()
	if err != nil || p.IsLeader() {
		t.Fatalf("%v does not follow: %v", tp, err)
	}
}

// syncBuffer is a log destination safe for the broker's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

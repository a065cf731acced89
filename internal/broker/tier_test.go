package broker

import (
	"testing"
)

// TestRemoteLookups: a search by timestamp searches the first remote
// segment whose max timestamp reaches it, the one equal to it included;
// a remote read names as many following segments to the read-ahead as it
// reaches; the earliest pending upload is where the tier ends, or the
// local log start once tiering is off.
func TestRemoteLookups(t *testing.T) {
	meta := openTestMeta(t)
	b := newFollowerRetentionBroker(t, meta, &syncBuffer{})
	createTopic(t, meta, "remote", 1)
	p := hostedPartition(t, b, "remote")
	appendRecords(t, p, 200)
	copyWithoutRetention(t, b, p)
	segs := b.views(p).View().FinishedFrom(p.Lineage(), 0)
	if len(segs) < 3 {
		t.Fatalf("setup: %d remote segments, want several", len(segs))
	}
	first := segs[0]
	o, _, ok, err := b.RemoteOffsetForTimestamp(t.Context(), p, first.MaxTimestampMs)
	if err != nil || !ok || o < first.Range.Start || o >= first.Range.End {
		t.Fatalf("offset for timestamp %d: %d, %v, %v; want one in the first segment %v", first.MaxTimestampMs, o, ok, err, first.Range)
	}
	seg, following, ok := b.remoteSegmentsFrom(p, 0)
	want := min(b.opts.Tier.Reader.ReadAheadObjects(), len(segs)-1)
	if !ok || seg.ID != first.ID || len(following) != want {
		t.Fatalf("segments from 0: %v, %d following, %v; want %v, %d", seg.ID, len(following), ok, first.ID, want)
	}
	if o, ok := b.EarliestPendingUpload(p); !ok || o != segs[len(segs)-1].Range.End {
		t.Fatalf("earliest pending upload %d, %v; want the end of the tier, %d", o, ok, segs[len(segs)-1].Range.End)
	}
	cfg := p.Config()
	cfg.Tiered = false
	if err := p.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if o, ok := b.EarliestPendingUpload(p); !ok || o != p.Offsets().LocalStart {
		t.Fatalf("tiering off: earliest pending upload %d, %v; want the local log start %d", o, ok, p.Offsets().LocalStart)
	}
}

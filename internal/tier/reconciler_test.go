package tier

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

const reconcileGrace = time.Hour

var pendingTopicID = base.TopicID{0xde, 0xad, 15: 1}

// rcSeg is segment n of testTopicID partition 0 in state st.
func rcSeg(n int, st remotemeta.State) remotemeta.RemoteSegment {
	s := rseg(n, base.Offset(n*100), base.Offset(n*100+100), 1000, st)
	s.TopicID = testTopicID
	return s
}

// longTopicSeg is segment 50 of testTopicID partition 1, whose topic name
// is too long for a key: the key carries it cut.
func longTopicSeg() remotemeta.RemoteSegment {
	s := rcSeg(50, remotemeta.CopyFinished)
	s.TP = base.TopicPartition{Topic: strings.Repeat("x", 249), Partition: 1}
	return s
}

// rcClaims claims, of partition 0, segments 1 to 4 (every state but
// DELETE_FINISHED) and not 5 (DELETE_FINISHED); longTopicSeg; and all of
// pendingTopicID.
func rcClaims(t testing.TB) Claims {
	t.Helper()
	c, err := NewClaims([]PartitionView{
		mustView(rcSeg(1, remotemeta.CopyFinished), rcSeg(2, remotemeta.CopyStarted), rcSeg(3, remotemeta.Dangling),
			rcSeg(4, remotemeta.DeleteStarted), rcSeg(5, remotemeta.DeleteFinished)),
		mustView(longTopicSeg()),
		mustView(), // a partition with nothing tiered
	}, []base.TopicID{pendingTopicID})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func rcKey(s remotemeta.RemoteSegment) string { return SegmentKey(s, SuffixLog) }

func TestPlanOrphans(t *testing.T) {
	now := time.UnixMilli(10_000_000)
	old, young := now.Add(-reconcileGrace-time.Second), now.Add(-reconcileGrace+time.Second)
	otherPartition := rcSeg(1, remotemeta.CopyFinished)
	otherPartition.TP.Partition = 7
	otherTopic := rcSeg(1, remotemeta.CopyFinished)
	otherTopic.TopicID = base.TopicID{0x77, 15: 7}
	pending := rcSeg(99, remotemeta.CopyFinished)
	pending.TopicID = pendingTopicID
	hexID := strings.Repeat("ab", 16)

	tests := []struct {
		name string
		key  string
		mod  time.Time
		want string // claimed, orphan, young or foreign
	}{
		{"COPY_FINISHED is claimed", rcKey(rcSeg(1, remotemeta.CopyFinished)), old, "claimed"},
		{"COPY_STARTED is claimed", rcKey(rcSeg(2, remotemeta.CopyStarted)), old, "claimed"},
		{"DANGLING is claimed", rcKey(rcSeg(3, remotemeta.Dangling)), old, "claimed"},
		{"DELETE_STARTED is claimed", rcKey(rcSeg(4, remotemeta.DeleteStarted)), old, "claimed"},
		{"every suffix of a claimed segment", SegmentKey(rcSeg(1, remotemeta.CopyFinished), SuffixSnapshot), old, "claimed"},
		{"claimed and young", rcKey(rcSeg(1, remotemeta.CopyFinished)), young, "claimed"},
		{"DELETE_FINISHED counts as unclaimed", rcKey(rcSeg(5, remotemeta.DeleteFinished)), old, "orphan"},
		{"unclaimed old", rcKey(rcSeg(6, remotemeta.CopyStarted)), old, "orphan"},
		{"unclaimed exactly the grace old", rcKey(rcSeg(6, remotemeta.CopyStarted)), now.Add(-reconcileGrace), "orphan"},
		{"unclaimed young", rcKey(rcSeg(6, remotemeta.CopyStarted)), young, "young"},
		{"unclaimed modified in the future (clock skew)", rcKey(rcSeg(6, remotemeta.CopyStarted)), now.Add(time.Minute), "young"},
		{"unclaimed without LastModified", rcKey(rcSeg(6, remotemeta.CopyStarted)), time.Time{}, "young"},
		{"pending-delete topic counts as claimed", rcKey(pending), old, "claimed"},
		{"topic name cut in the key: claimed by topic id", rcKey(longTopicSeg()), old, "claimed"},
		{"claimed id in another partition", rcKey(otherPartition), old, "orphan"},
		{"claimed id under another topic id", rcKey(otherTopic), old, "orphan"},
		{"a cluster's store marker is Strata's own", TierStoreKey("00ff"), old, "claimed"},
		{"foreign: someone else's object", "backups/2024-01-01.tar.gz", old, "foreign"},
		{"foreign: top-level object", "README", old, "foreign"},
		{"malformed: bad segment file name", "t-" + strings.Repeat("0", 32) + "/0/garbage.log", old, "foreign"},
		{"malformed: unknown suffix", "t-" + hexID + "/0/" + strings.Repeat("0", 20) + "-" + hexID + ".bak", old, "foreign"},
		{"malformed: uppercase hex", "t-" + strings.ToUpper(hexID) + "/0/" + strings.Repeat("0", 20) + "-" + hexID + ".log", old, "foreign"},
		{"malformed: zero segment id", "t-" + hexID + "/0/" + strings.Repeat("0", 20) + "-" + strings.Repeat("0", 32) + ".log", old, "foreign"},
		{"malformed: non-canonical partition", "t-" + hexID + "/00/" + strings.Repeat("0", 20) + "-" + hexID + ".log", old, "foreign"},
	}
	claims := rcClaims(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oi := objstore.ObjectInfo{Key: tc.key, Size: 42, LastModified: tc.mod}
			plan := PlanOrphans([]objstore.ObjectInfo{oi}, claims.Claimed, now.UnixMilli(), reconcileGrace)
			got := map[string]int{
				"claimed": plan.Claimed.Objects, "orphan": len(plan.Orphans),
				"young": len(plan.Young), "foreign": len(plan.Foreign),
			}
			for class, n := range got {
				if want := boolInt(class == tc.want); n != want {
					t.Errorf("%s: %d objects, want %d (plan %+v)", class, n, want, plan)
				}
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestPlanOrphansPartitionsTheListing: every object lands in exactly one
// class, in listing order, and only unclaimed old segment objects are
// orphans.
// TestPlanOrphansRefusesNoClaimsOrANegativeGrace: without a claimed func
// every object would look unclaimed, and a negative grace would make young
// objects old: both are a caller's bug, and panic; a zero grace is not.
func TestPlanOrphansRefusesNoClaimsOrANegativeGrace(t *testing.T) {
	none := func(base.TopicID, int32, remotemeta.SegmentID) bool { return false }
	mustPanic(t, "PlanOrphans without a claimed func", func() { PlanOrphans(nil, nil, 0, time.Hour) })
	mustPanic(t, "PlanOrphans with a negative grace", func() { PlanOrphans(nil, none, 0, -time.Millisecond) })
	PlanOrphans(nil, none, 0, 0)
}

func TestPlanOrphansPartitionsTheListing(t *testing.T) {
	claims := rcClaims(t)
	rapid.Check(t, func(t *rapid.T) {
		nowMs := rapid.Int64Range(0, 1<<40).Draw(t, "nowMs")
		graceMs := rapid.Int64Range(0, 1<<20).Draw(t, "graceMs")
		objs := rapid.SliceOf(rapid.Custom(func(t *rapid.T) objstore.ObjectInfo {
			key := "foreign/" + rapid.StringMatching(`[a-z]{1,5}`).Draw(t, "name")
			if n := rapid.IntRange(0, 8).Draw(t, "seg"); n > 0 {
				key = SegmentKey(rcSeg(n, remotemeta.CopyFinished), Suffixes[rapid.IntRange(0, len(Suffixes)-1).Draw(t, "suffix")])
			}
			modMs := rapid.Int64Range(nowMs-2*graceMs-1, nowMs+10).Draw(t, "modMs")
			return objstore.ObjectInfo{Key: key, LastModified: time.UnixMilli(modMs)}
		})).Draw(t, "objects")
		for i := range objs {
			objs[i].Size = int64(i) // the listing position, to check the order
		}
		plan := PlanOrphans(objs, claims.Claimed, nowMs, time.Duration(graceMs)*time.Millisecond)
		if n := len(plan.Orphans) + len(plan.Young) + len(plan.Foreign) + plan.Claimed.Objects; n != len(objs) {
			t.Fatalf("%d objects classified, %d listed", n, len(objs))
		}
		for _, list := range [][]objstore.ObjectInfo{plan.Orphans, plan.Young, plan.Foreign} {
			if !slices.IsSortedFunc(list, func(a, b objstore.ObjectInfo) int { return int(a.Size - b.Size) }) {
				t.Fatalf("not in listing order: %v", list)
			}
		}
		for _, oi := range plan.Orphans {
			k, err := ParseObjectKey(oi.Key)
			if err != nil || claims.Claimed(k.TopicID, k.Partition, k.Segment) || nowMs-oi.LastModified.UnixMilli() < graceMs {
				t.Fatalf("orphan %s (modified %d, now %d, grace %d) is foreign, claimed or young", oi.Key, oi.LastModified.UnixMilli(), nowMs, graceMs)
			}
		}
	})
}

func TestNewClaimsRefusesAViewNotLoaded(t *testing.T) {
	if _, err := NewClaims([]PartitionView{mustView(), {}}, nil); !errors.Is(err, errClaimsNotLoaded) {
		t.Fatalf("NewClaims with a view not loaded: %v, want errClaimsNotLoaded", err)
	}
}

func TestReconcilerRefusesZeroClaims(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Run with a zero Claims did not panic")
		}
	}()
	r := Reconciler{Store: objstore.NewMem(), Clock: testClock, Grace: reconcileGrace}
	_, _ = r.Run(context.Background(), "", Claims{})
}

func TestReconcilerValidate(t *testing.T) {
	for _, r := range []Reconciler{
		{Clock: testClock, Grace: time.Hour},
		{Store: objstore.NewMem(), Grace: time.Hour},
		{Store: objstore.NewMem(), Clock: testClock},
	} {
		if _, err := r.Run(context.Background(), "", rcClaims(t)); !errors.Is(err, ErrInvalidReconciler) {
			t.Errorf("Run(%+v) = %v, want ErrInvalidReconciler", r, err)
		}
	}
}

// bucket is a store with, under testTopicID partition 0, every object of
// claimed segment 1 (10 bytes each) and of unclaimed segments 5
// (DELETE_FINISHED) and 6 (never in metadata) (100 bytes each); and one
// foreign object of 7 bytes.
type bucket struct {
	store    objstore.Store
	claimed  []string
	orphans  []string
	foreign  string
	orphanSz int64
}

func newBucket(t *testing.T, store objstore.Store) bucket {
	t.Helper()
	b := bucket{store: store, foreign: "backups/etc.tar"}
	put := func(key string, n int) {
		if err := store.Put(context.Background(), key, bytes.NewReader(make([]byte, n)), int64(n)); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range Suffixes {
		b.claimed = append(b.claimed, SegmentKey(rcSeg(1, remotemeta.CopyFinished), s))
		put(b.claimed[len(b.claimed)-1], 10)
		for _, n := range []int{5, 6} {
			b.orphans = append(b.orphans, SegmentKey(rcSeg(n, remotemeta.CopyStarted), s))
			put(b.orphans[len(b.orphans)-1], 100)
			b.orphanSz += 100
		}
	}
	put(b.foreign, 7)
	return b
}

func (b bucket) present(t *testing.T, key string) bool {
	t.Helper()
	_, err := b.store.Head(context.Background(), key)
	if err != nil && !errors.Is(err, objstore.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

func (b bucket) checkPresent(t *testing.T, keys []string, want bool) {
	t.Helper()
	for _, k := range keys {
		if got := b.present(t, k); got != want {
			t.Errorf("%s present = %v, want %v", k, got, want)
		}
	}
}

func runReconciler(t *testing.T, r *Reconciler, prefix string) ReconcileReport {
	t.Helper()
	rep, err := r.Run(context.Background(), prefix, rcClaims(t))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestReconcilerDeletesOrphansAfterGrace(t *testing.T) {
	stores := map[string]func(t *testing.T) objstore.Store{
		"mem": func(*testing.T) objstore.Store { return objstore.NewMem() },
		"dir": func(t *testing.T) objstore.Store {
			s, err := objstore.NewDir(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) {
			clk := clock.NewManual(time.Now())
			b := newBucket(t, newStore(t))
			r := &Reconciler{Store: b.store, Clock: clk, Grace: reconcileGrace}

			rep := runReconciler(t, r, "")
			if rep.Young != (ObjectCount{len(b.orphans), b.orphanSz}) || rep.Orphans.Objects != 0 || rep.Deleted.Objects != 0 {
				t.Fatalf("inside the grace period: %+v, want every unclaimed object young", rep)
			}
			b.checkPresent(t, b.orphans, true)

			clk.Advance(reconcileGrace + time.Minute)
			rep = runReconciler(t, r, "")
			want := ObjectCount{len(b.orphans), b.orphanSz}
			if rep.Orphans != want || rep.Deleted != want || rep.Failed.Objects != 0 || rep.DeleteErr != nil {
				t.Errorf("after the grace period: %+v, want %+v orphans deleted", rep, want)
			}
			if rep.Claimed != (ObjectCount{len(b.claimed), 10 * int64(len(b.claimed))}) || rep.Foreign != (ObjectCount{1, 7}) || rep.Young.Objects != 0 {
				t.Errorf("claimed %+v, foreign %+v, young %+v", rep.Claimed, rep.Foreign, rep.Young)
			}
			b.checkPresent(t, b.orphans, false)
			b.checkPresent(t, append(slices.Clone(b.claimed), b.foreign), true)

			if rep = runReconciler(t, r, ""); rep.Orphans.Objects != 0 || rep.Deleted.Objects != 0 {
				t.Errorf("second run: %+v, want nothing left to delete", rep)
			}
		})
	}
}

// TestReconcilerDirMixedAges ages real files one by one: only the old
// orphan goes, and only from the prefix listed.
func TestReconcilerDirMixedAges(t *testing.T) {
	root := t.TempDir()
	store, err := objstore.NewDir(root)
	if err != nil {
		t.Fatal(err)
	}
	b := newBucket(t, store)
	other := rcSeg(6, remotemeta.CopyStarted)
	other.TP.Partition = 3
	otherKey := rcKey(other)
	if err := store.Put(context.Background(), otherKey, bytes.NewReader([]byte("x")), 1); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	oldKey, youngKey := b.orphans[0], b.orphans[1]
	for _, k := range append([]string{oldKey, otherKey, b.foreign}, b.claimed...) {
		aged := now.Add(-2 * reconcileGrace)
		if err := os.Chtimes(filepath.Join(root, filepath.FromSlash(k)), aged, aged); err != nil {
			t.Fatal(err)
		}
	}
	r := &Reconciler{Store: store, Clock: clock.NewManual(now), Grace: reconcileGrace}
	rep := runReconciler(t, r, PartitionPrefix(testTopicID, testTP))
	if rep.Deleted != (ObjectCount{1, 100}) || rep.Young.Objects != len(b.orphans)-1 || rep.Foreign.Objects != 0 {
		t.Errorf("report %+v, want only %s deleted", rep, oldKey)
	}
	b.checkPresent(t, []string{oldKey}, false)
	b.checkPresent(t, []string{youngKey, otherKey, b.foreign}, true)
	b.checkPresent(t, b.claimed, true)
}

func TestReconcilerDryRunDeletesNothing(t *testing.T) {
	clk := clock.NewManual(time.Now())
	b := newBucket(t, objstore.NewMem())
	clk.Advance(2 * reconcileGrace)
	r := &Reconciler{Store: b.store, Clock: clk, Grace: reconcileGrace, DryRun: true}
	rep := runReconciler(t, r, "")
	if !rep.DryRun || rep.Orphans != (ObjectCount{len(b.orphans), b.orphanSz}) || rep.Deleted.Objects != 0 || len(rep.Plan.Orphans) != len(b.orphans) {
		t.Errorf("dry run: %+v, want every orphan found and none deleted", rep)
	}
	b.checkPresent(t, b.orphans, true)
}

// TestReconcilerFailedDeleteIsRetried: a failed delete is reported, not
// fatal; the other orphans go, and the next Run deletes it.
func TestReconcilerFailedDeleteIsRetried(t *testing.T) {
	clk := clock.NewManual(time.Now())
	mem := objstore.NewMem()
	b := newBucket(t, mem)
	clk.Advance(2 * reconcileGrace)
	injected := errors.New("injected: 503 slow down")
	stuck := b.orphans[2]
	failing := true
	b.store = objstore.NewFaulty(mem, func(op objstore.Op, key string) error {
		if op == objstore.OpDelete && key == stuck && failing {
			return injected
		}
		return nil
	})
	r := &Reconciler{Store: b.store, Clock: clk, Grace: reconcileGrace}
	rep := runReconciler(t, r, "")
	if rep.Failed != (ObjectCount{1, 100}) || rep.Deleted.Objects != len(b.orphans)-1 || !errors.Is(rep.DeleteErr, injected) {
		t.Fatalf("report %+v, want one failed delete of %s", rep, stuck)
	}
	b.checkPresent(t, []string{stuck}, true)

	failing = false
	rep = runReconciler(t, r, "")
	if rep.Deleted != (ObjectCount{1, 100}) || rep.Failed.Objects != 0 || rep.DeleteErr != nil {
		t.Errorf("retry: %+v, want %s deleted", rep, stuck)
	}
	b.checkPresent(t, b.orphans, false)
}

func TestReconcilerFailedListDeletesNothing(t *testing.T) {
	clk := clock.NewManual(time.Now())
	mem := objstore.NewMem()
	b := newBucket(t, mem)
	clk.Advance(2 * reconcileGrace)
	injected := errors.New("injected: list failed")
	store := objstore.NewFaulty(mem, func(op objstore.Op, _ string) error {
		if op == objstore.OpList {
			return injected
		}
		return nil
	})
	r := &Reconciler{Store: store, Clock: clk, Grace: reconcileGrace}
	if _, err := r.Run(context.Background(), "", rcClaims(t)); !errors.Is(err, injected) {
		t.Fatalf("Run with a failing List: %v, want the list error", err)
	}
	b.checkPresent(t, b.orphans, true)
}

package tier

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// The bucket reconciler (DESIGN §4): it lists the bucket and removes the
// segment objects that no metadata claims, after a grace period. The tier
// loop deletes every object whose metadata it knows (DANGLING included);
// the reconciler is for the objects whose metadata is gone or never was:
// a delete acknowledged but not done, a DELETE_FINISHED written for an
// object a lagging listing still showed, metadata lost with a topic.
// PlanOrphans decides; Reconciler.Run lists, plans and deletes.

// ObjectCount is a number of objects and their total size.
type ObjectCount struct {
	Objects int
	Bytes   int64
}

func (c *ObjectCount) add(oi objstore.ObjectInfo) {
	c.Objects++
	c.Bytes += oi.Size
}

// OrphanPlan is what the reconciler does with one listing. Each list is in
// listing order; an object of the listing is in at most one of them.
type OrphanPlan struct {
	// Orphans are segment objects that no metadata claims, last modified
	// at least the grace period ago: the executor deletes them.
	Orphans []objstore.ObjectInfo
	// Young are segment objects that no metadata claims yet, inside the
	// grace period: a copy may be in flight, its COPY_STARTED proposed but
	// not yet in the claims. An object without LastModified is young: an
	// age the store does not say is not an age to delete on.
	Young []objstore.ObjectInfo
	// Foreign are keys that are not segment object keys (ParseObjectKey
	// refuses them) nor store markers (TierStoreKey): someone else's data
	// in a shared bucket or prefix, or debris no Strata version wrote.
	// Never deleted.
	Foreign []objstore.ObjectInfo
	// Claimed counts the objects that metadata claims, and the store
	// markers; they are not kept, since they are nearly all of a listing.
	Claimed ObjectCount
}

// ClaimedFunc reports whether metadata claims the segment attempt
// segment of partition partition of topic topicID. The partition is an
// index, not a TopicPartition: object keys carry the topic name cut to
// fit (topicKeyName), so only the topic id identifies the topic.
type ClaimedFunc func(topicID base.TopicID, partition int32, segment remotemeta.SegmentID) bool

// PlanOrphans classifies a listing (pure: no I/O, no clock). An object is
// an orphan when its key parses as a segment object key, claimed says no,
// and it was last modified at or before nowMs - grace; unclaimed but newer
// is Young; a key that does not parse is Foreign. Pass Claims.Claimed as
// claimed.
func PlanOrphans(objects []objstore.ObjectInfo, claimed ClaimedFunc, nowMs int64, grace time.Duration) OrphanPlan {
	p := newOrphanPlanner(claimed, nowMs, grace)
	for _, oi := range objects {
		p.add(oi)
	}
	return p.plan
}

// orphanPlanner is PlanOrphans one object at a time, so that Run keeps in
// memory only the unclaimed objects of a listing, not the whole of it.
type orphanPlanner struct {
	claimed  ClaimedFunc
	cutoffMs int64 // an object last modified after it is young
	plan     OrphanPlan
}

func newOrphanPlanner(claimed ClaimedFunc, nowMs int64, grace time.Duration) *orphanPlanner {
	if claimed == nil || grace < 0 {
		panic(fmt.Sprintf("tier: orphan planner needs a claimed func and a grace >= 0 (grace %v)", grace))
	}
	return &orphanPlanner{claimed: claimed, cutoffMs: nowMs - grace.Milliseconds()}
}

func (p *orphanPlanner) add(oi objstore.ObjectInfo) {
	k, err := ParseObjectKey(oi.Key)
	switch {
	case strings.HasPrefix(oi.Key, TierStoreKeyPrefix):
		p.plan.Claimed.add(oi) // the cluster's store marker: Strata's own
	case err != nil:
		p.plan.Foreign = append(p.plan.Foreign, oi)
	case p.claimed(k.TopicID, k.Partition, k.Segment):
		p.plan.Claimed.add(oi)
	case oi.LastModified.IsZero() || oi.LastModified.UnixMilli() > p.cutoffMs:
		p.plan.Young = append(p.plan.Young, oi)
	default:
		p.plan.Orphans = append(p.plan.Orphans, oi)
	}
}

// Claims is the set of segment attempts that metadata claims, from one
// metadata image: every segment of a partition view in any state but
// DELETE_FINISHED, and every object of a topic pending remote delete
// (its deletion owns them). The zero value is not built, and Run refuses
// it: a Claims that claims nothing would make every object an orphan.
type Claims struct {
	built    bool
	segments map[segmentClaim]struct{}
	topics   map[base.TopicID]struct{} // pending remote delete
}

type segmentClaim struct {
	topicID   base.TopicID
	partition int32
	segment   remotemeta.SegmentID
}

var errClaimsNotLoaded = errors.New("tier: claims from a partition view that is not loaded")

// NewClaims builds the claims of views (one per partition, each loaded:
// a view that is not loaded knows nothing, and would let its partition's
// objects look orphaned) and of the topics pending remote delete.
func NewClaims(views []PartitionView, pendingTopicDeletes []base.TopicID) (Claims, error) {
	c := Claims{
		built:    true,
		segments: make(map[segmentClaim]struct{}),
		topics:   make(map[base.TopicID]struct{}, len(pendingTopicDeletes)),
	}
	for i, v := range views {
		if !v.Loaded() {
			return Claims{}, fmt.Errorf("%w (view %d of %d)", errClaimsNotLoaded, i, len(views))
		}
		for _, s := range v.segs {
			if s.State != remotemeta.DeleteFinished {
				c.segments[segmentClaim{s.TopicID, s.TP.Partition, s.ID}] = struct{}{}
			}
		}
	}
	for _, id := range pendingTopicDeletes {
		c.topics[id] = struct{}{}
	}
	return c, nil
}

// Claimed is a ClaimedFunc.
func (c Claims) Claimed(topicID base.TopicID, partition int32, segment remotemeta.SegmentID) bool {
	if _, ok := c.topics[topicID]; ok {
		return true
	}
	_, ok := c.segments[segmentClaim{topicID, partition, segment}]
	return ok
}

// Built reports whether c came from NewClaims.
func (c Claims) Built() bool { return c.built }

// Reconciler runs the bucket reconciler. It starts no goroutine; one Run
// at a time per prefix (two would only delete the same orphans twice,
// which is harmless, as Delete is idempotent).
type Reconciler struct {
	Store objstore.Store
	Clock clock.Clock
	// Grace is how old an unclaimed object must be to be deleted. It must
	// be longer than a copy takes from its COPY_STARTED proposal to its
	// last Put, plus how old the claims may be when Run is called, plus
	// the skew between the store's clock and Clock.
	Grace time.Duration
	// DryRun plans and reports but deletes nothing.
	DryRun bool
}

// ErrInvalidReconciler classifies the errors of Reconciler.Validate.
var ErrInvalidReconciler = errors.New("tier: invalid reconciler")

// Validate checks the fields: Store and Clock set, Grace positive (a zero
// grace would delete the objects of copies in flight).
func (r *Reconciler) Validate() error {
	switch {
	case r.Store == nil:
		return fmt.Errorf("%w: no Store", ErrInvalidReconciler)
	case r.Clock == nil:
		return fmt.Errorf("%w: no Clock", ErrInvalidReconciler)
	case r.Grace <= 0:
		return fmt.Errorf("%w: grace %v must be positive", ErrInvalidReconciler, r.Grace)
	}
	return nil
}

// maxReportedDeleteErrs bounds ReconcileReport.DeleteErr: against a store
// that is down, every delete fails the same way.
const maxReportedDeleteErrs = 8

// ReconcileReport is the outcome of one Run, for metrics and for an
// operator's listing of orphans.
type ReconcileReport struct {
	Prefix string
	DryRun bool
	// Plan holds the objects themselves (orphans, young, foreign).
	Plan    OrphanPlan
	Claimed ObjectCount
	Orphans ObjectCount // found; Deleted + Failed once a run that is not dry completes
	Deleted ObjectCount
	Failed  ObjectCount // deletes that failed: the next Run retries them
	Young   ObjectCount
	Foreign ObjectCount
	// DeleteErr joins the first maxReportedDeleteErrs delete failures;
	// nil when none failed.
	DeleteErr error
}

// Run lists the objects under prefix, plans them against claims, and
// deletes the orphans unless DryRun. claims must cover everything under
// prefix: every partition of every topic in the metadata image, and the
// topics pending remote delete, never a subset (the objects of a
// partition left out would be orphans). A failed delete is counted in the
// report, not returned: the orphan is still an orphan on the next Run.
// The error is for what stops the run: an invalid Reconciler, a failed
// List (nothing is deleted then), or ctx ending.
func (r *Reconciler) Run(ctx context.Context, prefix string, claims Claims) (ReconcileReport, error) {
	if !claims.Built() {
		panic("tier: Reconciler.Run with a zero Claims (use NewClaims)")
	}
	rep := ReconcileReport{Prefix: prefix, DryRun: r.DryRun}
	if err := r.Validate(); err != nil {
		return rep, err
	}
	p := newOrphanPlanner(claims.Claimed, r.Clock.Now().UnixMilli(), r.Grace)
	err := r.Store.List(ctx, prefix, func(oi objstore.ObjectInfo) error {
		p.add(oi)
		return nil
	})
	rep.setPlan(p.plan)
	if err != nil {
		return rep, fmt.Errorf("tier: reconcile %q: list: %w", prefix, err)
	}
	if r.DryRun {
		return rep, nil
	}
	var errs []error
	for _, oi := range rep.Plan.Orphans {
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("tier: reconcile %q: stopped: %w", prefix, err)
		}
		if err := r.Store.Delete(ctx, oi.Key); err != nil {
			rep.Failed.add(oi)
			if len(errs) < maxReportedDeleteErrs {
				errs = append(errs, err)
			}
			continue
		}
		rep.Deleted.add(oi)
	}
	rep.DeleteErr = errors.Join(errs...)
	return rep, nil
}

func (rep *ReconcileReport) setPlan(plan OrphanPlan) {
	rep.Plan = plan
	rep.Claimed = plan.Claimed
	rep.Orphans, rep.Young, rep.Foreign = countOf(plan.Orphans), countOf(plan.Young), countOf(plan.Foreign)
}

func countOf(objects []objstore.ObjectInfo) ObjectCount {
	var c ObjectCount
	for _, oi := range objects {
		c.add(oi)
	}
	return c
}

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/tier"
)

// listOrphans lists the whole store and plans it against claims with no
// grace period: the broker is stopped, so no copy is in flight, and every
// segment object that no metadata claims is an orphan, however young. It
// deletes nothing. While it lists, a progress bar counts the objects on
// stderr when stderr is a terminal (a pipe or a log gets no bar).
func listOrphans(ctx context.Context, store objstore.Store, claims tier.Claims, now time.Time) (tier.OrphanPlan, error) {
	bar := listingBar(os.Stderr, term.IsTerminal(int(os.Stderr.Fd())))
	var objects []objstore.ObjectInfo
	err := store.List(ctx, "", func(oi objstore.ObjectInfo) error {
		objects = append(objects, oi)
		return bar.Add(1)
	})
	_ = bar.Finish() // only the drawing of the bar can fail
	if err != nil {
		return tier.OrphanPlan{}, fmt.Errorf("listing the bucket: %w", err)
	}
	return tier.PlanOrphans(objects, claims.Claimed, now.UnixMilli(), 0), nil
}

// listingBar is a spinner with a count: a listing's length is not known
// until it ends.
func listingBar(w io.Writer, visible bool) *progressbar.ProgressBar {
	return progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetVisibility(visible),
		progressbar.OptionSetDescription("listing the bucket"),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("objects"),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}

// printOrphans prints the unclaimed segment objects (with no grace, a
// young object is one whose store gives no age or a future one) and a
// summary.
func printOrphans(w io.Writer, plan tier.OrphanPlan, now time.Time) {
	unclaimed := append(append([]objstore.ObjectInfo(nil), plan.Orphans...), plan.Young...)
	var bytes int64
	fmt.Fprintf(w, "\norphans (segment objects that no metadata claims; nothing deleted):\n")
	for _, oi := range unclaimed {
		bytes += oi.Size
		age := "age unknown"
		if !oi.LastModified.IsZero() {
			age = "modified " + now.Sub(oi.LastModified).Round(time.Second).String() + " ago"
		}
		fmt.Fprintf(w, "  %s  %s  %s\n", oi.Key, humanBytes(oi.Size), age)
	}
	if len(unclaimed) == 0 {
		fmt.Fprintf(w, "  none\n")
	}
	fmt.Fprintf(w, "bucket: %d claimed objects (%s), %d orphans (%s), %d foreign keys (not Strata's, never deleted)\n",
		plan.Claimed.Objects, humanBytes(plan.Claimed.Bytes), len(unclaimed), humanBytes(bytes), len(plan.Foreign))
}

package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/strata-broker/strata/internal/log"
)

func inspectIndexCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "index FILE.index|FILE.timeindex",
		Short: "Dump a segment's offset or time index and check every entry against its .log (like Kafka's DumpLogSegments --index-sanity-check)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return dumpIndex(cmd.OutOrStdout(), args[0])
		},
	}
}

// dumpIndex prints one line per entry and fails if any entry disagrees
// with the segment's .log.
func dumpIndex(w io.Writer, path string) error {
	r, err := log.InspectIndex(path)
	if err != nil {
		return fmt.Errorf("cannot inspect index %s: %v", path, unwrapPath(err))
	}
	fmt.Fprintf(w, "Dumping %s (%d entries)\n", path, len(r.Entries))
	for _, e := range r.Entries {
		if r.Time {
			fmt.Fprintf(w, "timestamp: %d offset: %d\n", e.Timestamp, e.Offset)
		} else {
			fmt.Fprintf(w, "offset: %d position: %d\n", e.Offset, e.Position)
		}
	}
	if len(r.Problems) > 0 {
		for _, p := range r.Problems {
			fmt.Fprintf(w, "mismatch: %s\n", p)
		}
		return fmt.Errorf("index %s disagrees with %s in %d entries: stop the broker and delete the index file; Strata rebuilds a missing index from the .log when it opens the partition",
			path, r.LogPath, len(r.Problems))
	}
	fmt.Fprintf(w, "%d entries, all consistent with the %d batches of %s\n", len(r.Entries), r.Batches, r.LogPath)
	return nil
}

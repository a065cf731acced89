package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/broker"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// `strata inspect tier` (DESIGN §8): the tier map of one partition of a
// stopped broker, from its data dir (the metadata is replayed offline,
// metadata.LoadOffline) and, with --orphans, its bucket. It changes
// nothing: the metadata is read from a copy, the bucket is only listed.

type inspectTierFlags struct {
	serve     serveFlags // --config, --data-dir, --override, as serve reads them
	topic     string
	partition int32
	orphans   bool
}

func inspectTierCmd() *cobra.Command {
	var f inspectTierFlags
	cmd := &cobra.Command{
		Use:   "tier --topic NAME [--partition N]",
		Short: "Print a partition's tier map (local, remote, both), check its coverage, list orphans",
		Long: `Print which offset ranges of a partition are local, remote or both, with
the state of each remote segment, and check that [logStart, logEnd) is
covered with no gap and no double count (exit status 1 if not).

It reads a stopped broker's data dir (the same --config, --data-dir and
--override as serve): the metadata is replayed from a copy of its Raft log,
so nothing is modified; a running broker is refused. --orphans also lists
the bucket and prints the segment objects that no metadata claims (no grace
period applies, since no copy is in flight); it deletes nothing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return inspectTier(cmd.Context(), cmd.OutOrStdout(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.serve.configFile, "config", "", "the broker's server.properties file")
	fl.StringVar(&f.serve.dataDir, "data-dir", "", "the broker's data directory (sets log.dirs)")
	fl.StringArrayVar(&f.serve.overrides, "override", nil, "key=value: set any broker config (repeatable)")
	fl.StringVar(&f.topic, "topic", "", "the topic (required)")
	fl.Int32Var(&f.partition, "partition", 0, "the partition index")
	fl.BoolVar(&f.orphans, "orphans", false, "also list the bucket's objects that no metadata claims (deletes nothing)")
	_ = cmd.MarkFlagRequired("topic")
	return cmd
}

func inspectTier(ctx context.Context, w io.Writer, f inspectTierFlags) error {
	flags, err := f.serve.flagConfigs()
	if err != nil {
		return err
	}
	cfg, err := config.LoadBroker(f.serve.configFile, os.Environ(), flags)
	if err != nil {
		return err
	}
	loaded, err := metadata.LoadOffline(cfg.MetadataDir)
	if errors.Is(err, metadata.ErrNoMetadata) {
		return fmt.Errorf("no metadata in %s: is --data-dir (or --config) the broker's?", cfg.MetadataDir)
	}
	if err != nil {
		return fmt.Errorf("reading the metadata in %s: %w", cfg.MetadataDir, err)
	}
	img := loaded.Image
	t, ok := img.Topics[f.topic]
	if !ok {
		return fmt.Errorf("topic %q is not in the metadata in %s (%d topics)", f.topic, cfg.MetadataDir, len(img.Topics))
	}
	if f.partition < 0 || int(f.partition) >= len(t.Partitions) {
		return fmt.Errorf("topic %q has no partition %d (it has %d)", f.topic, f.partition, len(t.Partitions))
	}
	tp := base.TopicPartition{Topic: t.Name, Partition: f.partition}
	local, err := readLocalPartition(filepath.Join(cfg.LogDirs[0], t.Name+"-"+strconv.Itoa(int(f.partition))))
	if err != nil {
		return err
	}
	segs := img.RemoteSegments(t.ID, f.partition)
	m := newPartitionTierMap(local, segs)
	printTierHeader(w, tp, t.ID, loaded, cfg.MetadataDir, local, m)
	printTierMap(w, m.spans)
	coverageErr := checkCoverage(m.log, m.spans)
	if coverageErr == nil {
		fmt.Fprintf(w, "coverage: %v complete, no gaps, no double count\n", m.log)
	}
	printRemoteSegments(w, segs)
	if f.orphans {
		if err := inspectOrphans(ctx, w, cfg, img); err != nil {
			return errors.Join(coverageErr, err)
		}
	}
	return coverageErr
}

// partitionTierMap is one partition's offsets and where they live.
type partitionTierMap struct {
	log           base.Range // [logStart, logEnd)
	localLogStart base.Offset
	tieredNext    base.Offset // one past the last COPY_FINISHED offset; log.Start when none
	spans         []tierSpan
}

// newPartitionTierMap maps local and remote data. The log end is the
// local log's; with no local segments (the partition lives on another
// broker) it is the tiered end. Every COPY_FINISHED segment counts,
// whatever its leader-epoch history: the quorum refuses two that overlap
// with the same history, so an overlap here is a double count to report.
func newPartitionTierMap(local localPartition, segs []remotemeta.RemoteSegment) partitionTierMap {
	var finished []remotemeta.RemoteSegment
	m := partitionTierMap{log: base.Range{Start: local.LogStart, End: local.LogStart}}
	m.tieredNext = local.LogStart
	for _, s := range segs {
		if s.State == remotemeta.CopyFinished {
			finished = append(finished, s)
			m.tieredNext = max(m.tieredNext, s.Range.End)
		}
	}
	ranges := make([]base.Range, len(local.Segments))
	for i, s := range local.Segments {
		ranges[i] = s.Range
	}
	if n := len(ranges); n > 0 {
		m.localLogStart = max(ranges[0].Start, local.LogStart)
		m.log.End = max(ranges[n-1].End, local.LogStart)
	} else {
		m.localLogStart, m.log.End = m.tieredNext, m.tieredNext
	}
	m.spans = buildTierMap(m.log, finished, ranges)
	return m
}

func printTierHeader(w io.Writer, tp base.TopicPartition, topicID base.TopicID, loaded metadata.OfflineImage,
	metaDir string, local localPartition, m partitionTierMap,
) {
	fmt.Fprintf(w, "tier map of %v (topic id %x)\n", tp, topicID[:])
	fmt.Fprintf(w, "metadata: %s, image version %d (snapshot at %d, log to %d, %d commands refused on replay)\n",
		metaDir, loaded.Image.Version, loaded.SnapshotIndex, loaded.LastIndex, loaded.Rejected)
	if local.Exists {
		fmt.Fprintf(w, "local:    %s, %d segments\n", local.Dir, len(local.Segments))
	} else {
		fmt.Fprintf(w, "local:    %s does not exist: no local data on this broker\n", local.Dir)
	}
	fmt.Fprintf(w, "offsets:  log start %d, local log start %d, tiered next %d, log end %d\n\n",
		m.log.Start, m.localLogStart, m.tieredNext, m.log.End)
}

// printTierMap prints one line per span, aligned:
//
//	[0, 1200)     remote        COPY_FINISHED  seg 3f2a…  1.2 MiB
func printTierMap(w io.Writer, spans []tierSpan) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range spans {
		fmt.Fprintf(tw, "%v\t%s", s.Range, s.where())
		for _, r := range s.Remote {
			fmt.Fprintf(tw, "\t%v\tseg %s\t%s", r.State, shortID(r.ID), humanBytes(r.SizeBytes))
		}
		fmt.Fprintln(tw)
	}
	_ = tw.Flush()
}

// printRemoteSegments lists every segment of the partition in metadata,
// in every state, with what its state means for the data.
func printRemoteSegments(w io.Writer, segs []remotemeta.RemoteSegment) {
	fmt.Fprintf(w, "\nremote segments in metadata: %d\n", len(segs))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range segs {
		fmt.Fprintf(tw, "  %v\t%v\tseg %s\t%s\tepochs %s\t%s\n", s.Range, s.State, s.ID, humanBytes(s.SizeBytes),
			epochStarts(s.LeaderEpochs), stateMeaning(s.State))
	}
	_ = tw.Flush()
}

// epochStarts writes a leader-epoch lineage as epoch@start, comma-separated.
func epochStarts(l []base.EpochStart) string {
	parts := make([]string, len(l))
	for i, e := range l {
		parts[i] = fmt.Sprintf("%d@%d", e.Epoch, e.Start)
	}
	return strings.Join(parts, ",")
}

func stateMeaning(st remotemeta.State) string {
	switch st {
	case remotemeta.CopyStarted:
		return "upload in progress or interrupted: not served"
	case remotemeta.CopyFinished:
		return "served"
	case remotemeta.Dangling:
		return "failed upload: not served, the tier loop deletes it"
	case remotemeta.DeleteStarted:
		return "being deleted: not served"
	}
	return ""
}

// inspectOrphans lists the bucket against the claims of img.
func inspectOrphans(ctx context.Context, w io.Writer, cfg *config.Broker, img *metadata.Image) error {
	claims, err := broker.ClaimsOf(img)
	if err != nil {
		return fmt.Errorf("the metadata's claims on the bucket: %w", err)
	}
	if cfg.S3.Bucket == "" {
		if _, err := os.Stat(cfg.RemoteDir); err != nil {
			return fmt.Errorf("remote tier directory %s: %v (set strata.remote.dir)", cfg.RemoteDir, unwrapPath(err))
		}
	}
	store, err := openRemoteStore(ctx, cfg)
	if err != nil {
		return err
	}
	now := time.Now()
	plan, err := listOrphans(ctx, store, claims, now)
	if err != nil {
		return err
	}
	printOrphans(w, plan, now)
	return nil
}

// humanBytes is n in B, KiB, MiB, GiB or TiB, one decimal.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 3; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGT"[exp])
}

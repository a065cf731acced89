package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
)

// segmentFiles is the number and total size of the segment files (.log)
// in node n's directory of the tiered topic's partition.
func segmentFiles(t *testing.T, n *replicaNode) (count int, sizeBytes int64) {
	t.Helper()
	dir := filepath.Join(n.broker.DataDir(), tierTestTP.Topic+"-0")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".log") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // deleted since the listing
		}
		count++
		sizeBytes += info.Size()
	}
	return count, sizeBytes
}

// TestFollowerRetentionDeletesTieredLocalSegments (DESIGN §4 rule 5): the
// follower of a tiered topic deletes its local copies of the segments its
// leader tiered, as the leader does, keeping its log start (the leader's)
// while a consumer reads every offset from 0 through the leader (the old
// ones from the bucket). Made leader by a failover, the follower still
// serves every offset from 0: the ones it deleted locally from the bucket.
func TestFollowerRetentionDeletesTieredLocalSegments(t *testing.T) {
	c := newTierCluster(t)
	n1 := c.start(t, 1, false)
	n2 := c.start(t, 2, false)
	if _, err := c.meta.CreateTopic(t.Context(), metadata.CreateTopic{Name: tierTestTopic, Assignments: [][]int32{{1, 2}},
		Configs: map[string]string{
			"remote.storage.enable": "true",
			"segment.bytes":         "4096",
			"local.retention.bytes": "12288",
			"retention.bytes":       "-1",
		}}); err != nil {
		t.Fatal(err)
	}
	p1, p2 := n1.partition(t), n2.partition(t)
	waitUntil(t, "broker 1 to lead with both in sync", func() bool {
		return p1.IsLeader() && !p2.IsLeader() && slices.Equal(c.meta.Image().Topics[tierTestTopic].Partitions[0].ISR, []int32{1, 2})
	})

	// About 74 KB: some 18 segments of 4 KiB, of which the leader keeps
	// about three locally.
	values := produceValues(t, n1.addr, "a", 200)
	produced := int64(0)
	for _, v := range values {
		produced += int64(len(v))
	}
	_, lead := waitTiered(t, n1, p1)
	waitUntil(t, "the follower to catch up", func() bool {
		off := p2.Offsets()
		return off.LogEnd == lead.LogEnd && off.HighWatermark == lead.HighWatermark
	})
	leaderFiles, _ := segmentFiles(t, n1)
	waitUntil(t, "the follower to delete its tiered local segments", func() bool {
		files, size := segmentFiles(t, n2)
		return files <= leaderFiles && size < produced/2 && p2.Offsets().LocalStart == lead.LocalStart
	})
	if off := p2.Offsets(); off.LogStart != lead.LogStart || off.LogStart != 0 {
		t.Fatalf("follower offsets %+v: its log start moved off the leader's %d", off, lead.LogStart)
	}
	files, size := segmentFiles(t, n2)
	t.Logf("leader %+v with %d segment files; follower %+v with %d segment files of %d bytes; %d bytes produced",
		lead, leaderFiles, p2.Offsets(), files, size, produced)
	if got := consumeFrom(t, n1.addr, len(values)); !slices.EqualFunc(got, values, bytes.Equal) {
		t.Fatalf("consumed %d records through the leader, want the %d produced, in order", len(got), len(values))
	}

	// Broker 1 is fenced: broker 2, in the ISR, leads.
	c.fence(t, 1)
	waitUntil(t, "broker 2 to lead", func() bool { return p2.IsLeader() })
	if off := p2.Offsets(); off.LocalStart <= off.LogStart {
		t.Fatalf("the new leader's offsets %+v: it holds its whole log locally", off)
	}
	if got := consumeFrom(t, n2.addr, len(values)); !slices.EqualFunc(got, values, bytes.Equal) {
		t.Fatalf("consumed %d records through the new leader, want the %d produced, in order", len(got), len(values))
	}
	// Its tier loop goes on from where the old leader's stopped: what it
	// deleted as a follower left no gap in the tier.
	values = append(values, produceValues(t, n2.addr, "b", 100)...)
	if _, off := waitTiered(t, n2, p2); off.LogStart != 0 || off.LogEnd != base.Offset(len(values)) {
		t.Fatalf("the new leader's offsets %+v after tiering, want log start 0 and log end %d", off, len(values))
	}
	if got := consumeFrom(t, n2.addr, len(values)); !slices.EqualFunc(got, values, bytes.Equal) {
		t.Fatalf("consumed %d records through the new leader after it tiered, want the %d produced, in order", len(got), len(values))
	}

	// Unfenced, the old leader follows and deletes, as a follower now, its
	// copies of what the new leader tiered.
	c.unfence(t, 1)
	lead = p2.Offsets()
	waitUntil(t, "the old leader to follow and delete its tiered local segments", func() bool {
		off := p1.Offsets()
		return !p1.IsLeader() && off.LogEnd == lead.LogEnd && off.LocalStart == lead.LocalStart
	})
	if off := p1.Offsets(); off.LogStart != 0 {
		t.Fatalf("the old leader's offsets %+v as a follower: its log start moved", off)
	}
}

package broker

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/vfs"
)

// PartitionMetadataFile is the file kept in every partition directory
// (Kafka's partition.metadata: the topic id).
const PartitionMetadataFile = "partition.metadata"

// Reconcile brings the hosted partitions in line with the current image
// (planHosting): it deletes the data of those whose topic is gone or that
// no longer have a replica here, opens those newly assigned here, applies
// topic config changes, and gives each its role (applyRoleLocked).
//
// Deleting and opening are file work (fsyncs; an existing log's recovery)
// and happen outside the broker's lock, which every request takes to find
// its partition: under the lock the partitions that go are detached and
// those to open picked; outside it they are deleted and opened; under it
// again the opened ones are hosted and every partition takes its config
// and role. b.hosting keeps another Reconcile, a reopening of failed logs
// and Close from coming between those steps.
func (b *Broker) Reconcile() error {
	b.hosting.Lock()
	defer b.hosting.Unlock()
	img := b.opts.Meta.Image()
	b.mu.Lock()
	// Never go back to an older image, which could reopen a deleted
	// partition or undo a role.
	if b.mu.closed || (b.mu.version != 0 && img.Version <= b.mu.version) {
		b.mu.Unlock()
		return nil
	}
	ids := make(map[base.TopicPartition]base.TopicID, len(b.mu.parts))
	for tp, h := range b.mu.parts {
		ids[tp] = h.topicID
	}
	plan := planHosting(img, ids, b.opts.NodeID)
	gone := make([]*hosted, 0, len(plan.remove))
	for tp, why := range plan.remove {
		b.logger.Info("deleting partition: "+why.String(), "partition", tp.String())
		gone = append(gone, b.detachLocked(tp))
	}
	var toOpen []assignment
	for _, a := range plan.host {
		h, ok := b.mu.parts[a.tp]
		if ok && h.topicID != a.topic.ID {
			// Same name, new topic: the old one was deleted and
			// recreated (planHosting removes it first; this is the
			// backstop).
			gone = append(gone, b.detachLocked(a.tp))
			ok = false
		}
		if !ok {
			toOpen = append(toOpen, a)
		}
	}
	b.mu.Unlock()

	var errs []error
	for _, h := range gone {
		if err := h.p.Delete(); err != nil {
			errs = append(errs, fmt.Errorf("deleting %v: %w", h.p.TP(), err))
		}
	}
	opened, openErrs := b.openAll(img, toOpen)
	errs = append(errs, openErrs...)

	errs = append(errs, b.hostAndApplyRoles(img, plan.host, opened)...)
	if len(errs) == 0 {
		b.mu.Lock()
		b.mu.version = img.Version
		b.mu.Unlock()
	}
	return errors.Join(errs...)
}

// hostAndApplyRoles hosts the partitions opened for img and brings every
// one of as, the partitions img places here, to its config and role. A
// role change writes the partition's leader-epoch checkpoint (an fsync or
// two; at a failover, one for each partition this node takes over), so it
// runs in three steps: under the broker's lock, each partition's config is
// applied and what must stop before its role changes stops (prepareRole);
// outside it, each takes its role and epoch (roleMove.take); under it
// again, the broker's side of each role follows (applyRoleLocked, whose
// BecomeLeader or BecomeFollower then changes nothing). The caller holds
// b.hosting. It returns an error for each partition that failed.
func (b *Broker) hostAndApplyRoles(img *metadata.Image, as []assignment, opened []*hosted) []error {
	var errs []error
	b.mu.Lock()
	if b.mu.closed {
		b.mu.Unlock()
		return []error{closeUnhosted(opened)}
	}
	for _, h := range opened {
		b.hostLocked(h)
	}
	moves := make([]roleMove, 0, len(as))
	for _, a := range as {
		h, ok := b.mu.parts[a.tp]
		if !ok {
			continue // its open failed: the caller has why
		}
		if err := b.configureLocked(h, a.topic, configSources(img, b.opts.NodeID, a.topic)); err != nil {
			errs = append(errs, err)
			continue
		}
		moves = append(moves, b.prepareRoleLocked(h, a.part))
	}
	b.mu.Unlock()

	for i := range moves {
		moves[i].take()
	}

	b.mu.Lock()
	defer b.mu.Unlock()
	if b.mu.closed {
		return errs // Close closes every hosted partition
	}
	for _, m := range moves {
		err := m.err
		if err == nil {
			err = b.applyRoleLocked(m.h, m.pa)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("partition %v: %w", m.h.p.TP(), err))
		}
	}
	return errs
}

// detachLocked stops hosting tp (closingLocked) and returns it, for the
// caller to close or delete outside the lock.
func (b *Broker) detachLocked(tp base.TopicPartition) *hosted {
	h := b.mu.parts[tp]
	delete(b.mu.parts, tp)
	b.closingLocked(h)
	return h
}

// hostLocked hosts h, opened outside the lock, without a role yet.
func (b *Broker) hostLocked(h *hosted) {
	tp := h.p.TP()
	b.mu.parts[tp] = h
	b.trackTierStatsLocked(tp)
}

// closeUnhosted closes partitions opened for a broker that closed
// meanwhile.
func closeUnhosted(opened []*hosted) error {
	var errs []error
	for _, h := range opened {
		if err := h.p.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing %v: %w", h.p.TP(), err))
		}
	}
	return errors.Join(errs...)
}

// updateLocked applies to h, hosted here, its new config (from cs) and the
// role pa asks of this node, all under the broker's lock.
func (b *Broker) updateLocked(h *hosted, t *metadata.Topic, pa metadata.Partition, cs ConfigSources) error {
	if err := b.configureLocked(h, t, cs); err != nil {
		return err
	}
	if err := b.applyRoleLocked(h, pa); err != nil {
		return fmt.Errorf("partition %v: %w", h.p.TP(), err)
	}
	return nil
}

// configureLocked applies to h, hosted here, its config from cs if that
// changed.
func (b *Broker) configureLocked(h *hosted, t *metadata.Topic, cs ConfigSources) error {
	if !h.configs.equal(cs) {
		cfg, err := b.opts.Resolve(cs)
		if err != nil {
			return fmt.Errorf("topic %s config: %w", t.Name, err)
		}
		if err := h.p.SetConfig(cfg.WithSegmentJitter(h.jitter)); err != nil {
			return fmt.Errorf("topic %s config: %w", t.Name, err)
		}
		h.configs = cs
	}
	return nil
}

// open opens tp in the role pa gives this node, in pa's epoch, for
// hostLocked.
// It does file work and is called without the broker's lock, under
// b.hosting.
func (b *Broker) open(tp base.TopicPartition, t *metadata.Topic, pa metadata.Partition, cs ConfigSources) (*hosted, error) {
	cfg, err := b.opts.Resolve(cs)
	if err != nil {
		return nil, fmt.Errorf("topic %s config: %w", t.Name, err)
	}
	dir := b.partitionDir(tp)
	if err := claimDir(dir, t.ID); err != nil {
		return nil, fmt.Errorf("partition %v: %w", tp, err)
	}
	jitter := b.opts.Rand()
	p, err := partition.Open(partition.Options{
		Dir:         dir,
		TP:          tp,
		TopicID:     t.ID,
		LeaderEpoch: pa.LeaderEpoch,
		Config:      cfg.WithSegmentJitter(jitter),
		Clock:       b.opts.Clock,
		Logger:      b.logger,
		// The first open after a start restores the checkpointed
		// high watermark.
		CheckpointedHighWatermark: b.hw.take(tp),
		OnLogFailure: func(err error) {
			if b.opts.OnLogFailure != nil {
				b.opts.OnLogFailure(tp, err)
			}
		},
		OnLogSync: b.opts.OnLogSync,
	})
	if err != nil {
		return nil, err
	}
	if pa.Leader != b.opts.NodeID {
		// Open made it a leader in pa's epoch; it must not be seen as
		// one once hosted, where a client could append to it.
		if err := p.BecomeFollower(pa.LeaderEpoch); err != nil {
			_ = p.Close()
			return nil, fmt.Errorf("partition %v: %w", tp, err)
		}
	}
	return &hosted{p: p, topicID: t.ID, configs: cs, jitter: jitter}, nil
}

func (b *Broker) partitionDir(tp base.TopicPartition) string {
	return filepath.Join(b.opts.DataDir, tp.Topic+"-"+strconv.Itoa(int(tp.Partition)))
}

// claimDir makes dir belong to topic id: a directory left by a deleted topic
// of the same name is removed first.
func claimDir(dir string, id base.TopicID) error {
	want := "version: 0\ntopic_id: " + hex.EncodeToString(id[:]) + "\n"
	data, err := os.ReadFile(filepath.Join(dir, PartitionMetadataFile))
	switch {
	case err == nil && string(data) == want:
		return nil
	case err == nil:
		if err := vfs.RemoveDir(dir); err != nil {
			return err
		}
	case !errors.Is(err, os.ErrNotExist):
		return err
	}
	if err := vfs.MkdirAllSynced(vfs.Default, dir); err != nil {
		return err
	}
	return vfs.WriteFileAtomic(dir, PartitionMetadataFile, []byte(want))
}

// removeStrayDirs deletes partition directories of topics that no longer
// exist (deleted while this broker was down).
func (b *Broker) removeStrayDirs() error {
	entries, err := os.ReadDir(b.opts.DataDir)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	hostedDirs := make(map[string]bool)
	for tp := range b.mu.parts {
		hostedDirs[filepath.Base(b.partitionDir(tp))] = true
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || hostedDirs[name] {
			continue
		}
		if strings.HasSuffix(name, ".deleted") {
			if err := os.RemoveAll(filepath.Join(b.opts.DataDir, name)); err != nil {
				return err
			}
			continue
		}
		if _, err := os.Stat(filepath.Join(b.opts.DataDir, name, PartitionMetadataFile)); err != nil {
			continue // not a partition directory
		}
		b.logger.Info("removing the directory of a deleted topic", "dir", name)
		if err := vfs.RemoveDir(filepath.Join(b.opts.DataDir, name)); err != nil {
			return err
		}
	}
	return nil
}

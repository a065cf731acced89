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

const partitionMetadataFile = "partition.metadata"

// Reconcile brings the hosted partitions in line with the current image
// (planHosting): it deletes the data of those whose topic is gone or that
// no longer have a replica here, opens those newly assigned here, applies
// topic config changes, and gives each its role (applyRoleLocked).
func (b *Broker) Reconcile() error {
	img := b.opts.Meta.Image()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.mu.closed {
		return nil
	}
	// Two callers (the image watcher, Partition) may read images in one
	// order and take the lock in the other: never go back to an older
	// image, which could reopen a deleted partition or undo a role.
	if b.mu.version != 0 && img.Version <= b.mu.version {
		return nil
	}
	hosted := make(map[base.TopicPartition]base.TopicID, len(b.mu.parts))
	for tp, h := range b.mu.parts {
		hosted[tp] = h.topicID
	}
	plan := planHosting(img, hosted, b.opts.NodeID)
	var errs []error
	for tp, why := range plan.remove {
		h := b.mu.parts[tp]
		delete(b.mu.parts, tp)
		b.closingLocked(h)
		b.logger.Info("deleting partition: "+why.String(), "partition", tp.String())
		if err := h.p.Delete(); err != nil {
			errs = append(errs, fmt.Errorf("deleting %v: %w", tp, err))
		}
	}
	for _, a := range plan.host {
		if err := b.ensureLocked(a.tp, a.topic, a.part, configSources(img, b.opts.NodeID, a.topic)); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		b.mu.version = img.Version
	}
	return errors.Join(errs...)
}

// ensureLocked opens tp if it is not open, or applies its new config (from
// cs), and gives it the role pa asks of this node.
func (b *Broker) ensureLocked(tp base.TopicPartition, t *metadata.Topic, pa metadata.Partition, cs ConfigSources) error {
	h, ok := b.mu.parts[tp]
	if ok && h.topicID != t.ID {
		// Same name, new topic: the old one was deleted and recreated
		// (planHosting removes it first; this is the backstop).
		delete(b.mu.parts, tp)
		b.closingLocked(h)
		if err := h.p.Delete(); err != nil {
			return fmt.Errorf("deleting replaced %v: %w", tp, err)
		}
		ok = false
	}
	if !ok {
		var err error
		if h, err = b.openLocked(tp, t, pa, cs); err != nil {
			return err
		}
	} else if !h.configs.equal(cs) {
		cfg, err := b.opts.Resolve(cs)
		if err != nil {
			return fmt.Errorf("topic %s config: %w", t.Name, err)
		}
		if err := h.p.SetConfig(cfg.WithSegmentJitter(h.jitter)); err != nil {
			return fmt.Errorf("topic %s config: %w", t.Name, err)
		}
		h.configs = cs
	}
	if err := b.applyRoleLocked(h, pa); err != nil {
		return fmt.Errorf("partition %v: %w", tp, err)
	}
	return nil
}

// openLocked opens tp, which Open makes a leader in pa's epoch, and hosts
// it without a role yet.
func (b *Broker) openLocked(tp base.TopicPartition, t *metadata.Topic, pa metadata.Partition, cs ConfigSources) (*hosted, error) {
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
	})
	if err != nil {
		return nil, err
	}
	h := &hosted{p: p, topicID: t.ID, configs: cs, jitter: jitter}
	b.mu.parts[tp] = h
	b.trackTierStatsLocked(tp)
	return h, nil
}

func (b *Broker) partitionDir(tp base.TopicPartition) string {
	return filepath.Join(b.opts.DataDir, tp.Topic+"-"+strconv.Itoa(int(tp.Partition)))
}

// claimDir makes dir belong to topic id: a directory left by a deleted topic
// of the same name is removed first.
func claimDir(dir string, id base.TopicID) error {
	want := "version: 0\ntopic_id: " + hex.EncodeToString(id[:]) + "\n"
	data, err := os.ReadFile(filepath.Join(dir, partitionMetadataFile))
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
	return vfs.WriteFileAtomic(dir, partitionMetadataFile, []byte(want))
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
		if _, err := os.Stat(filepath.Join(b.opts.DataDir, name, partitionMetadataFile)); err != nil {
			continue // not a partition directory
		}
		b.logger.Info("removing the directory of a deleted topic", "dir", name)
		if err := vfs.RemoveDir(filepath.Join(b.opts.DataDir, name)); err != nil {
			return err
		}
	}
	return nil
}

package broker

import (
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
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

// Reconcile brings the hosted partitions in line with the current image.
func (b *Broker) Reconcile() error {
	img := b.opts.Meta.Image()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.mu.closed {
		return nil
	}
	if img.Version == b.mu.version && b.mu.version != 0 {
		return nil
	}
	var errs []error
	want := make(map[base.TopicPartition]bool)
	for _, t := range img.Topics {
		for _, pa := range t.Partitions {
			if pa.Leader != b.opts.NodeID {
				continue
			}
			tp := base.TopicPartition{Topic: t.Name, Partition: pa.Index}
			want[tp] = true
			if err := b.ensureLocked(tp, t, pa); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for tp, h := range b.mu.parts {
		if want[tp] {
			continue
		}
		delete(b.mu.parts, tp)
		b.closingLocked(h)
		b.logger.Info("deleting partition: its topic is gone", "partition", tp.String())
		if err := h.p.Delete(); err != nil {
			errs = append(errs, fmt.Errorf("deleting %v: %w", tp, err))
		}
	}
	if len(errs) == 0 {
		b.mu.version = img.Version
	}
	return errors.Join(errs...)
}

// ensureLocked opens tp if it is not open, or applies its new config.
func (b *Broker) ensureLocked(tp base.TopicPartition, t *metadata.Topic, pa metadata.Partition) error {
	if h, ok := b.mu.parts[tp]; ok {
		if h.topicID != t.ID {
			// Same name, new topic: the old one was deleted and recreated.
			delete(b.mu.parts, tp)
			b.closingLocked(h)
			if err := h.p.Delete(); err != nil {
				return fmt.Errorf("deleting replaced %v: %w", tp, err)
			}
		} else {
			if !maps.Equal(h.configs, t.Configs) {
				cfg, err := b.opts.Resolve(t.Configs)
				if err != nil {
					return fmt.Errorf("topic %s config: %w", t.Name, err)
				}
				if err := h.p.SetConfig(cfg.WithSegmentJitter(h.jitter)); err != nil {
					return fmt.Errorf("topic %s config: %w", t.Name, err)
				}
				h.configs = t.Configs
			}
			if err := h.p.BecomeLeader(pa.LeaderEpoch); err != nil {
				return err
			}
			b.syncTierLoopLocked(h)
			return nil
		}
	}
	cfg, err := b.opts.Resolve(t.Configs)
	if err != nil {
		return fmt.Errorf("topic %s config: %w", t.Name, err)
	}
	dir := b.partitionDir(tp)
	if err := claimDir(dir, t.ID); err != nil {
		return fmt.Errorf("partition %v: %w", tp, err)
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
	})
	if err != nil {
		return err
	}
	h := &hosted{p: p, topicID: t.ID, configs: t.Configs, jitter: jitter}
	b.mu.parts[tp] = h
	b.trackTierStatsLocked(tp)
	if b.opts.OnOpen != nil {
		b.opts.OnOpen(p)
	}
	b.syncTierLoopLocked(h)
	return nil
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

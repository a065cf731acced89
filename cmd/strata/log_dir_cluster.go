package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/strata-broker/strata/internal/broker"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/vfs"
)

// A log dir's meta.properties names the cluster its logs were written in.
// Metadata of another cluster (a metadata dir lost, emptied or moved away
// with metadata.log.dir: a fresh one bootstraps a new cluster with no
// topics) would make the broker take every partition directory for a
// deleted topic's and remove it, so a node whose first log dir belongs to
// another cluster than its metadata refuses to start, as Kafka does on a
// cluster.id mismatch. A log dir without the file (a new one, or one
// written before Strata recorded it) is claimed for the metadata's cluster,
// unless, on a single node, the metadata has no topic while the log dir
// holds partitions: metadata lost before the file was written.

// claimLogDir checks that cfg's first log dir belongs to the cluster of
// the metadata img, then records it there (meta.properties, also in
// metadata.log.dir for Kafka's tools).
func claimLogDir(cfg *config.Broker, img *metadata.Image) error {
	dir, clusterID := cfg.LogDirs[0], img.ClusterID
	have, path, present, err := logDirClusterID(dir)
	switch {
	case err != nil:
		return err
	case present:
		if have != "" && have != clusterID {
			return fmt.Errorf("log dir %s holds the logs of cluster %s (cluster.id in %s), but the metadata in %s is cluster %s's: the metadata these logs were written under is not there (lost, emptied, or elsewhere: see metadata.log.dir). Restore it there, or point metadata.log.dir at it; to start a new cluster instead, move %s away. Nothing in it was changed",
				dir, have, path, cfg.MetadataDir, clusterID, dir)
		}
	case !cfg.Clustered() && len(img.Topics) == 0:
		if part, err := anyPartitionDir(dir); err != nil {
			return err
		} else if part != "" {
			return fmt.Errorf("log dir %s holds partitions (%s, ...), but the metadata in %s has no topic: the metadata these logs were written under is not there (lost, emptied, or elsewhere: see metadata.log.dir). Restore it there, or point metadata.log.dir at it; to start afresh instead, move %s away. Nothing in it was changed",
				dir, part, cfg.MetadataDir, dir)
		}
	}
	if err := vfs.MkdirAllSynced(vfs.Default, dir); err != nil {
		return fmt.Errorf("creating log dir %s: %w", dir, err)
	}
	dirID, err := logDirID(dir)
	if err != nil {
		return err
	}
	return writeMetaProperties(metaPropertiesDirs(cfg), cfg.NodeID, clusterID, dirID)
}

// formattedClusterID is the cluster.id that Kafka's `kafka-storage format`
// (or an earlier start) wrote into cfg's first log dir's meta.properties,
// for a quorum this node bootstraps to take: Kafka 4 has every node's
// storage formatted with the cluster's id before its first start, and the
// logs are then that cluster's. "" when there is no such file or id, and
// when the log dir holds partitions: a quorum bootstrapped then has lost
// the metadata they were written under, and claimLogDir refuses it.
func formattedClusterID(cfg *config.Broker) (string, error) {
	dir := cfg.LogDirs[0]
	id, path, _, err := logDirClusterID(dir)
	if err != nil || id == "" {
		return "", err
	}
	if err := metadata.ValidClusterID(id); err != nil {
		return "", fmt.Errorf("%s: %v; format the log dir again with kafka-storage format -t <an id from kafka-storage random-uuid>, or remove the file", path, err)
	}
	if part, err := anyPartitionDir(dir); err != nil || part != "" {
		return "", err
	}
	return id, nil
}

// logDirClusterID is the cluster.id of dir's meta.properties (at path):
// "" when the file names none; present is false when there is no file.
func logDirClusterID(dir string) (id, path string, present bool, err error) {
	path = filepath.Join(dir, metaPropertiesFile)
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", path, false, nil
	case err != nil:
		return "", path, false, fmt.Errorf("reading %s: %w", path, err)
	}
	id, _ = metaPropertiesClusterID(data)
	return id, path, true, nil
}

// anyPartitionDir names a partition directory of dir (one holding a
// partition.metadata file), "" when it has none.
func anyPartitionDir(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("reading log dir %s: %w", dir, err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, e.Name(), broker.PartitionMetadataFile)); err == nil {
			return e.Name(), nil
		}
	}
	return "", nil
}

// metaPropertiesClusterID is the cluster.id of a meta.properties file; ok
// is false when it has none, or does not parse as a properties file.
func metaPropertiesClusterID(data []byte) (id string, ok bool) {
	props, err := config.PropertiesOf(metaPropertiesFile, data)
	if err != nil {
		return "", false
	}
	id = props["cluster.id"]
	return id, id != ""
}

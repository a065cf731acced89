package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/vfs"
)

// metaPropertiesFile is Kafka's meta.properties. Strata writes one for
// Kafka's tools that read it, chiefly `kafka-metadata-quorum
// add-controller`, which takes the directory id of the node to add from
// the meta.properties of its metadata.log.dir (else its first log.dirs),
// and reads only the cluster.id of its first log dir's (log_dir_cluster.go).
const metaPropertiesFile = "meta.properties"

// metaProperties is the file's text: Kafka's version 1 layout, with the
// log directory id this broker registers with written as Kafka writes a
// Uuid (URL-safe base64 without padding).
func metaProperties(nodeID int32, clusterID string, dirID [16]byte) []byte {
	var b bytes.Buffer
	b.WriteString("# Written by Strata: the cluster these logs belong to (checked at start), and for Kafka's tools (kafka-metadata-quorum add-controller).\n")
	fmt.Fprintf(&b, "cluster.id=%s\n", clusterID)
	fmt.Fprintf(&b, "directory.id=%s\n", metadata.UUIDString(dirID))
	fmt.Fprintf(&b, "node.id=%s\n", strconv.Itoa(int(nodeID)))
	b.WriteString("version=1\n")
	return b.Bytes()
}

// metaPropertiesDirs are the directories Kafka's tools look in: the first
// of log.dirs, and metadata.log.dir when it is set elsewhere.
func metaPropertiesDirs(cfg *config.Broker) []string {
	dirs := []string{cfg.LogDirs[0]}
	if d := cfg.Raw["metadata.log.dir"]; d != "" && !slices.Contains(dirs, d) {
		dirs = append(dirs, d)
	}
	return dirs
}

// writeMetaProperties writes meta.properties into each of dirs whose file
// does not already say the same.
func writeMetaProperties(dirs []string, nodeID int32, clusterID string, dirID [16]byte) error {
	want := metaProperties(nodeID, clusterID, dirID)
	for _, dir := range dirs {
		if have, err := os.ReadFile(filepath.Join(dir, metaPropertiesFile)); err == nil && bytes.Equal(have, want) {
			continue
		}
		if err := vfs.MkdirAllSynced(vfs.Default, dir); err != nil {
			return fmt.Errorf("creating %s for %s: %w", dir, metaPropertiesFile, err)
		}
		if err := vfs.WriteFileAtomic(dir, metaPropertiesFile, want); err != nil {
			return fmt.Errorf("writing %s: %w", filepath.Join(dir, metaPropertiesFile), err)
		}
	}
	return nil
}

package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/vfs"
)

// logDirIDFile holds the id of the data directory, drawn when the directory
// is first used (Kafka's directory.id in meta.properties, KIP-858). A broker
// registers with it, so that the controller can tell a restart from a
// return without the partitions' logs (a replaced disk, an emptied data
// dir): then the partitions whose only in-sync replica it was get no
// leader until an operator elects one, rather than it leading them with
// empty logs.
const logDirIDFile = "log-dir-id"

// logDirID reads dir's id, or draws one and stores it durably when dir has
// none yet.
func logDirID(dir string) ([16]byte, error) {
	var id [16]byte
	path := filepath.Join(dir, logDirIDFile)
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		raw, decErr := hex.DecodeString(strings.TrimSpace(string(data)))
		if decErr != nil || len(raw) != len(id) {
			return id, fmt.Errorf("%s does not hold a log directory id (32 hex digits); restore it, or remove it if this directory's logs are not the ones the broker had", path)
		}
		copy(id[:], raw)
		return id, nil
	case !errors.Is(err, os.ErrNotExist):
		return id, fmt.Errorf("reading %s: %w", path, err)
	}
	if _, err := rand.Read(id[:]); err != nil {
		return id, fmt.Errorf("drawing a log directory id: %w", err)
	}
	if err := vfs.WriteFileAtomic(dir, logDirIDFile, []byte(hex.EncodeToString(id[:])+"\n")); err != nil {
		return id, fmt.Errorf("writing %s: %w", path, err)
	}
	return id, nil
}

// partitionsWithoutISR lists the partitions of img that broker replicates
// and that have no in-sync replica left (their last one lost its logs), in
// topic and partition order.
func partitionsWithoutISR(img *metadata.Image, broker int32) []base.TopicPartition {
	var out []base.TopicPartition
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for name := range img.Topics {
			if !yield(name) {
				return
			}
		}
	}) {
		for _, p := range img.Topics[name].Partitions {
			if len(p.ISR) == 0 && slices.Contains(p.Replicas, broker) {
				out = append(out, base.TopicPartition{Topic: name, Partition: p.Index})
			}
		}
	}
	return out
}

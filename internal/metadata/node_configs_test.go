package metadata

import (
	"errors"
	"maps"
	"strings"
	"testing"
)

// Single brokers' dynamic configs survive a snapshot (v8); a v7 snapshot
// holding them is corrupt, and so is one naming a node twice.
func TestSnapshotKeepsNodeConfigs(t *testing.T) {
	img := emptyImage()
	img.NodeConfigs[2] = map[string]string{"log.retention.ms": "10"}
	img.NodeConfigs[1] = map[string]string{"log.segment.bytes": "2048"}
	data, err := encodeSnapshot(img)
	if err != nil || data[0] != snapshotFormatNewest {
		t.Fatalf("encoded as %d: %v", data[0], err)
	}
	back, err := decodeSnapshot(data)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.EqualFunc(back.NodeConfigs, img.NodeConfigs, maps.Equal) {
		t.Fatalf("round trip: %v, want %v", back.NodeConfigs, img.NodeConfigs)
	}
	if _, err := decodeSnapshot([]byte("\x07" + string(data[1:]))); !errors.Is(err, ErrInvalidCommand) {
		t.Errorf("v7 snapshot with node configs: %v, want ErrInvalidCommand", err)
	}
	twice := strings.Replace(string(data), `"node":2`, `"node":1`, 1)
	if _, err := decodeSnapshot([]byte(twice)); !errors.Is(err, ErrInvalidCommand) {
		t.Errorf("node named twice: %v, want ErrInvalidCommand", err)
	}
	negative := strings.Replace(string(data), `"node":2`, `"node":-2`, 1)
	if _, err := decodeSnapshot([]byte(negative)); !errors.Is(err, ErrInvalidCommand) {
		t.Errorf("negative node id: %v, want ErrInvalidCommand", err)
	}
}

package main

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/testkraft"
)

func TestSnapshotVoters(t *testing.T) {
	ctrl := func(host string, port uint16) []testkraft.Endpoint {
		return []testkraft.Endpoint{{Name: "CONTROLLER", Host: host, Port: port}}
	}
	three := testkraft.BootstrapSnapshot([]testkraft.Voter{
		{ID: 1, DirectoryID: [16]byte{1}, Endpoints: ctrl("c1", 9093)},
		{ID: 2, DirectoryID: [16]byte{2}, Endpoints: append([]testkraft.Endpoint{{Name: "OTHER", Host: "x", Port: 1}}, ctrl("c2", 9093)...)},
		{ID: 3, DirectoryID: [16]byte{3}, Endpoints: []testkraft.Endpoint{{Name: "OTHER", Host: "c3", Port: 9094}}},
	})
	got, err := snapshotVoters(three, "CONTROLLER")
	if want := map[int32]string{1: "c1:9093", 2: "c2:9093", 3: "c3:9094"}; err != nil || !maps.Equal(got, want) {
		t.Fatalf("snapshotVoters = %v, %v; want %v (the controller listener's endpoint, else the first)", got, err, want)
	}

	for name, tc := range map[string]struct {
		data []byte
		want string
	}{
		"no voter":    {testkraft.BootstrapSnapshot(nil), "names no voter"},
		"truncated":   {three[:len(three)-20], "CORRUPT_MESSAGE"},
		"empty":       {nil, "names no voter"},
		"no endpoint": {testkraft.BootstrapSnapshot([]testkraft.Voter{{ID: 1}}), "voter 1 has no endpoint"},
	} {
		if _, err := snapshotVoters(tc.data, "CONTROLLER"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, tc.want)
		}
	}
}

// A node bootstrapping from controller.quorum.bootstrap.servers takes the
// voters of Kafka's bootstrap snapshot on its first start only.
func TestKafkaInitialVoters(t *testing.T) {
	logs := t.TempDir()
	cfg := &config.Broker{LogDirs: []string{logs}, MetadataDir: filepath.Join(logs, "__metadata"), ControllerListenerName: "CONTROLLER",
		QuorumBootstrap: []string{"c1:9093", "c2:9093"}, Raw: map[string]string{}}
	if v, _, err := kafkaInitialVoters(cfg); v != nil || err != nil {
		t.Fatalf("without a snapshot: %v, %v", v, err)
	}
	path := filepath.Join(logs, testkraft.SnapshotPath)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	snap := testkraft.BootstrapSnapshot([]testkraft.Voter{{ID: 1, Endpoints: []testkraft.Endpoint{{Name: "CONTROLLER", Host: "c1", Port: 9093}}}})
	if err := os.WriteFile(path, snap, 0o644); err != nil {
		t.Fatal(err)
	}
	if v, p, err := kafkaInitialVoters(cfg); err != nil || p != path || !maps.Equal(v, map[int32]string{1: "c1:9093"}) {
		t.Fatalf("first start: %v, %s, %v", v, p, err)
	}
	// A metadata dir made by a start interrupted before the quorum
	// bootstrapped holds no Raft state: the snapshot is still read.
	if err := os.MkdirAll(filepath.Join(cfg.MetadataDir, "wal"), 0o755); err != nil {
		t.Fatal(err)
	}
	if v, _, err := kafkaInitialVoters(cfg); err != nil || !maps.Equal(v, map[int32]string{1: "c1:9093"}) {
		t.Fatalf("after an interrupted first start: %v, %v", v, err)
	}
	meta, err := metadata.Open(t.Context(), metadata.Options{Dir: cfg.MetadataDir, NodeID: 1, Clock: clock.Real{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := meta.Close(); err != nil {
		t.Fatal(err)
	}
	if v, _, err := kafkaInitialVoters(cfg); v != nil || err != nil {
		t.Fatalf("with Raft state already: %v, %v; want nothing taken", v, err)
	}
	if err := os.WriteFile(path, snap[:30], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(cfg.MetadataDir); err != nil {
		t.Fatal(err)
	}
	if _, _, err := kafkaInitialVoters(cfg); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("a torn snapshot: %v, want an error naming it", err)
	}
}

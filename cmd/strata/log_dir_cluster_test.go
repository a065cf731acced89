package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/broker"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
)

func TestMetaPropertiesClusterID(t *testing.T) {
	for in, want := range map[string]string{
		"cluster.id=abc\nnode.id=1\n":          "abc",
		"# cluster.id=old\ncluster.id = new\n": "new",
		"! a comment\r\ncluster.id=x\r\n":      "x",
		"node.id=1\nversion=1\n":               "",
		"cluster.id=\n":                        "",
		"":                                     "",
	} {
		got, ok := metaPropertiesClusterID([]byte(in))
		if got != want || ok != (want != "") {
			t.Errorf("metaPropertiesClusterID(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

// A log dir is claimed by the first metadata it starts with, and refused
// to metadata of another cluster, without a change to it.
func TestClaimLogDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs") // not made yet
	cfg := &config.Broker{LogDirs: []string{dir}, MetadataDir: filepath.Join(t.TempDir(), "__metadata"), NodeID: 1,
		Raw: map[string]string{}}
	a, b := &metadata.Image{ClusterID: "cluster-a"}, &metadata.Image{ClusterID: "cluster-b"}
	if err := claimLogDir(cfg, a); err != nil {
		t.Fatalf("claiming a new log dir: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(dir, metaPropertiesFile))
	if err != nil || !strings.Contains(string(data), "cluster.id=cluster-a\n") {
		t.Fatalf("meta.properties after the claim: %q, %v", data, err)
	}
	if err := claimLogDir(cfg, a); err != nil {
		t.Fatalf("the same cluster again: %v", err)
	}
	err = claimLogDir(cfg, b)
	if err == nil || !strings.Contains(err.Error(), "cluster-a") || !strings.Contains(err.Error(), "cluster-b") {
		t.Fatalf("another cluster's metadata: %v; want an error naming both clusters", err)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, metaPropertiesFile)); string(again) != string(data) {
		t.Errorf("a refused claim changed meta.properties:\n%s", again)
	}
	// A meta.properties that names no cluster claims none.
	if err := os.WriteFile(filepath.Join(dir, metaPropertiesFile), []byte("node.id=1\nversion=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := claimLogDir(cfg, b); err != nil {
		t.Fatalf("a meta.properties without cluster.id: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, metaPropertiesFile)); !strings.Contains(string(data), "cluster.id=cluster-b\n") {
		t.Errorf("meta.properties after claiming one without cluster.id:\n%s", data)
	}
}

// A single node's log dir from before meta.properties, holding partitions,
// is not claimed by metadata without topics; without partitions, or with
// metadata that has topics, it is.
func TestClaimLegacyLogDir(t *testing.T) {
	dir := t.TempDir()
	cfg := &config.Broker{LogDirs: []string{dir}, MetadataDir: filepath.Join(dir, "__metadata"), NodeID: 1,
		Raw: map[string]string{}}
	empty := &metadata.Image{ClusterID: "fresh"}
	if err := os.MkdirAll(filepath.Join(dir, "__metadata"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := claimLogDir(cfg, empty); err != nil {
		t.Fatalf("no partitions: %v", err)
	}
	if err := os.Remove(filepath.Join(dir, metaPropertiesFile)); err != nil {
		t.Fatal(err)
	}
	part := filepath.Join(dir, "orders-0")
	if err := os.MkdirAll(part, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(part, broker.PartitionMetadataFile), []byte("version: 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := claimLogDir(cfg, empty); err == nil || !strings.Contains(err.Error(), "orders-0") {
		t.Fatalf("partitions under metadata without topics: %v; want an error naming orders-0", err)
	}
	if _, err := os.Stat(filepath.Join(dir, metaPropertiesFile)); !os.IsNotExist(err) {
		t.Errorf("a refused claim wrote meta.properties: %v", err)
	}
	withTopic := &metadata.Image{ClusterID: "kept", Topics: map[string]*metadata.Topic{"orders": {}}}
	if err := claimLogDir(cfg, withTopic); err != nil {
		t.Fatalf("metadata with topics: %v", err)
	}
	cfg.QuorumBootstrap = []string{"127.0.0.1:9093"} // a cluster member: the quorum vouches for its metadata
	if err := os.Remove(filepath.Join(dir, metaPropertiesFile)); err != nil {
		t.Fatal(err)
	}
	if err := claimLogDir(cfg, empty); err != nil {
		t.Fatalf("a cluster member: %v", err)
	}
}

// A quorum bootstrapped on a log dir takes the cluster id formatted into
// it, unless the log dir holds partitions (metadata lost: claimLogDir
// refuses it) or has none; a malformed one is refused.
func TestFormattedClusterID(t *testing.T) {
	const id = "MkU3OEVBNTcwNTJENDM2Qg"
	for _, tc := range []struct {
		name      string
		meta      string // "" writes no meta.properties
		partition bool
		// unreadable makes meta.properties a directory.
		unreadable bool
		want       string
		err        string
	}{
		{name: "unformatted"},
		{name: "formatted", meta: "node.id=1\nversion=1\ncluster.id=" + id + "\n", want: id},
		{name: "without a cluster id", meta: "node.id=1\nversion=1\n"},
		{name: "with partitions", meta: "cluster.id=" + id + "\n", partition: true},
		{name: "malformed", meta: "cluster.id=cluster-a\n", err: "kafka-storage"},
		{name: "unreadable", unreadable: true, err: "reading"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.meta != "" {
				if err := os.WriteFile(filepath.Join(dir, metaPropertiesFile), []byte(tc.meta), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.unreadable {
				if err := os.Mkdir(filepath.Join(dir, metaPropertiesFile), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if tc.partition {
				if err := os.MkdirAll(filepath.Join(dir, "t-0"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "t-0", broker.PartitionMetadataFile), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := formattedClusterID(&config.Broker{LogDirs: []string{dir}})
			if got != tc.want || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("formattedClusterID = %q, %v; want %q, error with %q", got, err, tc.want, tc.err)
			}
		})
	}
}

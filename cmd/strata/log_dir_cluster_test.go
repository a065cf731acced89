package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/config"
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
	dir := t.TempDir()
	cfg := &config.Broker{LogDirs: []string{dir}, MetadataDir: filepath.Join(dir, "__metadata"), NodeID: 1,
		Raw: map[string]string{}}
	if err := claimLogDir(cfg, "cluster-a"); err != nil {
		t.Fatalf("claiming a new log dir: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(dir, metaPropertiesFile))
	if err != nil || !strings.Contains(string(data), "cluster.id=cluster-a\n") {
		t.Fatalf("meta.properties after the claim: %q, %v", data, err)
	}
	if err := claimLogDir(cfg, "cluster-a"); err != nil {
		t.Fatalf("the same cluster again: %v", err)
	}
	err = claimLogDir(cfg, "cluster-b")
	if err == nil || !strings.Contains(err.Error(), "cluster-a") || !strings.Contains(err.Error(), "cluster-b") {
		t.Fatalf("another cluster's metadata: %v; want an error naming both clusters", err)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, metaPropertiesFile)); string(again) != string(data) {
		t.Errorf("a refused claim changed meta.properties:\n%s", again)
	}
}

package main

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The file reads as Kafka's MetaProperties loader reads it: key=value
// lines, version 1 with cluster.id and node.id, and a directory id that
// decodes to the registered one.
func TestMetaPropertiesForKafkaTools(t *testing.T) {
	dirs := []string{t.TempDir(), filepath.Join(t.TempDir(), "metadata")}
	id := [16]byte{0xfb, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0xff}
	if err := writeMetaProperties(dirs, 7, "MkU3OEVBNTcwNTJENDM2Qg", id); err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, metaPropertiesFile))
		if err != nil {
			t.Fatal(err)
		}
		props := map[string]string{}
		for line := range strings.Lines(string(data)) {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("line %q is not key=value", line)
			}
			props[k] = v
		}
		if props["version"] != "1" || props["node.id"] != "7" || props["cluster.id"] != "MkU3OEVBNTcwNTJENDM2Qg" {
			t.Errorf("%s: %v", dir, props)
		}
		raw, err := base64.RawURLEncoding.DecodeString(props["directory.id"])
		if err != nil || !bytes.Equal(raw, id[:]) || len(props["directory.id"]) != 22 {
			t.Errorf("directory.id %q decodes to %x (%v), want %x", props["directory.id"], raw, err, id)
		}
	}
	// Written again only when it would say something else.
	path := filepath.Join(dirs[0], metaPropertiesFile)
	before, _ := os.Stat(path)
	if err := writeMetaProperties(dirs[:1], 7, "MkU3OEVBNTcwNTJENDM2Qg", id); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(path); !after.ModTime().Equal(before.ModTime()) {
		t.Error("an unchanged meta.properties was rewritten")
	}
	if err := writeMetaProperties(dirs[:1], 8, "MkU3OEVBNTcwNTJENDM2Qg", id); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); !strings.Contains(string(data), "node.id=8\n") {
		t.Errorf("not rewritten for another node id:\n%s", data)
	}
}

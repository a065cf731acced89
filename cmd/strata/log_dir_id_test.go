package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
)

// TestLogDirID: a directory's id is drawn once and read back the same; a
// garbled file is refused with a line that names it.
func TestLogDirID(t *testing.T) {
	dir := t.TempDir()
	first, err := logDirID(dir)
	if err != nil || first == [16]byte{} {
		t.Fatalf("drawing: %x, %v", first, err)
	}
	again, err := logDirID(dir)
	if err != nil || again != first {
		t.Fatalf("reading back: %x, %v, want %x", again, err, first)
	}
	other, err := logDirID(t.TempDir())
	if err != nil || other == first {
		t.Fatalf("another directory: %x, %v", other, err)
	}
	for _, garbled := range []string{"not hex\n", "0123456789abcdef\n", strings.Repeat("ab", 17) + "\n"} {
		if err := os.WriteFile(filepath.Join(dir, logDirIDFile), []byte(garbled), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := logDirID(dir); err == nil || !strings.Contains(err.Error(), logDirIDFile) {
			t.Fatalf("garbled file %q: %v", garbled, err)
		}
	}
}

func TestPartitionsWithoutISR(t *testing.T) {
	img := &metadata.Image{Topics: map[string]*metadata.Topic{
		"b": {Name: "b", Partitions: []metadata.Partition{
			{Index: 0, Replicas: []int32{1, 2}, ISR: nil},        // lost its last in-sync replica
			{Index: 1, Replicas: []int32{1, 2}, ISR: []int32{2}}, // one left
			{Index: 2, Replicas: []int32{2, 3}, ISR: nil},        // not replicated by 1
		}},
		"a": {Name: "a", Partitions: []metadata.Partition{{Index: 0, Replicas: []int32{3, 1}, ISR: []int32{}}}},
	}}
	want := []base.TopicPartition{{Topic: "a", Partition: 0}, {Topic: "b", Partition: 0}}
	if got := partitionsWithoutISR(img, 1); !slices.Equal(got, want) {
		t.Errorf("partitionsWithoutISR = %v, want %v", got, want)
	}
}

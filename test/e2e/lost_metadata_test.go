package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLostMetadataKeepsTheLogs: a single node whose metadata is gone (its
// metadata dir deleted, or metadata.log.dir pointed elsewhere) would start
// a new cluster without topics and take every partition directory for a
// deleted topic's. It refuses to start instead, naming the log dir's
// cluster and where the metadata should be, and removes nothing (also for a
// log dir from before its cluster was recorded); with the metadata back,
// every acknowledged record is there.
func TestLostMetadataKeepsTheLogs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := startBroker(t, dir)
	const topic = "kept-without-metadata"
	createTopic(t, newAdmin(t, b.Addr), topic, 2, nil)
	p := startAckedProducer(t, newClient(t, b.Addr, ackedProducerOpts...), topic, 2)
	p.waitTotalAcked(t, 300)
	p.stop(t)
	b.Stop()

	metadataDir := filepath.Join(dir, "__metadata")
	aside := filepath.Join(t.TempDir(), "metadata")
	if err := os.Rename(metadataDir, aside); err != nil {
		t.Fatal(err)
	}
	out, code := runCLI(t, "serve", "--listen", "127.0.0.1:0", "--data-dir", dir)
	if code == 0 {
		t.Fatalf("started without its metadata:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, want := range []string{"log dir " + dir, "cluster", "metadata.log.dir", "Nothing in it was changed"} {
		if !strings.Contains(lines[len(lines)-1], want) {
			t.Errorf("the last line does not mention %q:\n%s", want, out)
		}
	}
	for _, part := range []string{topic + "-0", topic + "-1"} {
		if _, err := os.Stat(filepath.Join(dir, part)); err != nil {
			t.Errorf("partition directory %s: %v", part, err)
		}
	}

	// A log dir written before Strata recorded its cluster (no
	// meta.properties) is refused the same way: the new metadata has no
	// topic, the log dir has partitions.
	for _, gone := range []string{metadataDir, filepath.Join(dir, "meta.properties")} {
		if err := os.RemoveAll(gone); err != nil {
			t.Fatal(err)
		}
	}
	out, code = runCLI(t, "serve", "--listen", "127.0.0.1:0", "--data-dir", dir)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); code == 0 || !strings.Contains(lines[len(lines)-1], "holds partitions") {
		t.Fatalf("a log dir without meta.properties, started without its metadata (exit %d):\n%s", code, out)
	}

	// The metadata back where it was (the refused start left a new one).
	if err := os.RemoveAll(metadataDir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(aside, metadataDir); err != nil {
		t.Fatal(err)
	}
	b.Restart()
	p.check(t, consumeAll(t, b.Addr, topic))
}

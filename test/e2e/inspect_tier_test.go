package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInspectTier runs `strata inspect tier` against a broker's data dir
// after tiering: it refuses while the broker runs; once stopped it prints
// the tier map (remote, local), reports the coverage complete and no
// orphans; it lists an object planted under an unclaimed segment key as
// an orphan without deleting it; and it exits 1 with one coverage line
// when a local segment file claims offsets that nothing holds.
func TestInspectTier(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := startTieredBroker(t, dir)
	const topic = "inspected-tier"
	fillTieredTopic(t, b.Addr, topic, 200)
	waitTiered(t, b.Addr, topic)
	segs := newSegmentSizes(filepath.Join(dir, topic+"-0"))
	waitRolledTiered(t, b.Addr, topic, segs)

	args := []string{"inspect", "tier", "--data-dir", dir, "--topic", topic, "--orphans"}
	out, code := runCLI(t, args...)
	requireOneClearLine(t, out, code, "stop the broker first")
	b.Stop()

	out, code = runCLI(t, args...)
	if code != 0 {
		t.Fatalf("inspect tier: exit %d:\n%s", code, out)
	}
	for _, want := range []string{
		"remote  ", "COPY_FINISHED", "local\n",
		"coverage: [0, 200) complete, no gaps, no double count",
		"orphans (segment objects that no metadata claims; nothing deleted):\n  none\n",
		", 0 orphans",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("inspect tier output lacks %q:\n%s", want, out)
		}
	}

	remote := filepath.Join(dir, "remote")
	orphan := plantOrphan(t, remote)
	out, code = runCLI(t, args...)
	if code != 0 || !strings.Contains(out, strings.TrimPrefix(orphan, remote+"/")) || !strings.Contains(out, ", 1 orphans") {
		t.Fatalf("inspect tier with a planted orphan: exit %d, output lacks it:\n%s", code, out)
	}
	if _, err := os.Stat(orphan); err != nil {
		t.Fatalf("inspect tier touched the orphan: %v", err)
	}

	// An empty segment file named 1000 says the log runs to 1000.
	if err := os.WriteFile(filepath.Join(dir, topic+"-0", "00000000000000001000.log"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, code = runCLI(t, "inspect", "tier", "--data-dir", dir, "--topic", topic)
	if code != 1 || !strings.Contains(out, "strata: coverage: [0, 1000) is broken: gap [200, 1000)") {
		t.Fatalf("inspect tier of a log with a gap: exit %d, want 1 and the gap:\n%s", code, out)
	}
}

// plantOrphan plants an orphan .log whose segment id is all 'e'.
func plantOrphan(t *testing.T, root string) string {
	t.Helper()
	return plantOrphanNamed(t, root, "e")
}

package e2e

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The bucket reconciler end to end (issue 3, regression test 3, second
// half). The crash test kills the broker while a segment's objects are
// partly uploaded; the orphan test plants objects that no metadata claims.

// slowCopyBytesPerSec makes each ~16 KiB segment upload wait seconds
// between its index objects and its .log (the quota is charged per object,
// before its Put).
const slowCopyBytesPerSec = "4096"

// TestTieredCrashMidUploadLeavesNothingBehind: a broker killed while a
// segment's first objects are in the bucket and its .log is not comes back
// with every record readable from offset 0, the crashed attempt's objects
// gone (its COPY_STARTED is an abandoned copy that the tier loop deletes),
// and a bucket holding exactly what metadata claims. The reconciler runs
// all along with a short grace: it deletes nothing claimed, in flight or not.
func TestTieredCrashMidUploadLeavesNothingBehind(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	remote := filepath.Join(dir, "remote")
	b := startTieredBroker(t, dir, "remote.log.manager.copy.max.bytes.per.second="+slowCopyBytesPerSec,
		"strata.remote.orphan.grace.ms=1000", "strata.remote.orphan.scan.interval.ms=200")
	const topic = "crash-mid-upload"
	values := fillTieredTopic(t, b.Addr, topic, 60)

	crashed := waitPartialUpload(t, remote)
	b.Kill()
	after := remoteAttempts(t, remote)
	if after[crashed]["log"] {
		t.Fatalf("segment attempt %s finished its .log before the kill landed: no partial upload to test", crashed)
	}
	if len(after[crashed]) == 0 {
		t.Fatalf("segment attempt %s has no object after the kill", crashed)
	}
	t.Logf("killed with attempt %s partly uploaded: %v", crashed, slices.Sorted(maps.Keys(after[crashed])))

	b.Restart()
	segs := newSegmentSizes(filepath.Join(dir, topic+"-0"))
	waitRolledTieredWithin(t, b.Addr, topic, segs, 60*time.Second)
	waitFor(t, tierSettle, "the crashed attempt's objects to be deleted", func() bool {
		return len(remoteAttempts(t, remote)[crashed]) == 0
	})
	checkAll(t, b.Addr, topic, values)
	b.Stop()
	requireBucketExactlyClaimed(t, dir, topic, remote)
}

// TestTieredOrphansReconciled: objects under a valid segment key that no
// metadata claims are reported and kept in dry-run mode; without it they
// are deleted once older than the grace period and not before; claimed
// objects and foreign keys stay throughout, and every record stays
// readable from offset 0.
func TestTieredOrphansReconciled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	remote := filepath.Join(dir, "remote")
	const grace = 3 * time.Second
	b := startTieredBroker(t, dir, "strata.remote.orphan.grace.ms="+strconv.FormatInt(grace.Milliseconds(), 10),
		"strata.remote.orphan.scan.interval.ms=200", "strata.remote.orphan.dry.run=true")
	const topic = "orphaned"
	values := fillTieredTopic(t, b.Addr, topic, 80)
	segs := newSegmentSizes(filepath.Join(dir, topic+"-0"))
	waitRolledTiered(t, b.Addr, topic, segs)

	claimed := remoteFiles(t, remote)
	foreign := filepath.Join(remote, "backups", "notes.txt")
	writeFile(t, foreign, []byte("not Strata's"))
	age(t, foreign, time.Hour)
	old := plantOrphan(t, remote)
	age(t, old, time.Hour)
	oldKey := strings.TrimPrefix(old, remote+"/")

	// Dry run: reported in the log, kept.
	outputFrom := b.output.Len()
	waitFor(t, tierSettle, "the dry run to report the orphan", func() bool {
		return strings.Contains(b.output.Since(outputFrom), "orphaned remote object (dry run: kept)") &&
			strings.Contains(b.output.Since(outputFrom), oldKey)
	})
	waitScans(t, b, 3)
	requireFiles(t, "after dry runs", append(claimed, old, foreign)...)

	// For real: the old orphan goes at once, a fresh one after the grace.
	b.Stop()
	b.overrides = append(b.overrides, "strata.remote.orphan.dry.run=false")
	b.Restart()
	fresh := plantOrphanNamed(t, remote, "f")
	// The grace counts from the object's modification time, as the store
	// records it (the kernel's coarse clock, which may trail time.Now).
	st, err := os.Stat(fresh)
	if err != nil {
		t.Fatal(err)
	}
	planted := st.ModTime()
	waitFor(t, tierSettle, "the old orphan to be deleted", func() bool { return !exists(t, old) })
	if !exists(t, fresh) {
		t.Fatalf("the fresh orphan was deleted within %v of its write, before the grace period %v", time.Since(planted), grace)
	}
	waitFor(t, tierSettle, "the fresh orphan to be deleted", func() bool { return !exists(t, fresh) })
	if took := time.Since(planted); took < grace {
		t.Fatalf("the fresh orphan was deleted %v after its write, within the grace period %v", took, grace)
	}
	if out := b.output.Since(outputFrom); !strings.Contains(out, "deleted orphaned remote object") || !strings.Contains(out, oldKey) {
		t.Fatalf("no log line for the deleted orphan %s", oldKey)
	}
	waitScans(t, b, 2)
	requireFiles(t, "after the orphans were deleted", append(claimed, foreign)...)
	checkAll(t, b.Addr, topic, values)
}

// waitPartialUpload polls the directory store at root until one segment
// attempt has objects but no .log (its upload is between its first Put
// and its last) and returns its id.
func waitPartialUpload(t *testing.T, root string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for id, suffixes := range remoteAttempts(t, root) {
			if len(suffixes) > 0 && !suffixes["log"] {
				return id
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no partly uploaded segment seen in %s within 30s", root)
	return ""
}

// segmentObjectName is a segment object's file name in a directory store:
// <20-digit base offset>-<32-hex segment id>.<suffix>.
var segmentObjectName = regexp.MustCompile(`^\d{20}-([0-9a-f]{32})\.([a-z-]+)$`)

// remoteAttempts maps each segment attempt id in the directory store at
// root to the suffixes of its objects.
func remoteAttempts(t *testing.T, root string) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	for _, path := range remoteFiles(t, root) {
		m := segmentObjectName.FindStringSubmatch(filepath.Base(path))
		if m == nil {
			continue
		}
		if out[m[1]] == nil {
			out[m[1]] = map[string]bool{}
		}
		out[m[1]][m[2]] = true
	}
	return out
}

// bucketSummary is `strata inspect tier --orphans`' last line.
var bucketSummary = regexp.MustCompile(`bucket: (\d+) claimed objects \([^)]*\), (\d+) orphans \([^)]*\), (\d+) foreign keys`)

// requireBucketExactlyClaimed runs `strata inspect tier --orphans` on the
// stopped broker's data dir: every object of the bucket must be claimed
// (no orphan, no foreign key, as many claimed objects as files), every
// remote segment COPY_FINISHED, and the tier's coverage complete.
func requireBucketExactlyClaimed(t *testing.T, dir, topic, remote string) {
	t.Helper()
	out, code := runCLI(t, "inspect", "tier", "--data-dir", dir, "--topic", topic, "--orphans")
	if code != 0 {
		t.Fatalf("inspect tier: exit %d:\n%s", code, out)
	}
	m := bucketSummary.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("inspect tier printed no bucket summary:\n%s", out)
	}
	files := len(remoteFiles(t, remote))
	if m[1] != strconv.Itoa(files) || m[2] != "0" || m[3] != "0" {
		t.Fatalf("bucket of %d files: %s claimed, %s orphans, %s foreign; want all claimed:\n%s", files, m[1], m[2], m[3], out)
	}
	for _, state := range []string{"COPY_STARTED", "DANGLING", "DELETE_STARTED"} {
		if strings.Contains(out, state) {
			t.Fatalf("a remote segment is still %s:\n%s", state, out)
		}
	}
	if !strings.Contains(out, "complete, no gaps, no double count") {
		t.Fatalf("coverage not complete:\n%s", out)
	}
}

// plantOrphanNamed copies the first .log object of the directory store at
// root to the key of another attempt of the same segment, whose id is the
// hex digit c 32 times: a valid segment object key that no metadata
// claims. It returns the new object's path.
func plantOrphanNamed(t *testing.T, root, c string) string {
	t.Helper()
	objs := remoteLogObjects(t, root)
	if len(objs) == 0 {
		t.Fatalf("no segment object under %s", root)
	}
	data, err := os.ReadFile(objs[0])
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(objs[0])
	orphan := filepath.Join(filepath.Dir(objs[0]), name[:21]+strings.Repeat(c, 32)+".log")
	writeFile(t, orphan, data)
	return orphan
}

// waitScans waits for n more reconciler scan summaries in b's log.
func waitScans(t *testing.T, b *Broker, n int) {
	t.Helper()
	from := b.output.Len()
	waitFor(t, tierSettle, "reconciler scans", func() bool {
		return strings.Count(b.output.Since(from), "bucket reconciler scan") >= n
	})
}

func requireFiles(t *testing.T, when string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if !exists(t, p) {
			t.Fatalf("%s: %s is gone", when, p)
		}
	}
}

func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Stat(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return err == nil
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// age sets path's modification time d in the past: the directory store's
// LastModified.
func age(t *testing.T, path string, d time.Duration) {
	t.Helper()
	then := time.Now().Add(-d)
	if err := os.Chtimes(path, then, then); err != nil {
		t.Fatal(err)
	}
}

package broker

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
)

// TestRestartedLeaderShowsOnlyWhatWasCommitted: a replica that restarts
// and leads again starts at its checkpointed high watermark, not its log
// end, so consumers do not see records its followers never fetched
// (which a leader elected from those followers would not have); as the
// followers fetch, the high watermark moves on.
func TestRestartedLeaderShowsOnlyWhatWasCommitted(t *testing.T) {
	f := newReplicationFixture(t, replicatedConfig(1))
	f.createTopic("restart-hw", []int32{1, 2, 3})
	tp := base.TopicPartition{Topic: "restart-hw", Partition: 0}
	appendRecords(t, f.hosted(tp), 10)
	f.mustFetch(tp, 2, 4, 0)
	f.mustFetch(tp, 3, 4, 0)
	appendRecords(t, f.hosted(tp), 5)
	if off := f.hosted(tp).Offsets(); off.HighWatermark != 4 || off.LogEnd != 15 {
		t.Fatalf("before the restart: high watermark %d, log end %d; want 4, 15", off.HighWatermark, off.LogEnd)
	}

	f.restart()
	if off := f.hosted(tp).Offsets(); off.HighWatermark != 4 || off.LogEnd != 15 {
		t.Fatalf("after the restart: high watermark %d, log end %d; want the checkpointed 4 and 15", off.HighWatermark, off.LogEnd)
	}
	f.mustFetch(tp, 2, 15, 0)
	f.mustFetch(tp, 3, 15, 0)
	if hw := f.hosted(tp).Offsets().HighWatermark; hw != 15 {
		t.Fatalf("after both followers fetched to the log end: high watermark %d, want 15", hw)
	}
}

// TestRestartedSoleReplicaShowsItsWholeLog: a partition whose ISR is its
// leader alone has committed its whole log, whatever the checkpoint says
// (an old, a corrupt or no checkpoint).
func TestRestartedSoleReplicaShowsItsWholeLog(t *testing.T) {
	for _, tc := range []struct {
		name       string
		checkpoint string // "" removes it
	}{
		{"stale checkpoint", "0\n1\nsole 0 3\n"},
		{"corrupt checkpoint", "0\n7\nsole 0\n"},
		{"no checkpoint", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newReplicationFixture(t, replicatedConfig(1))
			f.createTopic("sole", []int32{1})
			tp := base.TopicPartition{Topic: "sole", Partition: 0}
			appendRecords(t, f.hosted(tp), 10)
			if err := f.b.Close(); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(f.opts.DataDir, hwCheckpointFile)
			if tc.checkpoint == "" {
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
			} else if err := os.WriteFile(path, []byte(tc.checkpoint), 0o644); err != nil {
				t.Fatal(err)
			}
			f.restart()
			if off := f.hosted(tp).Offsets(); off.HighWatermark != 10 || off.LogEnd != 10 {
				t.Fatalf("after the restart: high watermark %d, log end %d; want 10, 10", off.HighWatermark, off.LogEnd)
			}
		})
	}
}

// TestCloseWritesTheHighWatermarkCheckpoint: Close leaves every hosted
// partition's high watermark in Kafka's format.
func TestCloseWritesTheHighWatermarkCheckpoint(t *testing.T) {
	f := newReplicationFixture(t, replicatedConfig(1))
	f.createTopic("cp", []int32{1, 2}, []int32{2, 1})
	led := base.TopicPartition{Topic: "cp", Partition: 0}
	appendRecords(t, f.hosted(led), 6)
	f.mustFetch(led, 2, 6, 0)
	if err := f.b.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(f.opts.DataDir, hwCheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := "0\n2\ncp 0 6\ncp 1 0\n"; string(data) != want {
		t.Fatalf("checkpoint:\n%s\nwant:\n%s", data, want)
	}
}

func TestHighWatermarkCheckpointRoundTrips(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		topic := rapid.StringMatching(`[a-zA-Z0-9._-]{1,20}`)
		hws := rapid.MapOf(
			rapid.Custom(func(t *rapid.T) base.TopicPartition {
				return base.TopicPartition{Topic: topic.Draw(t, "topic"), Partition: rapid.Int32Range(0, 1<<20).Draw(t, "partition")}
			}),
			rapid.Custom(func(t *rapid.T) base.Offset { return base.Offset(rapid.Int64Min(0).Draw(t, "hw")) }),
		).Draw(t, "hws")
		got, err := decodeHighWatermarks(encodeHighWatermarks(hws))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(hws) {
			t.Fatalf("decoded %d entries, encoded %d", len(got), len(hws))
		}
		for tp, hw := range hws {
			if got[tp] != hw {
				t.Fatalf("%v: decoded %d, encoded %d", tp, got[tp], hw)
			}
		}
	})
}

func TestHighWatermarkCheckpointRefusesOtherFormats(t *testing.T) {
	for _, bad := range []string{
		"",
		"0\n",
		"0\n0",                    // no newline at the end
		"1\n0\n",                  // another version
		"0\n2\nt 0 1\n",           // fewer entries than counted
		"0\n1\nt 0\n",             // an entry without its offset
		"0\n1\nt -1 5\n",          // a negative partition
		"0\n1\nt 0 -5\n",          // a negative offset
		"0\n1\nt 0 five\n",        // not a number
		"0\nx\nt 0 5\n",           // no count
		"0\n1\nt 0 5 6\n",         // a field too many
		"0\n1\nt 99999999999 5\n", // partition past int32
		"0\n1\nt 0 5\nt 1",        // a torn entry past the count
	} {
		if hws, err := decodeHighWatermarks([]byte(bad)); err == nil {
			t.Errorf("decodeHighWatermarks(%q) = %v, want an error", bad, hws)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("decodeHighWatermarks(%q): error on several lines: %v", bad, err)
		}
	}
}

// TestHighWatermarkCheckpointFile: a missing checkpoint is an empty one;
// each partition takes its entry once; a write that changes nothing
// leaves the file alone, and write reports when it starts or stops
// failing.
func TestHighWatermarkCheckpointFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := openHWCheckpoint(dir)
	if err != nil {
		t.Fatalf("no checkpoint file: %v, want an empty checkpoint", err)
	}
	tp := base.TopicPartition{Topic: "t", Partition: 0}
	hws := map[base.TopicPartition]base.Offset{tp: 7}
	if _, err := c.write(hws); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, hwCheckpointFile)
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.write(hws); err != nil {
		t.Fatal(err)
	}
	if after, err := os.Stat(path); err != nil || !os.SameFile(before, after) {
		t.Fatalf("an unchanged checkpoint was rewritten (%v)", err)
	}

	c, err = openHWCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.take(tp); !got.Set || got.Offset != 7 {
		t.Fatalf("first take %+v, want 7", got)
	}
	if got := c.take(tp); got.Set {
		t.Fatalf("second take %+v, want nothing: only the first open restores it", got)
	}

	moved := dir + ".moved"
	for _, step := range []struct {
		what        string
		hw          base.Offset
		dirGone     bool
		wantChanged bool
	}{
		{"first failure", 8, true, true},
		{"failing still", 9, true, false},
		{"success again", 9, false, true},
		{"success still", 10, false, false},
	} {
		if _, err := os.Stat(dir); step.dirGone == (err == nil) {
			from, to := dir, moved
			if !step.dirGone {
				from, to = moved, dir
			}
			if err := os.Rename(from, to); err != nil {
				t.Fatal(err)
			}
		}
		changed, err := c.write(map[base.TopicPartition]base.Offset{tp: step.hw})
		if (err != nil) != step.dirGone || changed != step.wantChanged {
			t.Fatalf("%s: changed %v, err %v; want changed %v, failing %v", step.what, changed, err, step.wantChanged, step.dirGone)
		}
	}
}

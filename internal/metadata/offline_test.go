package metadata

import (
	"crypto/sha256"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// TestLoadOfflineRebuildsTheImage: a stopped store's directory yields the
// image the store published (topics, configs, remote segments, a pending
// remote delete), from the log alone or from a snapshot plus the log, and
// the directory is byte for byte and name for name what it was.
func TestLoadOfflineRebuildsTheImage(t *testing.T) {
	for _, mode := range []string{"log only", "snapshot then log"} {
		t.Run(mode, func(t *testing.T) {
			ctx := t.Context()
			o := testOptions(t, t.TempDir(), "")
			st := openStore(t, o)
			populate(t, st, "a")
			tiered, err := st.CreateTopic(ctx, CreateTopic{Name: "tiered", Partitions: 2, ReplicationFactor: 1})
			if err != nil {
				t.Fatal(err)
			}
			moveTo(t, st, storeSeg(1, tiered, 0, 0, 10), remotemeta.CopyStarted, remotemeta.CopyFinished)
			if mode == "snapshot then log" {
				if err := st.raft.Snapshot().Error(); err != nil {
					t.Fatalf("forced snapshot: %v", err)
				}
			}
			moveTo(t, st, storeSeg(2, tiered, 1, 0, 5), remotemeta.CopyStarted)
			populate(t, st, "b")
			if err := st.DeleteTopic(ctx, "tiered"); err != nil {
				t.Fatal(err)
			}
			want := st.Image()
			closeStore(t, st)
			before := treeDigest(t, o.Dir)

			got, err := LoadOffline(o.Dir)
			if err != nil {
				t.Fatalf("LoadOffline: %v", err)
			}
			sameState(t, got.Image, want)
			if got.Image.Version != want.Version || got.Image.ControllerID != want.ControllerID {
				t.Errorf("version %d controller %d, want %d and %d", got.Image.Version, got.Image.ControllerID, want.Version, want.ControllerID)
			}
			if snap := got.SnapshotIndex != 0; snap != (mode == "snapshot then log") {
				t.Errorf("snapshot index %d in mode %q", got.SnapshotIndex, mode)
			}
			if got.LastIndex < want.Version {
				t.Errorf("last index %d below the image version %d", got.LastIndex, want.Version)
			}
			if after := treeDigest(t, o.Dir); !maps.Equal(before, after) {
				t.Errorf("LoadOffline changed the directory:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

func TestLoadOfflineRefusesARunningStore(t *testing.T) {
	o := testOptions(t, t.TempDir(), "")
	st := openStore(t, o)
	defer closeStore(t, st)
	if _, err := LoadOffline(o.Dir); !errors.Is(err, ErrMetadataInUse) {
		t.Fatalf("LoadOffline of an open store: %v, want ErrMetadataInUse", err)
	}
}

func TestLoadOfflineWithoutMetadata(t *testing.T) {
	if _, err := LoadOffline(t.TempDir()); !errors.Is(err, ErrNoMetadata) {
		t.Fatalf("LoadOffline of an empty directory: %v, want ErrNoMetadata", err)
	}
}

// treeDigest maps each path under dir to a digest of its mode and bytes.
func treeDigest(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		var data []byte
		if d.Type().IsRegular() {
			if data, err = os.ReadFile(path); err != nil {
				return err
			}
		}
		out[path] = sha256.Sum256(append([]byte(info.Mode().String()+info.ModTime().String()), data...))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

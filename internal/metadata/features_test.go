package metadata

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// A feature's level is its default until UpdateFeatures sets one; levels
// outside the supported range and unknown features are refused; the levels
// and the version of their last change survive a snapshot (v13 on), and a v12
// snapshot holding them is corrupt.
func TestFeatureLevels(t *testing.T) {
	img := build(t)
	if got := img.FeatureLevel(TransactionVersion); got != 2 || img.FeaturesEpoch() != 1 {
		t.Fatalf("a new cluster: transaction.version %d at epoch %d, want 2 at 1", got, img.FeaturesEpoch())
	}
	next, err := applyCommand(img, &setFeatureCmd{Name: TransactionVersion, Level: 1}, 40)
	if err != nil || next.FeatureLevel(TransactionVersion) != 1 || next.FeaturesEpoch() != 40 || img.FeatureLevel(TransactionVersion) != 2 {
		t.Fatalf("after setting 1: %v, level %d at epoch %d (the old image %d)", err, next.FeatureLevel(TransactionVersion), next.FeaturesEpoch(), img.FeatureLevel(TransactionVersion))
	}
	for _, c := range []*setFeatureCmd{{Name: TransactionVersion, Level: 3}, {Name: TransactionVersion, Level: -1}, {Name: "metadata.version", Level: 1}} {
		if _, err := applyCommand(next, c, 41); !errors.Is(err, ErrInvalidCommand) {
			t.Errorf("%+v: %v, want ErrInvalidCommand", c, err)
		}
	}
	data, err := encodeSnapshot(next)
	if err != nil || data[0] != snapshotFormatNewest {
		t.Fatalf("encoded as %d: %v", data[0], err)
	}
	back, err := decodeSnapshot(data)
	if err != nil || back.FeatureLevel(TransactionVersion) != 1 || back.FeaturesEpoch() != 40 {
		t.Fatalf("round trip: %v, level %d at epoch %d", err, back.FeatureLevel(TransactionVersion), back.FeaturesEpoch())
	}
	if _, err := decodeSnapshot(append([]byte{snapshotFormatV12}, data[1:]...)); !errors.Is(err, ErrInvalidCommand) {
		t.Errorf("v12 snapshot with features: %v, want ErrInvalidCommand", err)
	}
	bad := strings.Replace(string(data), `"level":1`, `"level":7`, 1)
	if _, err := decodeSnapshot([]byte(bad)); !errors.Is(err, ErrInvalidCommand) {
		t.Errorf("snapshot with an unsupported level: %v, want ErrInvalidCommand", err)
	}
}

// SetFeature goes through the quorum like every change.
func TestStoreSetFeature(t *testing.T) {
	s := openStore(t, testOptions(t, t.TempDir(), ""))
	defer closeStore(t, s)
	if err := s.SetFeature(context.Background(), TransactionVersion, 0); err != nil {
		t.Fatal(err)
	}
	if got := s.Image().FeatureLevel(TransactionVersion); got != 0 {
		t.Fatalf("transaction.version %d after setting 0", got)
	}
}

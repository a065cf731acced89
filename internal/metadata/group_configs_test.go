package metadata

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
)

// Consumer groups' dynamic configs are set and removed by group, survive a
// snapshot (v12 on), and a v11 snapshot holding them is corrupt, as is one
// naming a group twice or none.
func TestGroupConfigs(t *testing.T) {
	img := build(t,
		&setGroupConfigsCmd{Group: "g1", Configs: map[string]string{"consumer.session.timeout.ms": "50000"}},
		&setGroupConfigsCmd{Group: "g2", Configs: map[string]string{"consumer.heartbeat.interval.ms": "6000"}},
		&setGroupConfigsCmd{Group: "g2"})
	want := map[string]map[string]string{"g1": {"consumer.session.timeout.ms": "50000"}}
	if !maps.EqualFunc(img.GroupConfigs, want, maps.Equal) {
		t.Fatalf("group configs %v, want %v", img.GroupConfigs, want)
	}
	if _, err := applyCommand(img, &setGroupConfigsCmd{Configs: map[string]string{"a": "b"}}, 99); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("configs of no group: %v, want ErrInvalidConfig", err)
	}

	img.GroupConfigs["g0"] = map[string]string{"consumer.heartbeat.interval.ms": "7000"}
	data, err := encodeSnapshot(img)
	if err != nil || data[0] != snapshotFormatNewest {
		t.Fatalf("encoded as %d: %v", data[0], err)
	}
	back, err := decodeSnapshot(data)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.EqualFunc(back.GroupConfigs, img.GroupConfigs, maps.Equal) {
		t.Fatalf("round trip: %v, want %v", back.GroupConfigs, img.GroupConfigs)
	}
	if !strings.Contains(string(data), `"group_configs":[{"group":"g0"`) {
		t.Fatalf("groups not ascending in %s", data)
	}
	if _, err := decodeSnapshot(append([]byte{snapshotFormatV11}, data[1:]...)); !errors.Is(err, ErrInvalidCommand) {
		t.Errorf("v11 snapshot with group configs: %v, want ErrInvalidCommand", err)
	}
	for name, edit := range map[string]func(string) string{
		"a group twice": func(s string) string { return strings.Replace(s, `"group":"g1"`, `"group":"g0"`, 1) },
		"no group":      func(s string) string { return strings.Replace(s, `"group":"g1"`, `"group":""`, 1) },
	} {
		if _, err := decodeSnapshot([]byte(edit(string(data)))); !errors.Is(err, ErrInvalidCommand) {
			t.Errorf("%s: %v, want ErrInvalidCommand", name, err)
		}
	}
}

// SetGroupConfigs goes through the quorum like every change.
func TestStoreSetGroupConfigs(t *testing.T) {
	s := openStore(t, testOptions(t, t.TempDir(), ""))
	defer closeStore(t, s)
	ctx := context.Background()
	if err := s.SetGroupConfigs(ctx, "g", map[string]string{"consumer.session.timeout.ms": "55000"}); err != nil {
		t.Fatal(err)
	}
	if got := s.Image().GroupConfigs["g"]["consumer.session.timeout.ms"]; got != "55000" {
		t.Fatalf("after SetGroupConfigs: %q", got)
	}
}

package metadata

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"
)

// cmSub is a client metrics subscription's configs, as KIP-714 names them.
func cmSub(interval string) map[string]string {
	return map[string]string{"metrics": "org.apache.kafka.producer.", "interval.ms": interval, "match": "client_software_name=apache-kafka-java"}
}

// Client metrics subscriptions' configs are set, replaced and removed by
// name; the image keeps its own copy and earlier images do not change.
func TestClientMetricsConfigsApply(t *testing.T) {
	img := build(t,
		&setClientMetricsConfigsCmd{Name: "s1", Configs: cmSub("60000")},
		&setClientMetricsConfigsCmd{Name: "s2", Configs: cmSub("30000")},
		&setClientMetricsConfigsCmd{Name: "s1", Configs: map[string]string{"interval.ms": "5000"}},
		&setClientMetricsConfigsCmd{Name: "s2"},
		&setClientMetricsConfigsCmd{Name: "never-set", Configs: map[string]string{}})
	want := map[string]map[string]string{"s1": {"interval.ms": "5000"}}
	if !maps.EqualFunc(img.ClientMetricsConfigs, want, maps.Equal) {
		t.Fatalf("client metrics configs %v, want %v", img.ClientMetricsConfigs, want)
	}
	if len(img.GroupConfigs) != 0 {
		t.Fatalf("group configs changed: %v", img.GroupConfigs)
	}

	cmd := &setClientMetricsConfigsCmd{Name: "s3", Configs: cmSub("1000")}
	next := applyChecked(t, img, cmd, nil)
	cmd.Configs["interval.ms"] = "2"
	if got := next.ClientMetricsConfigs["s3"]["interval.ms"]; got != "1000" {
		t.Errorf("the image shares the command's map: interval.ms %q after the command changed", got)
	}
	if _, ok := img.ClientMetricsConfigs["s3"]; ok || len(img.ClientMetricsConfigs) != 1 {
		t.Errorf("the earlier image changed: %v", img.ClientMetricsConfigs)
	}
	gone := applyChecked(t, next, &setClientMetricsConfigsCmd{Name: "s1"}, nil)
	if _, ok := gone.ClientMetricsConfigs["s1"]; ok || next.ClientMetricsConfigs["s1"] == nil {
		t.Errorf("delete: new %v, earlier %v", gone.ClientMetricsConfigs, next.ClientMetricsConfigs)
	}
}

// A subscription without a name, or with configs validateConfigs refuses,
// is refused with ErrInvalidConfig and changes nothing.
func TestClientMetricsConfigsRefused(t *testing.T) {
	img := build(t, &setClientMetricsConfigsCmd{Name: "s", Configs: cmSub("60000")})
	tooMany := make(map[string]string, maxConfigEntries+1)
	for i := range maxConfigEntries + 1 {
		tooMany[fmt.Sprintf("k%d", i)] = "v"
	}
	for name, c := range map[string]*setClientMetricsConfigsCmd{
		"no name":            {Configs: cmSub("1")},
		"no name, no config": {},
		"empty config name":  {Name: "s", Configs: map[string]string{"": "x"}},
		"too many configs":   {Name: "s", Configs: tooMany},
	} {
		next, err := applyCommand(img, c, 99)
		if !errors.Is(err, ErrInvalidConfig) || next != nil {
			t.Errorf("%s: %v (image %v), want ErrInvalidConfig and no image", name, err, next != nil)
		}
	}
	if !maps.EqualFunc(img.ClientMetricsConfigs, map[string]map[string]string{"s": cmSub("60000")}, maps.Equal) {
		t.Fatalf("a refused command changed the image: %v", img.ClientMetricsConfigs)
	}
}

// The configs survive a snapshot (v14 on), ascending by name, and nothing
// else of the image changes with them.
func TestSnapshotKeepsClientMetricsConfigs(t *testing.T) {
	img := build(t,
		&setGroupConfigsCmd{Group: "g", Configs: map[string]string{"consumer.session.timeout.ms": "50000"}},
		&setClientMetricsConfigsCmd{Name: "s2", Configs: cmSub("30000")},
		&setClientMetricsConfigsCmd{Name: "s1", Configs: cmSub("60000")})
	data := encodeNewest(t, img)
	if snapshotFormatNewest != snapshotFormatV14 {
		t.Fatalf("newest snapshot format %d, want v14", snapshotFormatNewest)
	}
	if !strings.Contains(string(data), `"client_metrics_configs":[{"name":"s1"`) {
		t.Fatalf("subscriptions not ascending in %s", data)
	}
	roundTrip(t, img)

	if data := encodeNewest(t, emptyImage()); strings.Contains(string(data), "client_metrics_configs") {
		t.Errorf("an image without subscriptions writes them: %s", data)
	}
}

// A v13 snapshot, which has no client metrics configs, still decodes, to an
// image with an empty (not nil) map; one holding them is corrupt.
func TestV13SnapshotHasNoClientMetricsConfigs(t *testing.T) {
	img := build(t,
		&setGroupConfigsCmd{Group: "g", Configs: map[string]string{"consumer.session.timeout.ms": "50000"}},
		&setFeatureCmd{Name: TransactionVersion, Level: 1})
	var s imageSnapshotV13
	s.imageSnapshot = imageSnapshot{ClusterID: img.ClusterID, Version: img.Version, BrokerConfigs: img.BrokerConfigs, Topics: []*Topic{}}
	s.GroupConfigs = []wireGroupConfigs{{Group: "g", Configs: img.GroupConfigs["g"]}}
	s.Features = []wireFeature{{Name: TransactionVersion, Level: 1}}
	s.FeaturesVersion = img.FeaturesVersion
	back, err := decodeSnapshot(mustJSON(t, snapshotFormatV13, s))
	if err != nil {
		t.Fatal(err)
	}
	if back.ClientMetricsConfigs == nil || len(back.ClientMetricsConfigs) != 0 {
		t.Fatalf("client metrics configs of a v13 snapshot: %#v, want an empty map", back.ClientMetricsConfigs)
	}
	if !reflect.DeepEqual(back, img) {
		t.Fatalf("v13 snapshot decodes to\n %#v\nwant %#v", back, img)
	}

	with := build(t, &setClientMetricsConfigsCmd{Name: "s", Configs: cmSub("60000")})
	data := encodeNewest(t, with)
	if _, err := decodeSnapshot(append([]byte{snapshotFormatV13}, data[1:]...)); !errors.Is(err, ErrInvalidCommand) {
		t.Errorf("v13 snapshot with client metrics configs: %v, want ErrInvalidCommand", err)
	}
}

// A snapshot naming a subscription twice or none, or with an empty or
// invalid config map, is corrupt.
func TestSnapshotRefusesBadClientMetricsConfigs(t *testing.T) {
	good := func() imageSnapshotV14 {
		var s imageSnapshotV14
		s.Topics = []*Topic{}
		s.ClientMetricsConfigs = []wireClientMetricsConfigs{{Name: "s0", Configs: cmSub("1")}, {Name: "s1", Configs: cmSub("2")}}
		return s
	}
	if img, err := decodeSnapshot(mustJSON(t, snapshotFormatV14, good())); err != nil || len(img.ClientMetricsConfigs) != 2 {
		t.Fatalf("the valid snapshot: %v", err)
	}
	for name, tc := range map[string]struct {
		edit func(*imageSnapshotV14)
		want error
	}{
		"a name twice": {func(s *imageSnapshotV14) { s.ClientMetricsConfigs[1].Name = "s0" }, ErrInvalidCommand},
		"no name":      {func(s *imageSnapshotV14) { s.ClientMetricsConfigs[1].Name = "" }, ErrInvalidCommand},
		"no configs":   {func(s *imageSnapshotV14) { s.ClientMetricsConfigs[1].Configs = nil }, ErrInvalidCommand},
		"empty configs": {func(s *imageSnapshotV14) { s.ClientMetricsConfigs[1].Configs = map[string]string{} },
			ErrInvalidCommand},
		"empty config name": {func(s *imageSnapshotV14) { s.ClientMetricsConfigs[1].Configs = map[string]string{"": "x"} },
			ErrInvalidConfig},
	} {
		s := good()
		tc.edit(&s)
		if _, err := decodeSnapshot(mustJSON(t, snapshotFormatV14, s)); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
}

// SetClientMetricsConfigs goes through the quorum like every change, and
// its result comes back after Close/Open, from the log alone or from a
// snapshot plus the log, removals included.
func TestStoreSetClientMetricsConfigs(t *testing.T) {
	for _, mode := range []string{"log only", "snapshot then log"} {
		t.Run(mode, func(t *testing.T) {
			ctx := t.Context()
			o := testOptions(t, t.TempDir(), "")
			st := openStore(t, o)
			set := func(name string, configs map[string]string) {
				t.Helper()
				if err := st.SetClientMetricsConfigs(ctx, name, configs); err != nil {
					t.Fatal(err)
				}
			}
			set("s1", cmSub("60000"))
			set("s2", cmSub("30000"))
			if mode == "snapshot then log" {
				if err := st.raft.Snapshot().Error(); err != nil {
					t.Fatalf("forced snapshot: %v", err)
				}
			}
			set("s1", map[string]string{"interval.ms": "5000"})
			set("s2", nil)
			if err := st.SetClientMetricsConfigs(ctx, "", cmSub("1")); !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("a subscription without a name: %v, want ErrInvalidConfig", err)
			}
			want := map[string]map[string]string{"s1": {"interval.ms": "5000"}}
			if got := st.Image().ClientMetricsConfigs; !maps.EqualFunc(got, want, maps.Equal) {
				t.Fatalf("after SetClientMetricsConfigs: %v, want %v", got, want)
			}
			closeStore(t, st)

			st = openStore(t, o)
			defer closeStore(t, st)
			if got := st.Image().ClientMetricsConfigs; !maps.EqualFunc(got, want, maps.Equal) {
				t.Fatalf("after a restart: %v, want %v", got, want)
			}
		})
	}
}

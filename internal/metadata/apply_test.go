package metadata

import (
	"errors"
	"maps"
	"reflect"
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

func tid(b byte) base.TopicID { return base.TopicID{15: b} }

// build applies cmds in order from the empty image, failing on any rejection.
func build(t *testing.T, cmds ...command) *Image {
	t.Helper()
	img := emptyImage()
	for i, c := range cmds {
		next, err := applyCommand(img, c, uint64(i+1))
		if err != nil {
			t.Fatalf("setup command %d (%T): %v", i, c, err)
		}
		img = next
	}
	return img
}

func createCmd(name string, id byte, partitions int) *createTopicCmd {
	a := make([][]int32, partitions)
	for i := range a {
		a[i] = []int32{1}
	}
	return &createTopicCmd{Name: name, ID: tid(id), Assignments: a, Configs: map[string]string{"cleanup.policy": "delete"}}
}

// replicaIDs is the replica list 0..n-1.
func replicaIDs(n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(i)
	}
	return out
}

func TestApplyCommand(t *testing.T) {
	clusterID := newClusterID()
	withFoo := []command{createCmd("foo", 1, 2)}
	tests := []struct {
		name    string
		setup   []command
		cmd     command
		wantErr error
		check   func(t *testing.T, img *Image)
	}{
		{name: "init cluster", cmd: &initClusterCmd{ClusterID: clusterID},
			check: func(t *testing.T, img *Image) {
				if img.ClusterID != clusterID {
					t.Errorf("ClusterID = %q", img.ClusterID)
				}
			}},
		{name: "init cluster twice", setup: []command{&initClusterCmd{ClusterID: clusterID}},
			cmd: &initClusterCmd{ClusterID: newClusterID()}, wantErr: ErrClusterInitialized},
		{name: "init cluster bad id", cmd: &initClusterCmd{ClusterID: "short"}, wantErr: ErrInvalidCommand},
		{name: "controller change", cmd: &controllerChangeCmd{NodeID: 7},
			check: func(t *testing.T, img *Image) {
				if img.ControllerID != 7 {
					t.Errorf("ControllerID = %d", img.ControllerID)
				}
			}},
		{name: "controller negative", cmd: &controllerChangeCmd{NodeID: -1}, wantErr: ErrInvalidCommand},
		{name: "create topic", cmd: createCmd("foo", 1, 3),
			check: func(t *testing.T, img *Image) {
				tp := img.Topics["foo"]
				if tp == nil || img.TopicsByID[tid(1)] != tp {
					t.Fatalf("topic not indexed by name and id: %+v", img)
				}
				want := []Partition{
					{Index: 0, Leader: 1, Replicas: []int32{1}, ISR: []int32{1}},
					{Index: 1, Leader: 1, Replicas: []int32{1}, ISR: []int32{1}},
					{Index: 2, Leader: 1, Replicas: []int32{1}, ISR: []int32{1}},
				}
				if !reflect.DeepEqual(tp.Partitions, want) {
					t.Errorf("partitions = %+v", tp.Partitions)
				}
			}},
		{name: "create duplicate name", setup: withFoo, cmd: createCmd("foo", 2, 1), wantErr: ErrTopicExists},
		{name: "create duplicate id", setup: withFoo, cmd: createCmd("bar", 1, 1), wantErr: ErrTopicIDExists},
		{name: "create zero id", cmd: createCmd("foo", 0, 1), wantErr: ErrInvalidCommand},
		{name: "create no partitions", cmd: createCmd("foo", 1, 0), wantErr: ErrInvalidPartitions},
		{name: "create bad name", cmd: createCmd("a/b", 1, 1), wantErr: ErrInvalidTopicName},
		{name: "create dot name", cmd: createCmd("..", 1, 1), wantErr: ErrInvalidTopicName},
		{name: "create duplicate replicas",
			cmd:     &createTopicCmd{Name: "foo", ID: tid(1), Assignments: [][]int32{{1, 1}}},
			wantErr: ErrInvalidReplicaAssignment},
		{name: "create too many replicas",
			cmd:     &createTopicCmd{Name: "foo", ID: tid(1), Assignments: [][]int32{replicaIDs(maxReplicationFactor + 1)}},
			wantErr: ErrInvalidReplicaAssignment},
		{name: "create the most replicas",
			cmd: &createTopicCmd{Name: "foo", ID: tid(1), Assignments: [][]int32{replicaIDs(maxReplicationFactor)}},
			check: func(t *testing.T, img *Image) {
				if got := len(img.Topics["foo"].Partitions[0].Replicas); got != maxReplicationFactor {
					t.Errorf("%d replicas, want %d", got, maxReplicationFactor)
				}
			}},
		{name: "create empty replicas",
			cmd:     &createTopicCmd{Name: "foo", ID: tid(1), Assignments: [][]int32{{}}},
			wantErr: ErrInvalidReplicaAssignment},
		{name: "create empty config key",
			cmd:     &createTopicCmd{Name: "foo", ID: tid(1), Assignments: [][]int32{{1}}, Configs: map[string]string{"": "x"}},
			wantErr: ErrInvalidConfig},
		{name: "delete topic", setup: withFoo, cmd: &deleteTopicCmd{Name: "foo", ID: tid(1)},
			check: func(t *testing.T, img *Image) {
				if len(img.Topics) != 0 || len(img.TopicsByID) != 0 {
					t.Errorf("topic still present: %+v", img)
				}
			}},
		{name: "delete unknown", cmd: &deleteTopicCmd{Name: "foo", ID: tid(1)}, wantErr: ErrUnknownTopic},
		{name: "delete wrong id", setup: withFoo, cmd: &deleteTopicCmd{Name: "foo", ID: tid(9)}, wantErr: ErrUnknownTopic},
		{name: "create partitions", setup: withFoo,
			cmd: &createPartitionsCmd{Name: "foo", ID: tid(1), NewTotal: 4, Assignments: [][]int32{{1}, {1}}},
			check: func(t *testing.T, img *Image) {
				ps := img.Topics["foo"].Partitions
				if len(ps) != 4 || ps[3].Index != 3 || ps[3].Leader != 1 {
					t.Errorf("partitions = %+v", ps)
				}
			}},
		{name: "create partitions not larger", setup: withFoo,
			cmd:     &createPartitionsCmd{Name: "foo", ID: tid(1), NewTotal: 2},
			wantErr: ErrInvalidPartitions},
		{name: "create partitions stale plan", setup: withFoo,
			cmd:     &createPartitionsCmd{Name: "foo", ID: tid(1), NewTotal: 4, Assignments: [][]int32{{1}}},
			wantErr: errStaleProposal},
		{name: "create partitions unknown",
			cmd:     &createPartitionsCmd{Name: "foo", ID: tid(1), NewTotal: 4, Assignments: [][]int32{{1}}},
			wantErr: ErrUnknownTopic},
		{name: "set topic configs replaces", setup: withFoo,
			cmd: &setTopicConfigsCmd{Name: "foo", ID: tid(1), Configs: map[string]string{"retention.ms": "1"}},
			check: func(t *testing.T, img *Image) {
				if got := img.Topics["foo"].Configs; !maps.Equal(got, map[string]string{"retention.ms": "1"}) {
					t.Errorf("configs = %v", got)
				}
				if img.TopicsByID[tid(1)] != img.Topics["foo"] {
					t.Error("TopicsByID not updated")
				}
			}},
		{name: "set topic configs unknown", cmd: &setTopicConfigsCmd{Name: "foo", ID: tid(1)}, wantErr: ErrUnknownTopic},
		{name: "set broker configs", cmd: &setBrokerConfigsCmd{Configs: map[string]string{"log.retention.ms": "5"}},
			check: func(t *testing.T, img *Image) {
				if img.BrokerConfigs["log.retention.ms"] != "5" {
					t.Errorf("broker configs = %v", img.BrokerConfigs)
				}
			}},
		{name: "set node configs", cmd: &setBrokerConfigsCmd{Node: new(int32(3)), Configs: map[string]string{"log.retention.ms": "6"}},
			check: func(t *testing.T, img *Image) {
				if img.NodeConfigs[3]["log.retention.ms"] != "6" || len(img.BrokerConfigs) != 0 {
					t.Errorf("node configs = %v, cluster-wide = %v", img.NodeConfigs, img.BrokerConfigs)
				}
			}},
		{name: "clear node configs", setup: []command{&setBrokerConfigsCmd{Node: new(int32(3)), Configs: map[string]string{"a": "b"}}},
			cmd: &setBrokerConfigsCmd{Node: new(int32(3)), Configs: map[string]string{}},
			check: func(t *testing.T, img *Image) {
				if _, ok := img.NodeConfigs[3]; ok {
					t.Errorf("node configs = %v, want none for node 3", img.NodeConfigs)
				}
			}},
		{name: "node configs of a negative node", cmd: &setBrokerConfigsCmd{Node: new(int32(-1)), Configs: map[string]string{"a": "b"}}, wantErr: ErrInvalidConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := applyChecked(t, build(t, tt.setup...), tt.cmd, tt.wantErr); got != nil {
				tt.check(t, got)
			}
		})
	}
}

// applyCase is one row of a table of commands: cmd applied to the image
// setup builds (the empty image without it), failing with wantErr or
// passing check (when set) and a snapshot round trip.
type applyCase struct {
	name    string
	setup   func(t *testing.T) *Image
	cmd     command
	wantErr error
	check   func(t *testing.T, img *Image)
}

func runApplyCases(t *testing.T, cases []applyCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			before := emptyImage()
			if tt.setup != nil {
				before = tt.setup(t)
			}
			if got := applyChecked(t, before, tt.cmd, tt.wantErr); got != nil {
				if tt.check != nil {
					tt.check(t, got)
				}
				roundTrip(t, got)
			}
		})
	}
}

// applyChecked applies cmd to before at Raft index 100 and checks what
// every command must do: fail with wantErr (then return no image) or
// succeed when wantErr is nil, produce an image of that version holding
// the image invariants, and leave before untouched either way
// (copy-on-write). It returns the new image, nil after a rejection.
func applyChecked(t *testing.T, before *Image, cmd command, wantErr error) *Image {
	t.Helper()
	checkImageInvariants(t, before)
	snapshot, err := encodeSnapshot(before)
	if err != nil {
		t.Fatal(err)
	}
	const index = 100
	got, err := applyCommand(before, cmd, index)
	if !errors.Is(err, wantErr) || (wantErr == nil) != (err == nil) {
		t.Fatalf("err = %v, want %v", err, wantErr)
	}
	if err != nil && got != nil {
		t.Fatal("rejected command returned an image")
	}
	if after, _ := encodeSnapshot(before); string(after) != string(snapshot) {
		t.Error("applyCommand mutated its input image")
	}
	if err != nil {
		return nil
	}
	if got.Version != index {
		t.Errorf("Version = %d, want %d", got.Version, index)
	}
	checkImageInvariants(t, got)
	return got
}

// checkImageInvariants checks the documented invariants of Image and Topic.
func checkImageInvariants(t *testing.T, img *Image) {
	t.Helper()
	if img.Topics == nil || img.TopicsByID == nil || img.BrokerConfigs == nil || img.NodeConfigs == nil {
		t.Fatalf("nil map in image %+v", img)
	}
	for node, configs := range img.NodeConfigs {
		if node < 0 || len(configs) == 0 {
			t.Fatalf("dynamic configs of broker %d: %v", node, configs)
		}
	}
	if len(img.Topics) != len(img.TopicsByID) {
		t.Fatalf("%d topics by name, %d by id", len(img.Topics), len(img.TopicsByID))
	}
	for name, tp := range img.Topics {
		if tp.Name != name || img.TopicsByID[tp.ID] != tp {
			t.Fatalf("topic %q badly indexed", name)
		}
		if err := validateTopic(tp); err != nil {
			t.Fatalf("topic %q: %v", name, err)
		}
	}
	if err := remoteInvariantErr(img); err != nil {
		t.Fatal(err)
	}
	if err := scramInvariantErr(img); err != nil {
		t.Fatal(err)
	}
	if err := clientQuotaInvariantErr(img); err != nil {
		t.Fatal(err)
	}
	if err := aclInvariantErr(img); err != nil {
		t.Fatal(err)
	}
	if err := brokerInvariantErr(img); err != nil {
		t.Fatal(err)
	}
	if err := delegationTokenInvariantErr(img); err != nil {
		t.Fatal(err)
	}
	if err := namedConfigsInvariantErr(img); err != nil {
		t.Fatal(err)
	}
}

func TestCreatePartitionsDoesNotShareBackingArray(t *testing.T) {
	img := build(t, createCmd("foo", 1, 1))
	// Two images grown from the same parent must not see each other's partitions.
	a, err := applyCommand(img, &createPartitionsCmd{Name: "foo", ID: tid(1), NewTotal: 2, Assignments: [][]int32{{1}}}, 10)
	if err != nil {
		t.Fatal(err)
	}
	b, err := applyCommand(img, &createPartitionsCmd{Name: "foo", ID: tid(1), NewTotal: 2, Assignments: [][]int32{{2}}}, 11)
	if err != nil {
		t.Fatal(err)
	}
	if a.Topics["foo"].Partitions[1].Leader != 1 || b.Topics["foo"].Partitions[1].Leader != 2 {
		t.Fatalf("images share partitions: a=%+v b=%+v", a.Topics["foo"].Partitions, b.Topics["foo"].Partitions)
	}
	if len(img.Topics["foo"].Partitions) != 1 {
		t.Fatalf("parent image changed")
	}
}

func TestValidateTopicName(t *testing.T) {
	long := string(make([]byte, 250))
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"orders", true}, {"a.b_c-D9", true}, {"", false}, {".", false}, {"..", false},
		{"...", true}, {"has space", false}, {"ü", false}, {long, false},
	} {
		if err := validateTopicName(tc.name); (err == nil) != tc.ok {
			t.Errorf("validateTopicName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

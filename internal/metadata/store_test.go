package metadata

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/quota"
)

func testOptions(t *testing.T, dir, bindAddr string) Options {
	return Options{
		Dir:      dir,
		NodeID:   3,
		BindAddr: bindAddr,
		Clock:    clock.Real{},
		Logger:   slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

func openStore(t *testing.T, o Options) *Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s, err := Open(ctx, o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func closeStore(t *testing.T, s *Store) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// sameState compares everything but Version and ControllerID, which each
// leadership term moves on.
func sameState(t *testing.T, got, want *Image) {
	t.Helper()
	if got.ClusterID != want.ClusterID {
		t.Errorf("ClusterID = %q, want %q", got.ClusterID, want.ClusterID)
	}
	if !reflect.DeepEqual(got.Topics, want.Topics) || !reflect.DeepEqual(got.TopicsByID, want.TopicsByID) {
		t.Errorf("topics differ:\n got %v\nwant %v", got.Topics, want.Topics)
	}
	if !maps.Equal(got.BrokerConfigs, want.BrokerConfigs) {
		t.Errorf("BrokerConfigs = %v, want %v", got.BrokerConfigs, want.BrokerConfigs)
	}
	sameRemote(t, got, want)
	if !reflect.DeepEqual(got.scram, want.scram) {
		t.Errorf("SCRAM credentials differ:\n got %+v\nwant %+v", got.scram, want.scram)
	}
	if !reflect.DeepEqual(got.clientQuotas, want.clientQuotas) {
		t.Errorf("client quotas differ:\n got %v\nwant %v", got.clientQuotas, want.clientQuotas)
	}
	if g, w := got.Acls(), want.Acls(); !reflect.DeepEqual(g, w) {
		t.Errorf("ACLs differ:\n got %+v\nwant %+v", g, w)
	}
	if !reflect.DeepEqual(got.AclIndex(), want.AclIndex()) {
		t.Error("ACL indexes differ")
	}
	if g, w := got.DelegationTokens(), want.DelegationTokens(); !reflect.DeepEqual(g, w) {
		t.Errorf("delegation tokens differ:\n got %+v\nwant %+v", g, w)
	}
}

func TestStoreCommands(t *testing.T) {
	ctx := t.Context()
	s := openStore(t, testOptions(t, t.TempDir(), ""))
	defer closeStore(t, s)

	img := s.Image()
	if len(img.ClusterID) != 22 || img.ControllerID != 3 {
		t.Fatalf("after Open: cluster id %q, controller %d", img.ClusterID, img.ControllerID)
	}
	watch, cancel := s.Watch()
	defer cancel()

	topic, err := s.CreateTopic(ctx, CreateTopic{Name: "orders", Partitions: 3, ReplicationFactor: 1,
		Configs: map[string]string{"retention.ms": "1000"}})
	if err != nil {
		t.Fatal(err)
	}
	if topic.ID.IsZero() || len(topic.Partitions) != 3 || s.Image().TopicsByID[topic.ID] != topic {
		t.Fatalf("created topic %+v not in image", topic)
	}
	for _, p := range topic.Partitions {
		if p.Leader != 3 || p.LeaderEpoch != 0 || !reflect.DeepEqual(p.Replicas, []int32{3}) || !reflect.DeepEqual(p.ISR, []int32{3}) {
			t.Errorf("partition %+v", p)
		}
	}
	select {
	case <-watch:
	case <-time.After(5 * time.Second):
		t.Fatal("no watch signal after CreateTopic")
	}

	fixedID := base.TopicID{1, 2, 3}
	if got, err := s.CreateTopic(ctx, CreateTopic{Name: "fixed", ID: fixedID, Partitions: 1, ReplicationFactor: 1}); err != nil || got.ID != fixedID {
		t.Fatalf("CreateTopic with id: %v, %+v", err, got)
	}

	for _, tc := range []struct {
		name string
		err  error
		run  func() error
	}{
		{"duplicate name", ErrTopicExists, func() error {
			_, err := s.CreateTopic(ctx, CreateTopic{Name: "orders", Partitions: 1, ReplicationFactor: 1})
			return err
		}},
		{"duplicate id", ErrTopicIDExists, func() error {
			_, err := s.CreateTopic(ctx, CreateTopic{Name: "other", ID: fixedID, Partitions: 1, ReplicationFactor: 1})
			return err
		}},
		{"zero partitions", ErrInvalidPartitions, func() error {
			_, err := s.CreateTopic(ctx, CreateTopic{Name: "other", Partitions: 0, ReplicationFactor: 1})
			return err
		}},
		{"replication factor above brokers", ErrInvalidReplicationFactor, func() error {
			_, err := s.CreateTopic(ctx, CreateTopic{Name: "other", Partitions: 1, ReplicationFactor: 2})
			return err
		}},
		{"bad name", ErrInvalidTopicName, func() error {
			_, err := s.CreateTopic(ctx, CreateTopic{Name: "a b", Partitions: 1, ReplicationFactor: 1})
			return err
		}},
		{"shrink partitions", ErrInvalidPartitions, func() error { return s.CreatePartitions(ctx, "orders", 3, nil) }},
		{"grow unknown", ErrUnknownTopic, func() error { return s.CreatePartitions(ctx, "nope", 3, nil) }},
		{"grow with too few assignments", ErrInvalidReplicaAssignment, func() error {
			return s.CreatePartitions(ctx, "orders", 6, [][]int32{{1}})
		}},
		{"delete unknown", ErrUnknownTopic, func() error { return s.DeleteTopic(ctx, "nope") }},
		{"configs unknown", ErrUnknownTopic, func() error { return s.SetTopicConfigs(ctx, "nope", nil) }},
		{"bad broker config", ErrInvalidConfig, func() error { return s.SetBrokerConfigs(ctx, map[string]string{"": "x"}) }},
	} {
		if err := tc.run(); !errors.Is(err, tc.err) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.err)
		}
	}

	if err := s.CreatePartitions(ctx, "orders", 5, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTopicConfigs(ctx, "orders", map[string]string{"cleanup.policy": "compact"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetBrokerConfigs(ctx, map[string]string{"log.retention.ms": "60000"}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteTopic(ctx, "fixed"); err != nil {
		t.Fatal(err)
	}
	img = s.Image()
	orders := img.Topics["orders"]
	if len(orders.Partitions) != 5 || orders.ID != topic.ID || !maps.Equal(orders.Configs, map[string]string{"cleanup.policy": "compact"}) {
		t.Errorf("orders = %+v", orders)
	}
	if _, ok := img.TopicsByID[fixedID]; ok || len(img.Topics) != 1 {
		t.Errorf("deleted topic still present: %v", img.Topics)
	}
	if img.BrokerConfigs["log.retention.ms"] != "60000" {
		t.Errorf("BrokerConfigs = %v", img.BrokerConfigs)
	}
	// The topic returned earlier is immutable: later changes did not touch it.
	if len(topic.Partitions) != 3 || topic.Configs["retention.ms"] != "1000" {
		t.Errorf("published topic was mutated: %+v", topic)
	}
}

func TestStoreConcurrentCreateOneWins(t *testing.T) {
	s := openStore(t, testOptions(t, t.TempDir(), ""))
	defer closeStore(t, s)
	const n = 16
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, errs[i] = s.CreateTopic(t.Context(), CreateTopic{Name: "race", Partitions: 1, ReplicationFactor: 1})
		})
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, ErrTopicExists):
			t.Errorf("unexpected error %v", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d creates won, want 1", wins)
	}
}

func TestStoreConcurrentCreatePartitions(t *testing.T) {
	s := openStore(t, testOptions(t, t.TempDir(), ""))
	defer closeStore(t, s)
	if _, err := s.CreateTopic(t.Context(), CreateTopic{Name: "t", Partitions: 1, ReplicationFactor: 1}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for total := int32(2); total <= 9; total++ {
		wg.Go(func() {
			if err := s.CreatePartitions(t.Context(), "t", total, nil); err != nil && !errors.Is(err, ErrInvalidPartitions) {
				t.Errorf("CreatePartitions(%d): %v", total, err)
			}
		})
	}
	wg.Wait()
	tp := s.Image().Topics["t"]
	if err := validateTopic(tp); err != nil {
		t.Fatal(err)
	}
	if len(tp.Partitions) != 9 {
		t.Fatalf("%d partitions, want 9 (the largest request wins)", len(tp.Partitions))
	}
}

// populate makes a few changes of every kind and returns the resulting image.
func populate(t *testing.T, s *Store, prefix string) *Image {
	t.Helper()
	ctx := t.Context()
	for i := range 3 {
		if _, err := s.CreateTopic(ctx, CreateTopic{Name: fmt.Sprintf("%s%d", prefix, i), Partitions: int32(i + 1),
			ReplicationFactor: 1, Configs: map[string]string{"k": "v"}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreatePartitions(ctx, prefix+"0", 4, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteTopic(ctx, prefix+"1"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetBrokerConfigs(ctx, map[string]string{"by": prefix}); err != nil {
		t.Fatal(err)
	}
	both := map[string]ScramCredential{ScramSHA256: scramCred(ScramSHA256, 1), ScramSHA512: scramCred(ScramSHA512, 2)}
	for _, user := range []string{prefix + "-kept", prefix + "-halved", prefix + "-gone"} {
		if err := s.AlterScramCredentials(ctx, user, both, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AlterScramCredentials(ctx, prefix+"-halved", nil, []string{ScramSHA512}); err != nil {
		t.Fatal(err)
	}
	if err := s.AlterScramCredentials(ctx, prefix+"-gone", nil, []string{ScramSHA256, ScramSHA512}); err != nil {
		t.Fatal(err)
	}
	kept, halved, gone := quota.Entity{User: quota.NamedPart(prefix + "-kept")}, quota.Entity{ClientID: quota.NamedPart(prefix + "-halved")},
		quota.Entity{User: quota.NamedPart(prefix + "-gone"), ClientID: quota.DefaultPart()}
	if err := s.AlterClientQuotas(ctx, []ClientQuotaAlteration{
		{Entity: kept, Set: rates(1024, 2048)}, {Entity: halved, Set: rates(1024, 2048)}, {Entity: gone, Set: rates(1, 0)},
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.AlterClientQuotas(ctx, []ClientQuotaAlteration{
		{Entity: halved, Remove: []string{quota.ConsumerByteRate}}, {Entity: gone, Remove: []string{quota.ProducerByteRate}},
	}); err != nil {
		t.Fatal(err)
	}
	keptAcl, goneAcl := aclTopicRead, aclTopicWrite
	keptAcl.ResourceName, goneAcl.ResourceName = prefix+"-kept", prefix+"-gone"
	if err := s.CreateAcls(ctx, []acl.Binding{keptAcl, goneAcl, aclGroupRead}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteAcls(ctx, []acl.Binding{goneAcl}); err != nil {
		t.Fatal(err)
	}
	return s.Image()
}

func TestStoreRestartRestoresImage(t *testing.T) {
	for _, mode := range []string{"log only", "snapshot then log"} {
		t.Run(mode, func(t *testing.T) {
			o := testOptions(t, t.TempDir(), "")
			s := openStore(t, o)
			want := populate(t, s, "a")
			if mode == "snapshot then log" {
				if err := s.raft.Snapshot().Error(); err != nil {
					t.Fatalf("forced snapshot: %v", err)
				}
				want = populate(t, s, "b") // entries after the snapshot are replayed from the log
			}
			closeStore(t, s)

			s = openStore(t, o)
			defer closeStore(t, s)
			got := s.Image()
			sameState(t, got, want)
			if got.ControllerID != o.NodeID || got.Version <= want.Version {
				t.Errorf("after restart: controller %d version %d (before %d)", got.ControllerID, got.Version, want.Version)
			}
			// The restored state accepts commands as before.
			if _, err := s.CreateTopic(t.Context(), CreateTopic{Name: "a0", Partitions: 1, ReplicationFactor: 1}); !errors.Is(err, ErrTopicExists) {
				t.Errorf("re-create a0: %v", err)
			}
		})
	}
}

// A quorum bootstrapped with Options.ClusterID takes it (Kafka's formatted
// cluster id); a log that has one keeps it whatever the option says.
func TestStoreTakesTheGivenClusterID(t *testing.T) {
	const formatted, other = "MkU3OEVBNTcwNTJENDM2Qg", "AAAAAAAAAAAAAAAAAAAAAA"
	o := testOptions(t, t.TempDir(), "")
	o.ClusterID = formatted
	s := openStore(t, o)
	if got := s.Image().ClusterID; got != formatted {
		t.Fatalf("ClusterID = %q, want %q", got, formatted)
	}
	closeStore(t, s)
	o.ClusterID = other
	s = openStore(t, o)
	defer closeStore(t, s)
	if got := s.Image().ClusterID; got != formatted {
		t.Fatalf("after a restart with another ClusterID: %q, want %q", got, formatted)
	}
}

func TestStoreTCPTransport(t *testing.T) {
	if testing.Short() {
		t.Skip("TCP transport uses Raft's default (second-scale) election timeouts")
	}
	o := testOptions(t, t.TempDir(), "127.0.0.1:0")
	s := openStore(t, o)
	want := populate(t, s, "tcp")
	closeStore(t, s)

	s = openStore(t, o)
	defer closeStore(t, s)
	sameState(t, s.Image(), want)
}

func TestOpenContextExpires(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Open(ctx, testOptions(t, t.TempDir(), "")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Open with canceled ctx: %v", err)
	}
}

func TestStoreAfterClose(t *testing.T) {
	s := openStore(t, testOptions(t, t.TempDir(), ""))
	closeStore(t, s)
	closeStore(t, s) // idempotent
	if _, err := s.CreateTopic(t.Context(), CreateTopic{Name: "x", Partitions: 1, ReplicationFactor: 1}); !errors.Is(err, ErrClosed) {
		t.Fatalf("CreateTopic after Close: %v", err)
	}
	if s.Image() == nil {
		t.Fatal("Image() is nil after Close")
	}
}

func TestWatchCoalesces(t *testing.T) {
	var w watchers
	ch, cancel := w.add()
	for range 5 {
		w.notify() // never blocks, even though nobody reads
	}
	<-ch
	select {
	case <-ch:
		t.Fatal("signals did not coalesce")
	default:
	}
	cancel()
	w.notify()
	select {
	case <-ch:
		t.Fatal("signal after cancel")
	default:
	}
}

func TestOptionsValidate(t *testing.T) {
	good := Options{Dir: "d", NodeID: 0, Clock: clock.Real{}}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, o := range map[string]Options{
		"no dir":      {NodeID: 1, Clock: clock.Real{}},
		"negative id": {Dir: "d", NodeID: -1, Clock: clock.Real{}},
		"no clock":    {Dir: "d", NodeID: 1},
		"bad cluster": {Dir: "d", NodeID: 1, Clock: clock.Real{}, ClusterID: "cluster-a"},
	} {
		if o.Validate() == nil {
			t.Errorf("%s: Validate accepted %+v", name, o)
		}
	}
}

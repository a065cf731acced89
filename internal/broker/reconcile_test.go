package broker

import (
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/partition"
)

// slowOpenMarker is a topic config that makes heldOpens hold up the
// resolution of the topic's config, which every partition open begins
// with: it stands for an open whose file work takes long (a slow disk, a
// long recovery).
const slowOpenMarker = "segment.ms"

// heldOpens holds each open of a topic carrying slowOpenMarker until the
// test releases it.
type heldOpens struct {
	entered chan struct{}
	release chan struct{}
}

func newHeldOpens() *heldOpens {
	return &heldOpens{entered: make(chan struct{}, 16), release: make(chan struct{})}
}

// resolver wraps resolve, holding the topics that carry the marker.
func (h *heldOpens) resolver(resolve ConfigResolver) ConfigResolver {
	return func(cs ConfigSources) (partition.Config, error) {
		if _, slow := cs.Topic[slowOpenMarker]; slow {
			h.entered <- struct{}{}
			<-h.release
		}
		return resolve(cs)
	}
}

// awaitEntered waits for an open to be held.
func (h *heldOpens) awaitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-h.entered:
	case <-time.After(30 * time.Second):
		t.Fatal("no partition open began within 30 s of creating the topic")
	}
}

// createHeldTopic creates a one-partition topic on node 1 whose open the
// held resolver holds up; the broker's image watcher begins opening it.
func createHeldTopic(t *testing.T, meta *metadata.Store, name string) {
	t.Helper()
	if _, err := meta.CreateTopic(t.Context(), metadata.CreateTopic{Name: name, Assignments: [][]int32{{1}},
		Configs: map[string]string{slowOpenMarker: "604800000"}}); err != nil {
		t.Fatal(err)
	}
}

// mustServeWhile finds topic's partition 0 on b and appends a record to
// it, as a request would, while what is named holds b up; after 30 s it
// gives up, calls release and fails.
func mustServeWhile(t *testing.T, b *Broker, topic, what string, release func()) {
	t.Helper()
	served := make(chan error, 1)
	go func() {
		p, ok := b.Partition(base.TopicPartition{Topic: topic, Partition: 0})
		if !ok {
			served <- fmt.Errorf("%s-0 is not hosted", topic)
			return
		}
		_, _, err := p.Append(keyedBatch("k"), partition.AcksLeader)
		served <- err
	}()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("appending to %s-0 while %s goes on: %v", topic, what, err)
		}
	case <-time.After(30 * time.Second):
		release()
		t.Fatalf("a request to %s-0 waited 30 s for %s", topic, what)
	}
}

// TestOpeningAPartitionDoesNotStallTheOthers: while the broker opens a
// new partition (held up here in its open), requests to the partitions
// already open find them and append. Every request takes the broker's
// lock to find its partition: an open that held it would stall them all
// (a topic of 50 partitions created next to a producer held its records
// for half a second).
func TestOpeningAPartitionDoesNotStallTheOthers(t *testing.T) {
	meta := openTestMeta(t)
	held := newHeldOpens()
	o := idleTestOptions(t, meta, replicatedConfig(1))
	o.Resolve = held.resolver(o.Resolve)
	if _, err := meta.CreateTopic(t.Context(), metadata.CreateTopic{Name: "busy", Assignments: [][]int32{{1}}}); err != nil {
		t.Fatal(err)
	}
	b := startTestBroker(t, o)
	busy := hostedPartition(t, b, "busy")

	createHeldTopic(t, meta, "slow")
	held.awaitEntered(t)
	mustServeWhile(t, b, "busy", "slow-0's open", func() { close(held.release) })
	if end := busy.Offsets().LogEnd; end != 1 {
		t.Fatalf("busy-0's log end %d, want 1", end)
	}

	close(held.release)
	if _, ok := b.Partition(base.TopicPartition{Topic: "slow", Partition: 0}); !ok {
		t.Fatal("slow-0 is not hosted once its open went on")
	}
}

// TestCloseWaitsForAnOpenInFlight: a broker closed while it opens a
// partition outside its lock closes that partition too, and nothing is
// left running (the package's goleak check).
func TestCloseWaitsForAnOpenInFlight(t *testing.T) {
	meta := openTestMeta(t)
	held := newHeldOpens()
	o := idleTestOptions(t, meta, replicatedConfig(1))
	o.Resolve = held.resolver(o.Resolve)
	b, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	createHeldTopic(t, meta, "slow")
	held.awaitEntered(t)
	closed := make(chan error, 1)
	go func() { closed <- b.Close() }()
	close(held.release)
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return within 30 s of the open going on")
	}
	if parts := b.Partitions(); len(parts) != 0 {
		t.Fatalf("after Close, %d partitions are hosted", len(parts))
	}

	// The partition was closed cleanly: a broker on the same data opens
	// it with its config.
	o.Resolve = idleTestOptions(t, meta, replicatedConfig(1)).Resolve
	again := startTestBroker(t, o)
	hostedPartition(t, again, "slow")
}

// unfollowSignal passes Followers' calls on and tells of each Unfollow.
type unfollowSignal struct {
	Followers
	unfollowed chan base.TopicPartition
}

func (u unfollowSignal) Unfollow(tp base.TopicPartition) {
	u.Followers.Unfollow(tp)
	select {
	case u.unfollowed <- tp:
	default:
	}
}

// TestRoleChangeDoesNotStallTheOthers: a partition changing role writes
// its leader-epoch checkpoint (here held up: a FIFO where the write's
// temporary file goes blocks it until the test reads); meanwhile the
// partitions keeping their roles are found and take appends. At a
// failover a node takes over many partitions, each with a checkpoint
// write; under the broker's lock they stalled every request.
func TestRoleChangeDoesNotStallTheOthers(t *testing.T) {
	f := newReplicationFixture(t, replicatedConfig(1))
	signal := unfollowSignal{Followers: f.opts.Followers, unfollowed: make(chan base.TopicPartition, 8)}
	f.opts.Followers = signal
	f.restart()
	f.createTopic("steady", []int32{1})
	f.createTopic("moving", []int32{2, 1, 3})
	moving := base.TopicPartition{Topic: "moving", Partition: 0}
	// moving-0 follows broker 2 here; leading, it begins an epoch, a
	// checkpoint write.
	fifo := filepath.Join(f.b.partitionDir(moving), "leader-epoch-checkpoint.tmp")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	unblock := sync.OnceFunc(func() {
		r, err := os.Open(fifo) // lets the blocked write on; it then fails to fsync a FIFO
		if err != nil {
			t.Error(err)
			return
		}
		_, _ = io.ReadAll(r)
		_ = r.Close()
	})
	defer unblock()

	// Fencing broker 2 moves moving-0's leadership here; the image
	// watcher stops its fetching, then makes it the leader.
	if err := f.meta.FenceBroker(t.Context(), 2, f.epochs[2]); err != nil {
		t.Fatal(err)
	}
	select {
	case tp := <-signal.unfollowed:
		if tp != moving {
			t.Fatalf("%v stopped following, want %v", tp, moving)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("moving-0 did not stop following within 30 s of its leadership moving here")
	}
	mustServeWhile(t, f.b, "steady", "moving-0's role change", unblock)

	// The held write fails (a FIFO cannot be fsynced) and removes its
	// temporary file, the FIFO; the next reconcile writes the checkpoint
	// and moving-0 leads.
	unblock()
	f.reconcile()
	if !f.hosted(moving).IsLeader() {
		t.Fatal("moving-0 does not lead here after its leadership moved here")
	}
	epoch := f.imagePartition(moving).LeaderEpoch
	data, err := os.ReadFile(filepath.Join(f.b.partitionDir(moving), "leader-epoch-checkpoint"))
	if want := fmt.Sprintf("0\n1\n%d 0\n", epoch); err != nil || string(data) != want {
		t.Fatalf("moving-0's checkpoint %q, %v; want %q", data, err, want)
	}
}

// TestReconcileReportsAConfigItCannotApply: a topic config change that
// does not resolve fails the Reconcile; once the config is fixed, the
// next one succeeds.
func TestReconcileReportsAConfigItCannotApply(t *testing.T) {
	meta := openTestMeta(t)
	o := idleTestOptions(t, meta, replicatedConfig(1))
	resolve := o.Resolve
	o.Resolve = func(cs ConfigSources) (partition.Config, error) {
		if cs.Topic[slowOpenMarker] == "bad" {
			return partition.Config{}, fmt.Errorf("%s=bad", slowOpenMarker)
		}
		return resolve(cs)
	}
	b := startTestBroker(t, o)
	createTopic(t, meta, "cfg", 1)
	for _, step := range []struct {
		value string
		ok    bool
	}{{"bad", false}, {"1000", true}} {
		if err := meta.SetTopicConfigs(t.Context(), "cfg", map[string]string{slowOpenMarker: step.value}); err != nil {
			t.Fatal(err)
		}
		if err := b.Reconcile(); (err == nil) != step.ok {
			t.Fatalf("%s=%s: Reconcile %v, want ok %v", slowOpenMarker, step.value, err, step.ok)
		}
	}
}

// TestClaimDir: a partition directory left by a deleted topic of the
// same name is emptied before the new topic takes it; one of the same
// topic is kept as it is.
func TestClaimDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	old, cur := base.TopicID{1}, base.TopicID{2}
	if err := claimDir(dir, old); err != nil {
		t.Fatal(err)
	}
	stray := filepath.Join(dir, "00000000000000000000.log")
	for _, step := range []struct {
		id        base.TopicID
		keepsData bool
	}{{old, true}, {cur, false}} {
		if err := os.WriteFile(stray, []byte("data"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := claimDir(dir, step.id); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(stray); (err == nil) != step.keepsData {
			t.Fatalf("topic id %x: the log there: %v, want kept %v", step.id[0], err, step.keepsData)
		}
		data, err := os.ReadFile(filepath.Join(dir, PartitionMetadataFile))
		if err != nil || !strings.Contains(string(data), "topic_id: "+hex.EncodeToString(step.id[:])) {
			t.Fatalf("topic id %x: %s holds %q (%v)", step.id[0], PartitionMetadataFile, data, err)
		}
	}
}

// TestRemoveStrayDirs: at start, the directory of a partition no longer
// hosted (its topic deleted while the broker was down) and one left
// renamed for deletion (whatever is left in it) are removed; what is
// hosted, and a directory that is not a partition's, stay.
func TestRemoveStrayDirs(t *testing.T) {
	meta := openTestMeta(t)
	b := startTestBroker(t, idleTestOptions(t, meta, replicatedConfig(1)))
	createTopic(t, meta, "kept", 1)
	if err := b.Reconcile(); err != nil {
		t.Fatal(err)
	}
	dirs := map[string]bool{"kept-0": true, "notes": true, "deleted-0": false, "old-0.deleted": false}
	for name := range dirs {
		if name == "kept-0" {
			continue
		}
		path := filepath.Join(b.DataDir(), name)
		if err := os.MkdirAll(path, 0o755); err != nil {
			t.Fatal(err)
		}
		if name == "deleted-0" {
			if err := os.WriteFile(filepath.Join(path, PartitionMetadataFile), []byte("version: 0\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := b.removeStrayDirs(); err != nil {
		t.Fatal(err)
	}
	for name, keep := range dirs {
		if _, err := os.Stat(filepath.Join(b.DataDir(), name)); (err == nil) != keep {
			t.Errorf("%s: %v, want kept %v", name, err, keep)
		}
	}
}

// TestOpenAsFollower: a partition opened where another broker leads is a
// follower in the leader's epoch from the start, before it is hosted:
// no client may append to it meanwhile.
func TestOpenAsFollower(t *testing.T) {
	f := newReplicationFixture(t, replicatedConfig(1))
	tp := base.TopicPartition{Topic: "opened", Partition: 0}
	topic := &metadata.Topic{Name: tp.Topic, ID: base.TopicID{9}}
	h, err := f.b.open(tp, topic, metadata.Partition{Leader: 2, LeaderEpoch: 3, Replicas: []int32{2, 1}, ISR: []int32{2, 1}}, ConfigSources{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.p.Close()
	if h.p.IsLeader() || h.p.Offsets().LeaderEpoch != 3 {
		t.Fatalf("opened as leader %v in epoch %d, want a follower in 3", h.p.IsLeader(), h.p.Offsets().LeaderEpoch)
	}
}

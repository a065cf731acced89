package metadata

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

func endpoint(port int32) []Endpoint {
	return []Endpoint{{Listener: "PLAINTEXT", Host: "127.0.0.1", Port: port, SecurityProtocol: "PLAINTEXT"}}
}

func register(id int32, incarnation byte) *registerBrokerCmd {
	return &registerBrokerCmd{ID: id, Incarnation: [16]byte{incarnation}, Endpoints: endpoint(9000 + id)}
}

// brokerInvariantErr checks the broker invariants of Image.
func brokerInvariantErr(img *Image) error {
	if img.Brokers == nil {
		return errors.New("nil Brokers map")
	}
	for id, b := range img.Brokers {
		if b.ID != id {
			return fmt.Errorf("broker %d filed under %d", b.ID, id)
		}
		if b.ProducerIDsEnd < 0 || b.ProducerIDsEnd > img.NextProducerIDBlock || b.ProducerIDsEnd%ProducerIDBlockSize != 0 {
			return fmt.Errorf("broker %d's producer ids end at %d, next block %d", id, b.ProducerIDsEnd, img.NextProducerIDBlock)
		}
		if err := validateBroker(b); err != nil {
			return err
		}
	}
	if len(img.Brokers) == 0 {
		return nil
	}
	for _, t := range img.Topics {
		for _, p := range t.Partitions {
			if err := validatePartitionState(p); err != nil {
				return fmt.Errorf("%s-%d: %w", t.Name, p.Index, err)
			}
			if p.Leader != NoLeader {
				for _, r := range p.ISR {
					if img.Brokers[r] == nil {
						return fmt.Errorf("%s-%d: unregistered %d in isr %v", t.Name, p.Index, r, p.ISR)
					}
				}
				if !img.Eligible(p.Leader) {
					return fmt.Errorf("%s-%d: fenced leader %d", t.Name, p.Index, p.Leader)
				}
				for _, r := range p.ISR {
					if !img.Eligible(r) {
						return fmt.Errorf("%s-%d: fenced %d in isr %v led by %d", t.Name, p.Index, r, p.ISR, p.Leader)
					}
				}
				continue
			}
			if len(p.ISR) != 1 || img.Eligible(p.ISR[0]) {
				return fmt.Errorf("%s-%d: no leader but isr %v is not one fenced broker", t.Name, p.Index, p.ISR)
			}
		}
	}
	return nil
}

func partitionOf(img *Image, topic string, i int) Partition { return img.Topics[topic].Partitions[i] }

// threeBrokers registers and unfences brokers 1..3, with topic "t" of two
// partitions replicated on all three.
func threeBrokers(t *testing.T) *Image {
	t.Helper()
	img := build(t, register(1, 1), register(2, 1), register(3, 1))
	var cmds []command
	for id := int32(1); id <= 3; id++ {
		cmds = append(cmds, &unfenceBrokerCmd{ID: id, Epoch: img.Brokers[id].Epoch})
	}
	cmds = append(cmds, &createTopicCmd{Name: "t", ID: tid(1), Assignments: [][]int32{{1, 2, 3}, {2, 3, 1}}})
	for i, c := range cmds {
		next, err := applyCommand(img, c, uint64(10+i))
		if err != nil {
			t.Fatalf("setup %T: %v", c, err)
		}
		img = next
	}
	return img
}

func TestRegisterBroker(t *testing.T) {
	img := applyChecked(t, emptyImage(), register(1, 1), nil)
	b := img.Brokers[1]
	if b == nil || !b.Fenced || b.Epoch != 100 {
		t.Fatalf("registered %+v, want fenced at epoch 100", b)
	}
	if got := applyChecked(t, img, register(1, 1), nil); got.Brokers[1] != b {
		t.Error("a retried registration replaced the registration")
	}
	for _, bad := range []*registerBrokerCmd{
		{ID: -1, Endpoints: endpoint(1)},
		{ID: 1},
		{ID: 1, Endpoints: []Endpoint{{Listener: "A", Host: "h", Port: 0, SecurityProtocol: "PLAINTEXT"}}},
		{ID: 1, Endpoints: []Endpoint{{Listener: "A", Host: "h", Port: 1, SecurityProtocol: "KERBEROS"}}},
		{ID: 1, Endpoints: []Endpoint{{Listener: "", Host: "h", Port: 1, SecurityProtocol: "SSL"}}},
		{ID: 1, Endpoints: []Endpoint{{Listener: "A", Host: "", Port: 1, SecurityProtocol: "SSL"}}},
		{ID: 1, Endpoints: append(endpoint(1), endpoint(2)...)},
		{ID: 1, Endpoints: endpoint(1), Rack: string([]byte{0xff})},
	} {
		applyChecked(t, emptyImage(), bad, ErrInvalidBrokerRegistration)
	}
}

func TestFenceMovesLeadershipWithinTheISR(t *testing.T) {
	img := threeBrokers(t)
	before := partitionOf(img, "t", 0)
	img = applyChecked(t, img, &fenceBrokerCmd{ID: 1, Epoch: img.Brokers[1].Epoch}, nil)
	p := partitionOf(img, "t", 0)
	if p.Leader != 2 || !slices.Equal(p.ISR, []int32{2, 3}) || p.LeaderEpoch != before.LeaderEpoch+1 || p.PartitionEpoch != before.PartitionEpoch+1 {
		t.Errorf("after fencing the leader: %+v (before %+v)", p, before)
	}
	q := partitionOf(img, "t", 1)
	if q.Leader != 2 || !slices.Equal(q.ISR, []int32{2, 3}) || q.LeaderEpoch != 0 || q.PartitionEpoch != 1 {
		t.Errorf("after fencing a follower: %+v", q)
	}
	// The last ISR member stays, without leading; unfencing it restores it.
	img = applyChecked(t, img, &fenceBrokerCmd{ID: 2, Epoch: img.Brokers[2].Epoch}, nil)
	img = applyChecked(t, img, &fenceBrokerCmd{ID: 3, Epoch: img.Brokers[3].Epoch}, nil)
	p = partitionOf(img, "t", 0)
	if p.Leader != NoLeader || !slices.Equal(p.ISR, []int32{3}) {
		t.Fatalf("every broker fenced: %+v", p)
	}
	// Broker 1 coming back does not lead: it is not in the ISR (it may miss
	// acknowledged records).
	img = applyChecked(t, img, &unfenceBrokerCmd{ID: 1, Epoch: img.Brokers[1].Epoch}, nil)
	if p = partitionOf(img, "t", 0); p.Leader != NoLeader {
		t.Fatalf("an out-of-sync replica was elected: %+v", p)
	}
	epoch := p.LeaderEpoch
	img = applyChecked(t, img, &unfenceBrokerCmd{ID: 3, Epoch: img.Brokers[3].Epoch}, nil)
	if p = partitionOf(img, "t", 0); p.Leader != 3 || p.LeaderEpoch != epoch+1 {
		t.Fatalf("the last ISR member was not re-elected: %+v", p)
	}
}

func TestFenceIsFencedByBrokerEpoch(t *testing.T) {
	img := threeBrokers(t)
	old := img.Brokers[1].Epoch
	applyChecked(t, img, &fenceBrokerCmd{ID: 1, Epoch: old + 1}, ErrStaleBrokerEpoch)
	applyChecked(t, img, &fenceBrokerCmd{ID: 9, Epoch: 1}, ErrUnknownBroker)
	applyChecked(t, img, &unfenceBrokerCmd{ID: 9, Epoch: 1}, ErrUnknownBroker)
	// A new incarnation fences the old one first, then registers fenced.
	img = applyChecked(t, img, register(1, 2), nil)
	if b := img.Brokers[1]; !b.Fenced || b.Epoch <= old {
		t.Fatalf("re-registration: %+v", b)
	}
	if p := partitionOf(img, "t", 0); p.Leader != 2 || slices.Contains(p.ISR, 1) {
		t.Fatalf("the old incarnation still leads or is in sync: %+v", p)
	}
	applyChecked(t, img, &unfenceBrokerCmd{ID: 1, Epoch: old}, ErrStaleBrokerEpoch)
}

func TestAlterPartition(t *testing.T) {
	img := threeBrokers(t)
	p := partitionOf(img, "t", 0)
	change := func(edit func(*alterPartitionCmd)) *alterPartitionCmd {
		c := &alterPartitionCmd{TopicID: tid(1), Partition: 0, Leader: 1, BrokerEpoch: img.Brokers[1].Epoch,
			LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, ISR: []int32{3, 1}}
		if edit != nil {
			edit(c)
		}
		return c
	}
	shrunk := applyChecked(t, img, change(nil), nil)
	if got := partitionOf(shrunk, "t", 0); !slices.Equal(got.ISR, []int32{1, 3}) || got.PartitionEpoch != p.PartitionEpoch+1 || got.LeaderEpoch != p.LeaderEpoch {
		t.Errorf("shrunk: %+v", got)
	}
	for name, tc := range map[string]struct {
		edit func(*alterPartitionCmd)
		want error
	}{
		"unknown topic":      {func(c *alterPartitionCmd) { c.TopicID = tid(9) }, ErrUnknownTopic},
		"unknown partition":  {func(c *alterPartitionCmd) { c.Partition = 2 }, ErrInvalidPartitions},
		"not the leader":     {func(c *alterPartitionCmd) { c.Leader, c.BrokerEpoch = 2, img.Brokers[2].Epoch }, ErrNotLeader},
		"stale broker epoch": {func(c *alterPartitionCmd) { c.BrokerEpoch++ }, ErrStaleBrokerEpoch},
		"old leader epoch":   {func(c *alterPartitionCmd) { c.LeaderEpoch-- }, ErrFencedLeaderEpoch},
		"old partition epoch": {func(c *alterPartitionCmd) { c.PartitionEpoch-- },
			ErrInvalidUpdateVersion},
		// Epochs come from the image: one above it is no epoch this
		// quorum granted (Kafka answers NOT_CONTROLLER), never accepted.
		"future leader epoch": {func(c *alterPartitionCmd) { c.LeaderEpoch++ }, ErrFencedLeaderEpoch},
		"future partition epoch": {func(c *alterPartitionCmd) { c.PartitionEpoch++ },
			ErrInvalidUpdateVersion},
		"without the leader":  {func(c *alterPartitionCmd) { c.ISR = []int32{2, 3} }, ErrInvalidReplicaAssignment},
		"outside replicas":    {func(c *alterPartitionCmd) { c.ISR = []int32{1, 4} }, ErrInvalidReplicaAssignment},
		"duplicate member":    {func(c *alterPartitionCmd) { c.ISR = []int32{1, 1} }, ErrInvalidReplicaAssignment},
		"negative leader":     {func(c *alterPartitionCmd) { c.Leader = NoLeader }, ErrNotLeader},
		"empty isr":           {func(c *alterPartitionCmd) { c.ISR = nil }, ErrInvalidReplicaAssignment},
		"unchanged is a noop": {func(c *alterPartitionCmd) { c.ISR = []int32{2, 1, 3} }, nil},
	} {
		t.Run(name, func(t *testing.T) { applyChecked(t, img, change(tc.edit), tc.want) })
	}
	// A fenced broker cannot rejoin; an unfenced one can.
	fenced := applyChecked(t, shrunk, &fenceBrokerCmd{ID: 2, Epoch: img.Brokers[2].Epoch}, nil)
	q := partitionOf(fenced, "t", 0)
	rejoin := &alterPartitionCmd{TopicID: tid(1), Partition: 0, Leader: 1, BrokerEpoch: img.Brokers[1].Epoch,
		LeaderEpoch: q.LeaderEpoch, PartitionEpoch: q.PartitionEpoch, ISR: []int32{1, 2, 3}}
	applyChecked(t, fenced, rejoin, ErrIneligibleReplica)
	back := applyChecked(t, fenced, &unfenceBrokerCmd{ID: 2, Epoch: img.Brokers[2].Epoch}, nil)
	if got := partitionOf(applyChecked(t, back, rejoin, nil), "t", 0); !slices.Equal(got.ISR, []int32{1, 2, 3}) {
		t.Errorf("rejoined: %+v", got)
	}
}

func TestCreateTopicWithRegisteredBrokers(t *testing.T) {
	img := threeBrokers(t)
	img = applyChecked(t, img, &fenceBrokerCmd{ID: 2, Epoch: img.Brokers[2].Epoch}, nil)
	got := applyChecked(t, img, &createTopicCmd{Name: "u", ID: tid(2), Assignments: [][]int32{{2, 3, 1}}}, nil)
	if p := partitionOf(got, "u", 0); p.Leader != 3 || !slices.Equal(p.ISR, []int32{3, 1}) || !slices.Equal(p.Replicas, []int32{2, 3, 1}) {
		t.Errorf("created with a fenced replica: %+v", p)
	}
	applyChecked(t, img, &createTopicCmd{Name: "u", ID: tid(2), Assignments: [][]int32{{4}}}, ErrInvalidReplicaAssignment)
	applyChecked(t, img, &createTopicCmd{Name: "u", ID: tid(2), Assignments: [][]int32{{2}}}, ErrInvalidReplicaAssignment)
}

func TestStripedAssignment(t *testing.T) {
	got, err := stripedAssignment([]int32{0, 1, 2, 3, 4}, 0, 10, 3, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Kafka's documented example (AdminUtils): 5 brokers, 10 partitions, RF 3.
	want := [][]int32{{0, 1, 2}, {1, 2, 3}, {2, 3, 4}, {3, 4, 0}, {4, 0, 1}, {0, 2, 3}, {1, 3, 4}, {2, 4, 0}, {3, 0, 1}, {4, 1, 2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	if _, err := stripedAssignment([]int32{1, 2}, 0, 1, 3, 0, 0); !errors.Is(err, ErrInvalidReplicationFactor) {
		t.Errorf("RF 3 on 2 brokers: %v", err)
	}
	if _, err := stripedAssignment([]int32{1}, 0, 1, 0, 0, 0); !errors.Is(err, ErrInvalidReplicationFactor) {
		t.Errorf("RF 0: %v", err)
	}
}

func TestStripedAssignmentProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nb := rapid.IntRange(1, 9).Draw(t, "brokers")
		brokers := make([]int32, nb)
		for i := range brokers {
			brokers[i] = int32(i*3 + 1)
		}
		rf := int16(rapid.IntRange(1, nb).Draw(t, "rf"))
		n := rapid.IntRange(1, 40).Draw(t, "partitions")
		first := rapid.IntRange(0, 20).Draw(t, "first")
		start, shift := rapid.IntRange(0, nb-1).Draw(t, "start"), rapid.IntRange(0, nb-1).Draw(t, "shift")
		got, err := stripedAssignment(brokers, first, n, rf, start, shift)
		if err != nil {
			t.Fatal(err)
		}
		leaders := map[int32]int{}
		for i, replicas := range got {
			if len(replicas) != int(rf) || validateReplicas(replicas) != nil {
				t.Fatalf("partition %d: %v", i, replicas)
			}
			for _, r := range replicas {
				if !slices.Contains(brokers, r) {
					t.Fatalf("partition %d: unknown broker %d", i, r)
				}
			}
			leaders[replicas[0]]++
		}
		for _, b := range brokers {
			if c := leaders[b]; c < n/nb || c > (n+nb-1)/nb {
				t.Fatalf("broker %d leads %d of %d partitions over %d brokers", b, c, n, nb)
			}
		}
	})
}

// genClusterCommand draws a broker or partition change aimed at img.
func genClusterCommand(t *rapid.T, img *Image, i int) command {
	label := func(s string) string { return fmt.Sprintf("%s%d", s, i) }
	id := rapid.Int32Range(0, 4).Draw(t, label("broker"))
	epoch := int64(0)
	if b, ok := img.Brokers[id]; ok && rapid.IntRange(0, 9).Draw(t, label("stale")) > 0 {
		epoch = b.Epoch
	}
	switch rapid.IntRange(0, 6).Draw(t, label("kind")) {
	case 0:
		return register(id, byte(rapid.IntRange(1, 3).Draw(t, label("incarnation"))))
	case 6:
		return &allocateProducerIDsCmd{BrokerID: id, BrokerEpoch: epoch}
	case 1:
		return &fenceBrokerCmd{ID: id, Epoch: epoch}
	case 2:
		return &unfenceBrokerCmd{ID: id, Epoch: epoch}
	case 3:
		ids := make([]int32, 0, len(img.Brokers))
		for b := range img.Brokers {
			ids = append(ids, b)
		}
		slices.Sort(ids)
		if len(ids) == 0 {
			return register(id, 1)
		}
		a := rapid.SliceOfNDistinct(rapid.SampledFrom(ids), 1, 3, rapid.ID[int32]).Draw(t, label("replicas"))
		return &createTopicCmd{Name: fmt.Sprintf("t%d", i), ID: tid(byte(i + 1)), Assignments: [][]int32{a, slices.Clone(a)}}
	default:
		var names []string
		for name := range img.Topics {
			names = append(names, name)
		}
		if len(names) == 0 {
			return &unfenceBrokerCmd{ID: id, Epoch: epoch}
		}
		slices.Sort(names)
		tp := img.Topics[rapid.SampledFrom(names).Draw(t, label("topic"))]
		p := tp.Partitions[rapid.IntRange(0, len(tp.Partitions)-1).Draw(t, label("partition"))]
		isr := rapid.SliceOfNDistinct(rapid.SampledFrom(p.Replicas), 1, len(p.Replicas), rapid.ID[int32]).Draw(t, label("isr"))
		var brokerEpoch int64
		if b, ok := img.Brokers[p.Leader]; ok {
			brokerEpoch = b.Epoch
		}
		return &alterPartitionCmd{TopicID: tp.ID, Partition: p.Index, Leader: p.Leader, BrokerEpoch: brokerEpoch,
			LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, ISR: isr}
	}
}

// TestClusterCommandsKeepInvariants applies random registrations, fences,
// unfences, topic creations and ISR changes: every image keeps the
// invariants, epochs never go back, a partition's leader changes only with
// a new leader epoch, and every command and image survives its codec.
func TestClusterCommandsKeepInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		img := emptyImage()
		applied := map[string]int{}
		for i := range rapid.IntRange(1, 60).Draw(t, "n") {
			cmd := genClusterCommand(t, img, i)
			next, ok := applyDrawn(t, img, cmd, uint64(i+1), applied)
			if !ok {
				continue
			}
			for name, nt := range next.Topics {
				ot, ok := img.Topics[name]
				if !ok {
					continue
				}
				for j, np := range nt.Partitions {
					op := ot.Partitions[j]
					if np.LeaderEpoch < op.LeaderEpoch || np.PartitionEpoch < op.PartitionEpoch ||
						np.Leader != op.Leader && np.LeaderEpoch == op.LeaderEpoch ||
						!reflect.DeepEqual(np, op) && np.PartitionEpoch == op.PartitionEpoch {
						t.Fatalf("%s-%d: %+v → %+v after %#v", name, j, op, np, cmd)
					}
				}
			}
			snap, err := encodeSnapshot(next)
			if err != nil {
				t.Fatal(err)
			}
			restored, err := decodeSnapshot(snap)
			if err != nil || !reflect.DeepEqual(restored, next) {
				t.Fatalf("snapshot round trip: %v\n got %#v\nwant %#v", err, restored, next)
			}
			img = next
		}
		t.Logf("applied: %v", applied)
	})
}

func TestElectLeaderNeverPicksOutsideTheISR(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		replicas := rapid.SliceOfNDistinct(rapid.Int32Range(0, 6), 1, 5, rapid.ID[int32]).Draw(t, "replicas")
		isr := rapid.SliceOfNDistinct(rapid.SampledFrom(replicas), 0, len(replicas), rapid.ID[int32]).Draw(t, "isr")
		fenced := rapid.SliceOfNDistinct(rapid.Int32Range(0, 6), 0, 7, rapid.ID[int32]).Draw(t, "fenced")
		eligible := func(r int32) bool { return !slices.Contains(fenced, r) }
		got := electLeader(replicas, isr, eligible)
		for _, r := range replicas {
			if slices.Contains(isr, r) && eligible(r) {
				if got != r {
					t.Fatalf("elected %d, want the first eligible ISR replica %d", got, r)
				}
				return
			}
		}
		if got != NoLeader {
			t.Fatalf("elected %d with no eligible ISR replica", got)
		}
	})
}

// TestSnapshotV4StillDecodes: a v4 snapshot (before broker registrations)
// restores with no brokers and partition epochs 0; a v4 snapshot holding
// v5 fields is corrupt; broker registrations survive a v5 snapshot.
func TestSnapshotV4StillDecodes(t *testing.T) {
	img, err := decodeSnapshot([]byte("\x04{\"cluster_id\":\"\",\"controller_id\":1,\"version\":3,\"broker_configs\":{}," +
		"\"topics\":[{\"Name\":\"foo\",\"ID\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1],\"Partitions\":[{\"Index\":0,\"Leader\":1," +
		"\"LeaderEpoch\":2,\"Replicas\":[1],\"ISR\":[1]}],\"Configs\":null}],\"remote_segments\":null," +
		"\"pending_remote_deletes\":null,\"scram_credentials\":null,\"acls\":null}"))
	if err != nil {
		t.Fatal(err)
	}
	if img.Brokers == nil || len(img.Brokers) != 0 || partitionOf(img, "foo", 0).LeaderEpoch != 2 {
		t.Fatalf("decoded %+v", img)
	}
	checkImageInvariants(t, img)
	if _, err := decodeSnapshot([]byte("\x04{\"brokers\":[]}")); !errors.Is(err, ErrInvalidCommand) {
		t.Errorf("v4 with v5 fields: %v, want ErrInvalidCommand", err)
	}
	want := threeBrokers(t)
	data, err := encodeSnapshot(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeSnapshot(data)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("v5 round trip: %v\n got %+v\nwant %+v", err, got, want)
	}
	for name, brokers := range map[string]string{
		"null broker":   "[null]",
		"bad endpoint":  `[{"id":1,"incarnation":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],"epoch":1,"endpoints":[],"fenced":true}]`,
		"same id twice": `[{"id":1,"epoch":1,"endpoints":[{"listener":"A","host":"h","port":1,"security_protocol":"SSL"}]},{"id":1,"epoch":2,"endpoints":[{"listener":"A","host":"h","port":1,"security_protocol":"SSL"}]}]`,
	} {
		if _, err := decodeSnapshot([]byte("\x05{\"brokers\":" + brokers + "}")); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

func TestAllocateProducerIDs(t *testing.T) {
	img := threeBrokers(t)
	seen := map[int64]int32{}
	for i := range 6 {
		id := int32(i%3 + 1)
		img = applyChecked(t, img, &allocateProducerIDsCmd{BrokerID: id, BrokerEpoch: img.Brokers[id].Epoch}, nil)
		start := img.Brokers[id].ProducerIDsEnd - ProducerIDBlockSize
		if other, dup := seen[start]; dup {
			t.Fatalf("block %d given to brokers %d and %d", start, other, id)
		}
		seen[start] = id
	}
	if img.NextProducerIDBlock != 6*ProducerIDBlockSize {
		t.Errorf("next block %d after six", img.NextProducerIDBlock)
	}
	applyChecked(t, img, &allocateProducerIDsCmd{BrokerID: 1, BrokerEpoch: img.Brokers[1].Epoch + 1}, ErrStaleBrokerEpoch)
	applyChecked(t, img, &allocateProducerIDsCmd{BrokerID: 9, BrokerEpoch: 1}, ErrUnknownBroker)
	// A new incarnation gets new blocks, never an old one again.
	again := applyChecked(t, img, register(1, 9), nil)
	again = applyChecked(t, again, &allocateProducerIDsCmd{BrokerID: 1, BrokerEpoch: again.Brokers[1].Epoch}, nil)
	if start := again.Brokers[1].ProducerIDsEnd - ProducerIDBlockSize; seen[start] != 0 {
		t.Errorf("re-registered broker 1 got block %d again", start)
	}
	for name, next := range map[string]string{"negative": "-1000", "not a block": "1001", "below a broker's": "0", "fine": "2000"} {
		snap := "\x05" + fmt.Sprintf(`{"brokers":[{"id":1,"epoch":1,"endpoints":[{"listener":"A","host":"h","port":1,"security_protocol":"SSL"}],"producer_ids_end":1000}],"next_producer_id_block":%s}`, next)
		_, err := decodeSnapshot([]byte(snap))
		if ok := err == nil; ok != (name == "fine") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// applyDrawn round-trips cmd through the command codec, applies it to
// img at index and checks the image invariants, counting in applied what
// was applied or refused (by command type); ok is false for a refusal.
func applyDrawn(t *rapid.T, img *Image, cmd command, index uint64, applied map[string]int) (*Image, bool) {
	data, err := encodeCommand(cmd)
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := decodeCommand(data)
	if err != nil || !reflect.DeepEqual(normalize(decoded), normalize(cmd)) {
		t.Fatalf("codec: %#v → %#v, %v", cmd, decoded, err)
	}
	next, err := applyCommand(img, cmd, index)
	if err != nil {
		applied[fmt.Sprintf("refused %T", cmd)]++
		return nil, false
	}
	applied[fmt.Sprintf("%T", cmd)]++
	if err := invariantErr(next); err != nil {
		t.Fatalf("after %#v: %v", cmd, err)
	}
	return next, true
}

// TestUnfencedBrokers: the brokers new replicas are placed on
// (assignReplicas, the api's placeableBrokers) are the registered,
// unfenced ones, ascending; a fenced or unregistered broker is never one.
func TestUnfencedBrokers(t *testing.T) {
	if got := emptyImage().UnfencedBrokers(); len(got) != 0 {
		t.Errorf("no registrations: %v", got)
	}
	img := threeBrokers(t)
	img = applyChecked(t, img, register(5, 1), nil) // registered, fenced from the start
	if got := img.UnfencedBrokers(); !slices.Equal(got, []int32{1, 2, 3}) {
		t.Errorf("three unfenced, one new: %v", got)
	}
	img = applyChecked(t, img, &fenceBrokerCmd{ID: 2, Epoch: img.Brokers[2].Epoch}, nil)
	if got := img.UnfencedBrokers(); !slices.Equal(got, []int32{1, 3}) {
		t.Errorf("2 fenced: %v, want [1 3]", got)
	}
}

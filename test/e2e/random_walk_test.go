package e2e

import (
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestRandomWalksLeaveTheBrokerServing runs clients' conversations with
// the broker, several at once on the same groups and transactional ids:
// classic group members joining, syncing, heartbeating, committing and
// leaving; KIP-848 consumer group members; share group members fetching
// and acknowledging; transactional and idempotent producers. Each is a
// random walk: mostly the protocol's next step, built from what the
// answers so far said, sometimes any step, and one request in eight with
// a field made random (requestFiller.mutate). The random requests alone
// (TestRandomRequestsLeaveTheBrokerServing) rarely get past a handler's
// first checks for these APIs: a walk reaches the states behind them.
// Then the broker is killed and restarted, and the walks go on against
// the state it recovered (what the coordinators wrote must load again).
//
// Every answer must decode and carry no UNKNOWN_SERVER_ERROR, the broker
// must not exit, the walks must get an answer free of error codes from
// each API they drive (or they no longer reach what they are for), every
// transaction must end (the last stable offset catches up with the high
// watermark), a read_committed consumer must find every record whose
// append or commit was acknowledged, once, and none whose abort was
// (walkLedger), and a client must produce and consume afterwards.
// E2E_RANDOM_SEED picks the walks, E2E_WALK_STEPS (default 60) sets the
// steps of each walker before the restart (half as many after),
// E2E_RANDOM_VERBOSE=1 logs the answers by API and the broker's warnings.
func TestRandomWalksLeaveTheBrokerServing(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), walkBrokerOverrides...)
	walkAcrossACrash(t, b, prepareWalks(t, b.Addr, []*Broker{b}, nil))
}

// walkAcrossACrash runs the walks against the one node b, kills and
// restarts it, runs them on, and checks what the walks' tests check.
func walkAcrossACrash(t *testing.T, b *Broker, env *walkEnv) {
	t.Helper()
	walks := walkers(env)
	env.run(t, walks, env.steps)
	requireWalkTransactionsEnd(t, b.Addr)

	b.Kill()
	b.Restart()
	awaitCoordinators(t, newClient(t, b.Addr), 0, walkClassic, walkConsumer, walkShare, walkTxnGroup)
	awaitCoordinators(t, newClient(t, b.Addr), 1, walkTxnIDs...)
	env.run(t, walks, env.steps/2)
	env.requireReached(t)
	requireWalkTransactionsEnd(t, b.Addr)
	env.ledger.requireLedger(t, b.Addr, env)
	requireHealthy(t, b.Addr, randomHealthTopic, "random walks")
}

// TestClusterRandomWalksLeaveTheNodesServing is the same against three
// nodes, each request sent where a client would send it (routeOf): group
// and transaction requests to their coordinators, produces and share
// fetches to partition leaders, with replicated coordinator state and
// transaction markers between nodes. The node killed and restarted
// between the phases is the one coordinating the transactional ids' first
// walkers: their state must move and come back.
func TestClusterRandomWalksLeaveTheNodesServing(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3, append(walkBrokerOverrides, "min.insync.replicas=1")...)
	addr := c.Nodes[0].Addr
	env := prepareWalks(t, addr, c.Nodes, nil)
	walks := walkers(env)
	env.run(t, walks, env.steps)
	requireWalkTransactionsEnd(t, addr)

	victim := env.coordinator(t, 1, walkTxnIDs[0])
	if victim == nil {
		t.Fatalf("no coordinator for %s", walkTxnIDs[0])
	}
	victim.Kill()
	victim.Restart()
	cl := newClient(t, addr)
	awaitCoordinators(t, cl, 0, walkClassic, walkConsumer, walkShare, walkTxnGroup)
	awaitCoordinators(t, cl, 1, walkTxnIDs...)
	env.run(t, walks, env.steps/2)
	env.requireReached(t)
	requireWalkTransactionsEnd(t, addr)
	env.ledger.requireLedger(t, addr, env)
	for _, b := range c.Nodes {
		requireHealthy(t, b.Addr, randomHealthTopic, "random walks")
	}
}

// walkBrokerOverrides keep the walks' timers short: groups rebalance at
// once, classic members may ask for short sessions (a JoinGroup v0 has
// no rebalance timeout: its session timeout is one, and every rebalance
// waits for it), a member that a mutated JoinGroup left behind expires
// within seconds, transactions time out within seconds and are aborted soon
// after, so that requireTransactionsEnd need not wait long.
var walkBrokerOverrides = append(slices.Clone(groupBrokerOverrides),
	"transaction.max.timeout.ms=5000", "group.min.session.timeout.ms=500", "group.max.session.timeout.ms=10000",
	"transaction.abort.timed.out.transaction.cleanup.interval.ms=500",
	"group.share.min.record.lock.duration.ms=1000", "group.share.record.lock.duration.ms=2000")

const (
	walkTopic      = "walk"
	walkPartitions = 3
	walkClassic    = "walk-classic"
	walkConsumer   = "walk-consumer"
	walkShare      = "walk-share"
	walkTxnGroup   = "walk-txn-group"
	// walkWait is how long a walk's request may take: a JoinGroup waits
	// up to its rebalance timeout for the other members.
	walkWait = 5 * time.Second
	// walkMutateOneIn is how rarely a walk's request gets a random field.
	walkMutateOneIn = 8
	// walkAnyStepOneIn is how rarely a walk takes a random step instead
	// of the protocol's next one.
	walkAnyStepOneIn = 8
)

// walkTxnIDs are the transactional ids the producers share: two walkers
// on the first fence each other.
var walkTxnIDs = []string{"walk-txn-a", "walk-txn-a", "walk-txn-b"}

// walkDriven lists the APIs the walks drive to their end: each must have
// been answered without an error code at least once.
var walkDriven = []kmsg.Key{
	kmsg.JoinGroup, kmsg.SyncGroup, kmsg.Heartbeat, kmsg.OffsetCommit, kmsg.OffsetFetch, kmsg.LeaveGroup,
	kmsg.ConsumerGroupHeartbeat, kmsg.ShareGroupHeartbeat, kmsg.ShareFetch, kmsg.ShareAcknowledge,
	kmsg.InitProducerID, kmsg.AddPartitionsToTxn, kmsg.Produce, kmsg.AddOffsetsToTxn, kmsg.TxnOffsetCommit, kmsg.EndTxn,
	kmsg.Fetch,
}

// A walk is one client's conversation with the broker.
type walk interface {
	// step sends the walk's next request, or a random step's (w.pick).
	step(w *walker)
}

// walkers are the conversations of TestRandomWalksLeaveTheBrokerServing.
func walkers(env *walkEnv) []walk {
	var out []walk
	for i := range 3 {
		out = append(out, newClassicMember(i == 0), newConsumerMember(i == 0), newShareMember(env))
	}
	for _, id := range walkTxnIDs {
		out = append(out, &txnWalker{txnID: id, group: walkTxnGroup})
	}
	out = append(out, &idempotentWalker{}, &idempotentWalker{})
	return append(out, newFetchWalker(0), newFetchWalker(1), adminWalker{})
}

// walkEnv is what the walks share: the broker's API ranges, the nodes,
// and the tally of answers.
type walkEnv struct {
	apis    map[int16][2]int16 // advertised versions by key
	nodes   []*Broker
	cl      *kgo.Client // for FindCoordinator and Metadata
	topicID [16]byte
	ledger  *walkLedger
	shares  *shareCompletions
	owners  partitionOwners
	pad     int           // bytes the producer walks add to each record's value
	filler  requestFiller // a template: each walker has its own rng
	seed    int
	steps   int
	failed  atomic.Bool
	// batchesChecked counts the fetched batches fetchWalker checked.
	batchesChecked atomic.Int64

	mu    sync.Mutex
	tally map[kmsg.Key]*walkTally
	churn [16]byte // the churn topic's id, when the admin walker created it
	// journals are each walker's last requests and answers, by name,
	// for a failure that needs the story behind it (walkLedger).
	journals map[string][]string
}

// walkJournalLines bounds what a walker's journal keeps.
const walkJournalLines = 400

func (env *walkEnv) journal(walker, line string) {
	env.mu.Lock()
	defer env.mu.Unlock()
	if env.journals == nil {
		env.journals = map[string][]string{}
	}
	j := append(env.journals[walker], line)
	if len(j) > walkJournalLines {
		j = j[len(j)-walkJournalLines:]
	}
	env.journals[walker] = j
}

// journalOf is walker's journal, one line each.
func (env *walkEnv) journalOf(walker string) string {
	env.mu.Lock()
	defer env.mu.Unlock()
	return strings.Join(env.journals[walker], "\n")
}

func (env *walkEnv) setChurnID(id [16]byte) {
	env.mu.Lock()
	defer env.mu.Unlock()
	env.churn = id
}

func (env *walkEnv) churnID() [16]byte {
	env.mu.Lock()
	defer env.mu.Unlock()
	return env.churn
}

// walkTally counts one API's requests and how they were answered.
type walkTally struct {
	sent, clean, closed, timedOut int
	codes                         map[int16]int // error codes seen
}

// prepareWalks creates the topic the walks use, with configs and records
// in it, and sets the share group to start at the earliest offset.
func prepareWalks(t *testing.T, addr string, nodes []*Broker, configs map[string]*string) *walkEnv {
	t.Helper()
	adm := newAdmin(t, addr)
	// The brokers' default replication factor: every node's in a cluster.
	if _, err := adm.CreateTopic(testContext(t, 30*time.Second), walkPartitions, -1, configs, walkTopic); err != nil {
		t.Fatalf("creating %s: %v", walkTopic, err)
	}
	requirePartitionCount(t, adm, walkTopic, walkPartitions)
	createTopic(t, adm, randomHealthTopic, 1, nil)
	cl := newClient(t, addr)
	for i := range 30 {
		produceSync(t, cl, &kgo.Record{Topic: walkTopic, Partition: int32(i % walkPartitions), Value: []byte("walk")})
	}
	shareEarliest(t, addr, walkShare)
	awaitCoordinators(t, cl, 0, walkClassic, walkConsumer, walkShare, walkTxnGroup)
	establishWalkGroups(t, cl, topicIDOf(t, adm, randomHealthTopic))
	awaitCoordinators(t, cl, 1, walkTxnIDs...)
	env := &walkEnv{
		apis:    map[int16][2]int16{},
		nodes:   nodes,
		cl:      cl,
		topicID: topicIDOf(t, adm, walkTopic),
		seed:    envInt(t, "E2E_RANDOM_SEED", 1),
		steps:   envInt(t, "E2E_WALK_STEPS", 60),
		tally:   map[kmsg.Key]*walkTally{},
		ledger:  newWalkLedger(),
		shares:  newShareCompletions(),
	}
	for _, k := range advertisedAPIs(t, addr) {
		env.apis[k.ApiKey] = [2]int16{k.MinVersion, k.MaxVersion}
	}
	env.filler = requestFiller{
		// Not the walk topic: a mutated DeleteTopics or DeleteRecords
		// naming it would take what the ledger and the fetch walkers
		// check; nor randomHealthTopic, which the last check writes.
		topics: []string{walkChurn},
		groups: []string{walkClassic, walkConsumer, walkShare, walkTxnGroup},
		txns:   walkTxnIDs,
		names:  []string{"consumer", "range", "uniform", "share", "-1", "0", "1"},
		ids:    [][16]byte{env.topicID},
		batch:  recordBatch(time.Now(), []byte("walk")),
	}
	return env
}

// run runs walks at once, each steps steps on a connection of its own,
// then logs the tally so far (E2E_RANDOM_VERBOSE).
func (env *walkEnv) run(t *testing.T, walks []walk, steps int) {
	t.Helper()
	var wg sync.WaitGroup
	for i, wk := range walks {
		w := env.newWalker(t, i)
		wg.Go(func() {
			defer w.close()
			for range steps {
				if env.failed.Load() {
					return
				}
				wk.step(w)
			}
		})
	}
	wg.Wait()
	env.logTally(t)
}

// logTally logs the answers by API and the nodes' warnings
// (E2E_RANDOM_VERBOSE).
func (env *walkEnv) logTally(t *testing.T) {
	t.Helper()
	if os.Getenv("E2E_RANDOM_VERBOSE") == "" {
		return
	}
	env.mu.Lock()
	defer env.mu.Unlock()
	keys := make([]kmsg.Key, 0, len(env.tally))
	for k := range env.tally {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, k := range keys {
		n := env.tally[k]
		t.Logf("%s: %d sent, %d clean, %d closed, %d unanswered, error codes %v", k.Name(), n.sent, n.clean, n.closed, n.timedOut, n.codes)
	}
	t.Logf("fetch walkers checked %d batches", env.batchesChecked.Load())
	for _, b := range env.nodes {
		for line := range strings.Lines(b.output.String()) {
			if strings.Contains(line, "level=ERROR") || strings.Contains(line, "level=WARN") {
				t.Logf("%s: %s", b.Addr, strings.TrimSpace(line))
			}
		}
	}
}

// requireReached fails for each API of walkDriven that no walk had
// answered without an error code, over the whole test: the walks before
// and after the crash (a count over both is what a rare step needs; a
// check of each phase alone failed now and then on counts of 2 to 5).
func (env *walkEnv) requireReached(t *testing.T) {
	t.Helper()
	env.mu.Lock()
	defer env.mu.Unlock()
	if env.failed.Load() {
		return
	}
	for _, k := range walkDriven {
		if _, advertised := env.apis[k.Int16()]; !advertised {
			continue
		}
		switch n := env.tally[k]; {
		case n == nil:
			t.Errorf("no %s of the walks (seed %d) was sent: the walks no longer reach its handler", k.Name(), env.seed)
		case n.clean == 0:
			t.Errorf("no %s of the walks (seed %d) was answered without an error code (%d sent, %d closed, %d unanswered, error codes %v): the walks no longer reach its handler's end",
				k.Name(), env.seed, n.sent, n.closed, n.timedOut, n.codes)
		}
	}
}

func (env *walkEnv) count(key kmsg.Key, outcome randomOutcome, resp kmsg.Response) {
	env.mu.Lock()
	defer env.mu.Unlock()
	n := env.tally[key]
	if n == nil {
		n = &walkTally{codes: map[int16]int{}}
		env.tally[key] = n
	}
	n.sent++
	switch {
	case outcome == randomClosed:
		n.closed++
	case outcome == randomTimedOut:
		n.timedOut++
	case resp == nil:
	case !hasErrorCode(resp):
		n.clean++
	default:
		for _, ec := range errorCodes(resp) {
			if ec.code != 0 {
				n.codes[ec.code]++
			}
		}
	}
}

// requireWalkTransactionsEnd is requireTransactionsEnd of the walk topic
// and of the churn topic when it is there.
func requireWalkTransactionsEnd(t *testing.T, addr string) {
	t.Helper()
	requireTransactionsEnd(t, addr, walkTopic, walkPartitions)
	if partitions := churnPartitions(t, addr); partitions > 0 {
		requireTransactionsEnd(t, addr, walkChurn, partitions)
	}
}

// requireTransactionsEnd waits until every partition of topic has its last
// stable offset at its high watermark: each transaction the walks began
// was committed, aborted, or timed out and aborted by the broker. A
// transaction left open for good holds read_committed consumers back for
// good (KIP-890's hanging transactions).
func requireTransactionsEnd(t *testing.T, addr, topic string, partitions int32) {
	t.Helper()
	cl := newClient(t, addr)
	deadline := time.Now().Add(30 * time.Second)
	for {
		hw := listEnds(t, cl, topic, partitions, 0)
		lso := listEnds(t, cl, topic, partitions, 1)
		if slices.Equal(hw, lso) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: last stable offsets %v still behind the high watermarks %v: a transaction never ended", topic, lso, hw)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// listEnds asks ListOffsets for the latest offset of each partition of
// topic at an isolation level (0 the high watermark, 1 the last stable
// offset).
func listEnds(t *testing.T, cl *kgo.Client, topic string, partitions int32, isolation int8) []int64 {
	t.Helper()
	out := make([]int64, partitions)
	for _, rp := range listPartitionOffsets(t, cl, topic, partitions, -1, isolation) {
		if rp.ErrorCode != 0 {
			t.Fatalf("ListOffsets of %s/%d: error code %d", topic, rp.Partition, rp.ErrorCode)
		}
		out[rp.Partition] = rp.Offset
	}
	return out
}

// walkMember is a member id as a KIP-848 client makes one.
func walkMember(rng *rand.Rand) string {
	const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	var b strings.Builder
	for range 22 {
		b.WriteByte(chars[rng.IntN(len(chars))])
	}
	return b.String()
}

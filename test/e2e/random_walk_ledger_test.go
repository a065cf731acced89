package e2e

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// walkLedger is what the producer walks know of the records they wrote:
// values that a read_committed consumer must find (acknowledged outside a
// transaction, or in one whose commit was acknowledged) and values it
// must never find (in a transaction whose abort was acknowledged). What a
// walk cannot be sure of (a request mutated or unanswered, a transaction
// ended by a timeout or a fence) is in neither.
type walkLedger struct {
	mu      sync.Mutex
	visible map[string]bool
	hidden  map[string]bool
	// untracked are values a mutated request may have appended anywhere
	// (a resent batch with its partition changed): never checked.
	untracked map[string]bool
}

func newWalkLedger() *walkLedger {
	return &walkLedger{visible: map[string]bool{}, hidden: map[string]bool{}, untracked: map[string]bool{}}
}

func (l *walkLedger) mustSee(values []string)    { l.mark(l.visible, values) }
func (l *walkLedger) mustNotSee(values []string) { l.mark(l.hidden, values) }

// mark adds values to set, unless they are untracked.
func (l *walkLedger) mark(set map[string]bool, values []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, v := range values {
		if !l.untracked[v] {
			set[v] = true
		}
	}
}

// untrack takes values out of the ledger for good.
func (l *walkLedger) untrack(values []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, v := range values {
		l.untracked[v] = true
		delete(l.visible, v)
		delete(l.hidden, v)
	}
}

// requireLedger reads the walk topic (and the churn topic, when it is
// there) with read_committed to a sentinel written after the walks and
// checks it against the ledger: every value that must be visible is
// there, once, and none that must not be.
// A failure prints the journals of the walkers of the values it names.
func (l *walkLedger) requireLedger(t *testing.T, addr string, env *walkEnv) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[string]int{}
	read := func(topic string, partitions int32) {
		writeSentinels(t, addr, topic, partitions)
		for _, values := range readToSentinels(t, addr, topic, partitions, kgo.ReadCommitted()) {
			for _, v := range values {
				seen[v]++
			}
		}
	}
	read(walkTopic, walkPartitions)
	if partitions := churnPartitions(t, addr); partitions > 0 {
		read(walkChurn, partitions)
	}
	var missing, twice, aborted []string
	for v := range l.visible {
		switch {
		case seen[v] == 0:
			missing = append(missing, v)
		case seen[v] > 1:
			twice = append(twice, v)
		}
	}
	for v := range l.hidden {
		if seen[v] > 0 {
			aborted = append(aborted, v)
		}
	}
	for _, bad := range []struct {
		what   string
		values []string
	}{
		{"acknowledged records (committed, or outside a transaction) missing", missing},
		{"acknowledged records read more than once", twice},
		{"records of aborted transactions read with read_committed", aborted},
	} {
		if len(bad.values) > 0 {
			slices.Sort(bad.values)
			t.Errorf("%s: %d of %d tracked, e.g. %q", bad.what, len(bad.values), len(l.visible)+len(l.hidden), bad.values[:min(5, len(bad.values))])
			walker, _, _ := strings.Cut(bad.values[0], " batch")
			t.Logf("the journal of %s:\n%s", walker, env.journalOf(walker))
		}
	}
	t.Logf("ledger: %d values must be visible, %d must not; %d distinct values read", len(l.visible), len(l.hidden), len(seen))
}

// churnPartitions is how many partitions the churn topic has, 0 when it
// does not exist.
func churnPartitions(t *testing.T, addr string) int32 {
	t.Helper()
	details, err := newAdmin(t, addr).ListTopics(testContext(t, 10*time.Second), walkChurn)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := details[walkChurn]
	if !ok || d.Err != nil {
		return 0
	}
	return int32(len(d.Partitions))
}

// shareCompletions is what the share members know of the share group's
// deliveries: an offset whose acceptance or rejection (or gap) was
// acknowledged cleanly is complete, and must never be acquired again
// while the group lives. deletions counts the DeleteGroups the admin
// walker sent (counted before sending: one in flight may already have
// started the group over), so a completion only holds while it is
// unchanged.
type shareCompletions struct {
	mu        sync.Mutex
	done      map[[2]int64]int64 // partition, offset → deletions when completed
	deletions atomic.Int64
}

func newShareCompletions() *shareCompletions { return &shareCompletions{done: map[[2]int64]int64{}} }

// complete records the offsets of an acknowledgement batch [first, last]
// whose types (one for all, or one per offset) complete them.
func (l *shareCompletions) complete(p int32, first, last int64, types []int8) {
	l.mu.Lock()
	defer l.mu.Unlock()
	at := l.deletions.Load()
	for o := first; o <= last && last-first < 1<<16; o++ {
		typ := types[0]
		if len(types) > 1 {
			if int(o-first) >= len(types) {
				return
			}
			typ = types[o-first]
		}
		if typ == 0 || typ == 1 || typ == 3 { // gap, accept, reject
			l.done[[2]int64{int64(p), o}] = at
		}
	}
}

// acquiredAgain reports an offset of [first, last] that was complete
// since the last group deletion, if any.
func (l *shareCompletions) acquiredAgain(p int32, first, last int64) (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.deletions.Load()
	for o := first; o <= last && last-first < 1<<16; o++ {
		if at, ok := l.done[[2]int64{int64(p), o}]; ok && at == now {
			return o, true
		}
	}
	return 0, false
}

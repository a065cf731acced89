package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// txnOutcome is what a producer was told of one transaction.
type txnOutcome int

const (
	outcomeUnknown   txnOutcome = iota // an error somewhere: either may have happened
	outcomeCommitted                   // EndTransaction(commit) returned nil
	outcomeAborted                     // EndTransaction(abort) returned nil
)

// TestTransactionsAtomicAcrossKills: transactional producers write
// transactions of one record per partition, committing most and aborting
// some, while the broker is killed (kill -9) and restarted twice. Read
// committed afterwards, every transaction is all or nothing; every one
// whose commit was acknowledged is there, and none whose abort was. A
// producer that sees an error starts over with a new client, whose
// InitProducerId fences the old one, as applications do.
func TestTransactionsAtomicAcrossKills(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), "transaction.abort.timed.out.transaction.cleanup.interval.ms=200")
	const topic, partitions, producers = "txn-chaos", 3, 2
	adm := newAdmin(t, b.Addr)
	createTopic(t, adm, topic, partitions, nil)

	txns := startTxnProducers(t, []string{b.Addr}, topic, producers, partitions)
	for range 2 {
		txns.progress()
		b.Kill()
		b.Restart()
	}
	txns.progress()
	txns.stop()
	txns.check(t, adm, b.Addr)
}

// txnProducers are transactional producers running runTxnProducer, each
// with its own transactional id.
type txnProducers struct {
	topic      string
	partitions int
	cancel     context.CancelFunc
	wg         sync.WaitGroup
	outcomes   [][]txnOutcome // by producer, then transaction; read after stop
	committed  atomic.Int64
}

// startTxnProducers starts n transactional producers writing to topic
// through a client seeded with seeds; the test's cleanup stops them if the
// test does not.
func startTxnProducers(t *testing.T, seeds []string, topic string, n, partitions int) *txnProducers {
	ctx, cancel := context.WithCancel(context.Background())
	tp := &txnProducers{topic: topic, partitions: partitions, cancel: cancel, outcomes: make([][]txnOutcome, n)}
	for i := range n {
		tp.wg.Go(func() { tp.outcomes[i] = runTxnProducer(t, ctx, seeds, topic, i, partitions, &tp.committed) })
	}
	t.Cleanup(tp.stop)
	return tp
}

// progress waits until a transaction has committed since it was called
// (and a little more, to catch others mid-way), however slow the machine
// is: a fault injected before any progress would prove nothing.
func (tp *txnProducers) progress() {
	from, deadline := tp.committed.Load(), time.Now().Add(2*time.Minute)
	for tp.committed.Load() == from && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
}

// stop ends the producers and waits for them.
func (tp *txnProducers) stop() {
	tp.cancel()
	tp.wg.Wait()
}

// check reads the topic read_committed through addr, once the transactions
// the producers left open were aborted by their timeout: every transaction
// is all or nothing, every one whose commit was acknowledged is there and
// none whose abort was. Call it after stop.
func (tp *txnProducers) check(t *testing.T, adm *kadm.Client, addr string) {
	t.Helper()
	topic, partitions := tp.topic, tp.partitions
	deadline := time.Now().Add(30 * time.Second)
	for p := range int32(partitions) {
		for {
			lso, hw := listedOffsetOf(t, adm, topic, p, true), listedOffsetOf(t, adm, topic, p, false)
			if lso == hw {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s/%d: last stable offset %d still behind %d", topic, p, lso, hw)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	writeSentinels(t, addr, topic, int32(partitions))
	seen := map[string]int{} // "p<i>-t<k>" → records of that transaction read
	for _, values := range readToSentinels(t, addr, topic, int32(partitions), kgo.ReadCommitted()) {
		for _, v := range values {
			seen[v[:strings.LastIndexByte(v, '-')]]++
		}
	}
	committed, aborted, unknown := 0, 0, 0
	for i, outs := range tp.outcomes {
		for k, o := range outs {
			txn := fmt.Sprintf("p%d-t%d", i, k)
			n := seen[txn]
			if n != 0 && n != partitions {
				t.Errorf("transaction %s is read in part: %d of %d records", txn, n, partitions)
			}
			switch o {
			case outcomeCommitted:
				committed++
				if n != partitions {
					t.Errorf("transaction %s was committed (acknowledged) but is not read", txn)
				}
			case outcomeAborted:
				aborted++
				if n != 0 {
					t.Errorf("transaction %s was aborted (acknowledged) but is read", txn)
				}
			default:
				unknown++
			}
			delete(seen, txn)
		}
	}
	for txn := range seen {
		t.Errorf("records of %s, which no producer wrote", txn)
	}
	t.Logf("%d committed, %d aborted, %d with an unknown outcome", committed, aborted, unknown)
	if committed == 0 || aborted == 0 {
		t.Fatalf("the producers committed %d and aborted %d transactions: the test proved little", committed, aborted)
	}
}

// runTxnProducer writes transactions p<i>-t<k> until ctx ends, one record
// per partition each, aborting every third, and returns what it was told
// of each. On an error it starts over with a new client.
func runTxnProducer(t *testing.T, ctx context.Context, seeds []string, topic string, i, partitions int, committed *atomic.Int64) []txnOutcome {
	var outs []txnOutcome
	var cl *kgo.Client
	defer func() {
		if cl != nil {
			cl.Close()
		}
	}()
	for k := 0; ctx.Err() == nil; k++ {
		outs = append(outs, outcomeUnknown)
		if cl == nil {
			var err error
			cl, err = kgo.NewClient(
				kgo.SeedBrokers(seeds...),
				kgo.TransactionalID(fmt.Sprintf("chaos-%d", i)),
				kgo.TransactionTimeout(2*time.Second),
				kgo.RecordPartitioner(kgo.ManualPartitioner()),
				kgo.DialTimeout(time.Second),
				kgo.RetryTimeout(5*time.Second),
				kgo.RecordDeliveryTimeout(5*time.Second),
				kgo.RequestTimeoutOverhead(2*time.Second),
				kgo.DisableClientMetrics(),
			)
			if err != nil {
				t.Errorf("client: %v", err)
				return outs
			}
		}
		outs[k] = oneTxn(cl, topic, i, k, partitions)
		if outs[k] == outcomeCommitted {
			committed.Add(1)
		}
		if outs[k] == outcomeUnknown {
			cl.Close()
			cl = nil
			time.Sleep(100 * time.Millisecond)
		}
	}
	return outs
}

// oneTxn runs transaction k and returns what the producer was told.
func oneTxn(cl *kgo.Client, topic string, i, k, partitions int) txnOutcome {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.BeginTransaction(); err != nil {
		return outcomeUnknown
	}
	var recs []*kgo.Record
	for p := range partitions {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(p), Value: fmt.Appendf(nil, "p%d-t%d-%d", i, k, p)})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return outcomeUnknown
	}
	commit := k%3 != 0
	end := kgo.TryAbort
	if commit {
		end = kgo.TryCommit
	}
	if err := cl.EndTransaction(ctx, end); err != nil {
		return outcomeUnknown
	}
	if commit {
		return outcomeCommitted
	}
	return outcomeAborted
}

package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

	ctx, stop := context.WithCancel(context.Background())
	outcomes := make([][]txnOutcome, producers)
	var committedSoFar atomic.Int64
	var wg sync.WaitGroup
	for i := range producers {
		wg.Go(func() { outcomes[i] = runTxnProducer(t, ctx, b.Addr, topic, i, partitions, &committedSoFar) })
	}
	// Each kill comes once a transaction has committed since the last one
	// (and a little later, to catch others mid-way), however slow the
	// machine is: a kill before any progress would prove nothing.
	progress := func() {
		from, deadline := committedSoFar.Load(), time.Now().Add(2*time.Minute)
		for committedSoFar.Load() == from && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond)
	}
	for range 2 {
		progress()
		b.Kill()
		b.Restart()
	}
	progress()
	stop()
	wg.Wait()

	// Transactions left open by the kills are aborted by their timeout.
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
	writeSentinels(t, b.Addr, topic, partitions)
	seen := map[string]int{} // "p<i>-t<k>" → records of that transaction read
	for _, values := range readToSentinels(t, b.Addr, topic, partitions, kgo.ReadCommitted()) {
		for _, v := range values {
			seen[v[:strings.LastIndexByte(v, '-')]]++
		}
	}
	committed, aborted, unknown := 0, 0, 0
	for i, outs := range outcomes {
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
func runTxnProducer(t *testing.T, ctx context.Context, addr, topic string, i, partitions int, committed *atomic.Int64) []txnOutcome {
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
				kgo.SeedBrokers(addr),
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

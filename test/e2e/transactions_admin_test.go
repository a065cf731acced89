package e2e

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestDescribeAndListTransactions: kadm describes a transactional id and
// lists the transactions across every __transaction_state partition, with
// their state as the transaction goes from Ongoing to CompleteCommit.
func TestDescribeAndListTransactions(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	const topic, id = "txn-admin", "txn-admin-producer"
	adm := newAdmin(t, b.Addr)
	createTopic(t, adm, topic, 2, nil)
	cl := txnClient(t, b.Addr, id)
	ctx := testContext(t, clientDeliveryTimeout)
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: 1, Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	described, err := adm.DescribeTransactions(ctx, id, "txn-admin-unknown")
	if err != nil {
		t.Fatalf("DescribeTransactions: %v", err)
	}
	d := described[id]
	if d.Err != nil || d.State != "Ongoing" || d.TimeoutMillis != 30_000 || d.StartTimestamp <= 0 {
		t.Fatalf("describe of the open transaction: %+v", d)
	}
	if parts := d.Topics[topic]; len(d.Topics) != 1 || len(parts) != 1 {
		t.Fatalf("the open transaction holds %v, want only %s/1", d.Topics, topic)
	}
	if unknown := described["txn-admin-unknown"]; unknown.Err == nil {
		t.Fatalf("an unknown transactional id was described: %+v", unknown)
	}
	listed, err := adm.ListTransactions(ctx, nil, []string{"Ongoing"})
	if err != nil {
		t.Fatalf("ListTransactions: %v", err)
	}
	if l, ok := listed[id]; !ok || l.State != "Ongoing" || l.ProducerID != d.ProducerID || len(listed) != 1 {
		t.Fatalf("listed Ongoing %+v, want only %s", listed, id)
	}

	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		described, err = adm.DescribeTransactions(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if described[id].State == "CompleteCommit" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("10 s after the commit the transaction is %q", described[id].State)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if listed, err = adm.ListTransactions(ctx, nil, []string{"Ongoing"}); err != nil || len(listed) != 0 {
		t.Fatalf("Ongoing transactions after the commit: %+v (%v)", listed, err)
	}
}

package api

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/txn"
)

// endingPeer is a transaction coordinator reached through peer that
// answers a verification only after meanwhile ran: the fault of a
// transaction that ends while the partition leader waits for the
// coordinator's answer, which no real timing makes reliably.
type endingPeer struct {
	peer      kmsg.Requestor
	meanwhile func()
}

func (p endingPeer) Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	resp, err := p.peer.Request(ctx, req)
	if r, ok := req.(batchAddPartitions); ok && len(r.Transactions) > 0 && r.Transactions[0].VerifyOnly {
		p.meanwhile()
	}
	return resp, err
}

// TestProduceVerifiedAsTheTransactionEnds: the coordinator says the
// partition is in the producer's transaction, and before broker 1 appends
// the batch the transaction ends there (its abort marker is written, as
// the coordinator writes it after an abort or a timeout). The produce
// must be refused with INVALID_TXN_STATE and leave no transaction open: a
// batch appended after the marker would open one that nothing ends, and
// hold every read_committed consumer of the partition at its offset
// (KIP-890 part 1's hanging transaction). The partition's guard checks
// this (TestVerificationGuard); here, that the produce path takes a guard
// before asking and presents it at the append.
func TestProduceVerifiedAsTheTransactionEnds(t *testing.T) {
	n2 := newReplicaHarnessAs(t, 2, nil)
	n2.createTopic("data", nil, []int32{1})
	n2.withTxns()
	n1 := newReplicaHarness(t, nil)
	n1.createTopic("data", nil, []int32{1})
	n1.createTopic(txn.TopicName, nil, []int32{1}, []int32{2})

	id := txnIDsOn(t, 1, 1)[0]
	pid, epoch := n2.initProducer("User:broker", id)
	n2.addPartitions("User:broker", id, pid, epoch, 0)
	ended := false
	n1.withPeers(func(node int32) (kmsg.Requestor, error) {
		if node != 2 {
			return nil, fmt.Errorf("no broker %d", node)
		}
		return endingPeer{peer: handlerPeer{h: n2.h, principal: "User:broker"}, meanwhile: func() {
			if codes := n1.writeMarkers("User:broker", pid, epoch, false, 0, markerTarget{"data", 0}); codes[0] != 0 {
				t.Errorf("the abort marker: error %d", codes[0])
			}
			ended = true
		}}, nil
	})

	if code := n1.txnProduce(id, pid, epoch, 0); code != kerr.InvalidTxnState.Code {
		t.Fatalf("a batch verified as its transaction ended: error %d, want INVALID_TXN_STATE (%d)", code, kerr.InvalidTxnState.Code)
	}
	if !ended {
		t.Fatal("the produce was not verified with the coordinator")
	}
	p := n1.partition("data", 0)
	if p.HasOpenTxn(base.ProducerID(pid), epoch) {
		t.Fatal("the refused batch opened a transaction")
	}
	if off := p.Offsets(); off.LogEnd != 1 || off.LastStable != off.HighWatermark {
		t.Fatalf("offsets %+v: want the abort marker alone, nothing left open", off)
	}
}

package e2e

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestClusterListGroupsAndTransactions: in a cluster each broker answers
// ListGroups and ListTransactions for the coordinators it hosts, without
// an error, and clients merge the brokers' answers (as Kafka). A broker
// used to ask every partition of the internal topic and answered
// NOT_COORDINATOR for those led elsewhere; sarama's functional
// TestFuncListTransactions asks the coordinator of its id and failed.
func TestClusterListGroupsAndTransactions(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3)
	adm := c.newAdmin()
	const topic, n = "list-coordinators", 6
	c.createTopic(adm, topic, 1, 3, nil)
	c.waitISR(adm, topic, 3)

	var groups, txns []string
	for i := range n {
		group := fmt.Sprintf("list-group-%d", i)
		groups = append(groups, group)
		var offsets kadm.Offsets
		offsets.Add(kadm.Offset{Topic: topic, Partition: 0, At: int64(i)})
		if _, err := adm.CommitOffsets(testContext(t, clientDeliveryTimeout), group, offsets); err != nil {
			t.Fatalf("committing offsets of %s: %v", group, err)
		}
		id := fmt.Sprintf("list-txn-%d", i)
		txns = append(txns, id)
		producer := c.newClient(kgo.TransactionalID(id))
		inTxn(t, producer, true, &kgo.Record{Topic: topic, Value: []byte(id)})
		producer.Close()
	}

	cl := c.newClient()
	var lastErr string
	listedEverywhere := func() bool {
		listedGroups, listedTxns := map[string]int32{}, map[string]int32{}
		for _, id := range c.ids() {
			broker := cl.Broker(int(id))
			g, err := kmsg.NewPtrListGroupsRequest().RequestWith(testContext(t, clientDeliveryTimeout), broker)
			if err != nil || g.ErrorCode != 0 {
				lastErr = fmt.Sprintf("node %d: ListGroups: error code %d, %v", id, g.ErrorCode, err)
				return false
			}
			for _, lg := range g.Groups {
				if prev, ok := listedGroups[lg.Group]; ok {
					t.Fatalf("group %s listed by nodes %d and %d", lg.Group, prev, id)
				}
				listedGroups[lg.Group] = id
			}
			x, err := kmsg.NewPtrListTransactionsRequest().RequestWith(testContext(t, clientDeliveryTimeout), broker)
			if err != nil || x.ErrorCode != 0 {
				lastErr = fmt.Sprintf("node %d: ListTransactions: error code %d, %v", id, x.ErrorCode, err)
				return false
			}
			for _, s := range x.TransactionStates {
				if prev, ok := listedTxns[s.TransactionalID]; ok {
					t.Fatalf("transactional id %s listed by nodes %d and %d", s.TransactionalID, prev, id)
				}
				listedTxns[s.TransactionalID] = id
			}
		}
		for _, want := range []struct {
			listed map[string]int32
			names  []string
		}{{listedGroups, groups}, {listedTxns, txns}} {
			for _, name := range want.names {
				if _, ok := want.listed[name]; !ok {
					lastErr = fmt.Sprintf("%s not listed by any node (listed: %v)", name, slices.Sorted(maps.Keys(want.listed)))
					return false
				}
			}
		}
		return true
	}
	deadline := time.Now().Add(20 * time.Second)
	for !listedEverywhere() {
		if time.Now().After(deadline) {
			t.Fatalf("the nodes' lists never covered every group and transaction: %s", lastErr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

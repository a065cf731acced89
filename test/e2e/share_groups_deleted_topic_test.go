package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestShareGroupStateOfADeletedTopicIsDeleted: when a topic a share group
// read is deleted, its share coordinator deletes the group's delivery
// state of it (a tombstone in __share_group_state, as Kafka's cleanup on
// topic deletion writes), and deleting the group later has nothing left
// to fail on (it warned once per share-partition before).
func TestShareGroupStateOfADeletedTopicIsDeleted(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	adm := newAdmin(t, b.Addr)
	const topic, group = "share-gone", "share-gone-readers"
	createTopic(t, adm, topic, 2, nil)
	shareEarliest(t, b.Addr, group)
	produceN(t, newClient(t, b.Addr), topic, 20)
	got := newShareRecords()
	stop := startShareConsumer(t, b.Addr, group, topic, got)
	waitShare(t, got, 20, 30*time.Second)
	stop()
	if tombstones := shareStateTombstones(t, b.Addr); tombstones != 0 {
		t.Fatalf("%d tombstones in __share_group_state before the topic was deleted", tombstones)
	}

	if _, err := adm.DeleteTopics(testContext(t, 10*time.Second), topic); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for shareStateTombstones(t, b.Addr) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the delivery state of the deleted topic's 2 share-partitions is not deleted: %d tombstones", shareStateTombstones(t, b.Addr))
		}
		time.Sleep(200 * time.Millisecond)
	}
	for {
		deleted, err := adm.DeleteGroups(testContext(t, 10*time.Second), group)
		if err == nil && deleted[group].Err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deleting the share group: %v %+v", err, deleted)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if out := b.output.String(); strings.Contains(out, "deleting a share group's delivery state") {
		t.Fatalf("deleting the group warned about the deleted topic's state:\n%s", out)
	}
}

// shareStateTombstones counts the tombstones in __share_group_state.
func shareStateTombstones(t *testing.T, addr string) int {
	t.Helper()
	n := 0
	for _, records := range consumeAll(t, addr, "__share_group_state") {
		for _, r := range records {
			if r.Value == nil {
				n++
			}
		}
	}
	return n
}

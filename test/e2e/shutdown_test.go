package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestStopAnswersParkedFetches: SIGTERM while a consumer's fetch is parked
// at the log end with a long max wait (kafka-go waits 10 s by default) ends
// the wait: the broker answers it with what it has and exits at once, with
// status 0, instead of holding its shutdown for the wait and then tearing
// the connection down.
func TestStopAnswersParkedFetches(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	const topic = "parked-at-stop"
	adm := newAdmin(t, b.Addr)
	createTopic(t, adm, topic, 1, nil)
	topics, err := adm.ListTopics(testContext(t, 10*time.Second), topic)
	if err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, b.Addr)
	fetch := kmsg.NewPtrFetchRequest()
	fetch.MaxWaitMillis, fetch.MinBytes, fetch.MaxBytes = int32(time.Minute.Milliseconds()), 1, 1<<20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic, ft.TopicID = topic, topics[topic].ID // the client picks the version
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = 1 << 20 // at offset 0, the end of the empty log
	ft.Partitions = append(ft.Partitions, fp)
	fetch.Topics = append(fetch.Topics, ft)
	// The partition serves fetches (it is open) before one is parked.
	ready := *fetch
	ready.MaxWaitMillis = 0
	for deadline := time.Now().Add(metadataSettle); ; time.Sleep(50 * time.Millisecond) {
		resp, err := ready.RequestWith(testContext(t, 10*time.Second), cl)
		if err == nil {
			if err = fetchError(resp); err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new topic's partition does not serve fetches: %v", err)
		}
	}
	answered := make(chan error, 1)
	go func() {
		resp, err := fetch.RequestWith(context.Background(), cl)
		if err == nil {
			err = fetchError(resp)
		}
		answered <- err
	}()
	select {
	case err := <-answered:
		t.Fatalf("a fetch at the end of an empty log with a minute's max wait was answered at once (%v)", err)
	case <-time.After(time.Second): // parked
	}

	start := time.Now()
	b.Stop() // fails the test unless the broker exits 0 within brokerStopTimeout
	// Generous: the wait ends at once; only a broker that sat out its
	// shutdown timeout (10 s) would take this long.
	if took := time.Since(start); took > brokerStopTimeout/2 {
		t.Errorf("the broker took %v to stop with a parked fetch, want it to answer the fetch at once", took)
	}
	select {
	case err := <-answered:
		if err != nil {
			t.Errorf("the parked fetch: %v, want an empty answer", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("the parked fetch had no answer")
	}
}

// fetchError is the first error code in resp, or nil.
func fetchError(resp *kmsg.FetchResponse) error {
	if resp.ErrorCode != 0 {
		return kerr.ErrorForCode(resp.ErrorCode)
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				return fmt.Errorf("%s[%d]: %w", t.Topic, p.Partition, kerr.ErrorForCode(p.ErrorCode))
			}
		}
	}
	return nil
}

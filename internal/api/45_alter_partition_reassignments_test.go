package api

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/broker"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
)

func TestPartitionReassignmentsRegistered(t *testing.T) {
	checkAdvertised(t, 45, 0, 1)
	checkAdvertised(t, 46, 0, 0)
}

// reassignReq is one partition of an AlterPartitionReassignments:
// replicas nil cancels.
type reassignReq struct {
	topic     string
	partition int32
	replicas  []int32
}

// alterReassignments sends an AlterPartitionReassignments of reqs at
// version, as principal; allowRF is AllowReplicationFactorChange (v1).
func (rh *replicaHarness) alterReassignments(version int16, principal string, allowRF bool, reqs ...reassignReq) *kmsg.AlterPartitionAssignmentsResponse {
	rh.t.Helper()
	r := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	r.AllowReplicationFactorChange = allowRF
	for _, q := range reqs {
		if n := len(r.Topics); n == 0 || r.Topics[n-1].Topic != q.topic {
			rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
			rt.Topic = q.topic
			r.Topics = append(r.Topics, rt)
		}
		rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
		rp.Partition, rp.Replicas = q.partition, q.replicas
		rt := &r.Topics[len(r.Topics)-1]
		rt.Partitions = append(rt.Partitions, rp)
	}
	return rh.handle(45, version, r, principal).(*kmsg.AlterPartitionAssignmentsResponse)
}

// reassignCodes flattens a response to "topic-partition" → error code,
// checking that no partition is answered twice.
func reassignCodes(t *testing.T, resp *kmsg.AlterPartitionAssignmentsResponse) map[string]int16 {
	t.Helper()
	codes := map[string]int16{}
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			key := fmt.Sprintf("%s-%d", rt.Topic, p.Partition)
			if _, dup := codes[key]; dup {
				t.Fatalf("%s answered twice", key)
			}
			codes[key] = p.ErrorCode
		}
	}
	return codes
}

// answersInOrder lists a response's error codes in request order.
func answersInOrder(resp *kmsg.AlterPartitionAssignmentsResponse) []int16 {
	var out []int16
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			out = append(out, p.ErrorCode)
		}
	}
	return out
}

// listReassignments sends a ListPartitionReassignments of topics
// (nil: every partition) as principal.
func (rh *replicaHarness) listReassignments(principal string, topics map[string][]int32) *kmsg.ListPartitionReassignmentsResponse {
	rh.t.Helper()
	r := kmsg.NewPtrListPartitionReassignmentsRequest()
	if topics != nil {
		r.Topics = []kmsg.ListPartitionReassignmentsRequestTopic{}
		for name, parts := range topics {
			rt := kmsg.NewListPartitionReassignmentsRequestTopic()
			rt.Topic, rt.Partitions = name, parts
			r.Topics = append(r.Topics, rt)
		}
	}
	return rh.handle(46, 0, r, principal).(*kmsg.ListPartitionReassignmentsResponse)
}

// TestAlterPartitionReassignments: per-partition answers for a shrink
// (done at once), unknown partitions, a bad target, cancelling nothing, a
// replication factor change that v1 forbids; a move onto a follower stays
// in flight, is listed, and is cancelled.
func TestAlterPartitionReassignments(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("a", nil, []int32{1, 2, 3}, []int32{1, 2})
	for _, version := range []int16{0, 1} {
		resp := rh.alterReassignments(version, "User:ANONYMOUS", true,
			reassignReq{"a", 0, []int32{1, 2}},
			reassignReq{"a", 1, []int32{1, 4}},
			reassignReq{"a", 5, []int32{1}},
			reassignReq{"nope", 0, []int32{1}},
			reassignReq{"a", 1, nil},
			reassignReq{"a", 1, []int32{2, 2}},
			reassignReq{"a", 1, []int32{}})
		// "a-1" is asked four times: the answers go by position.
		got := answersInOrder(resp)
		want := []int16{0, kerr.InvalidReplicaAssignment.Code, kerr.UnknownTopicOrPartition.Code, kerr.UnknownTopicOrPartition.Code,
			kerr.NoReassignmentInProgress.Code, kerr.InvalidReplicaAssignment.Code, kerr.InvalidReplicaAssignment.Code}
		if !slices.Equal(got, want) || resp.ErrorCode != 0 {
			t.Fatalf("v%d: top-level %d, %v, want %v", version, resp.ErrorCode, got, want)
		}
		if m := resp.Topics[0].Partitions[1].ErrorMessage; m == nil || !strings.Contains(*m, "4 is not a registered broker") {
			t.Errorf("v%d: the message for broker 4 is %v", version, m)
		}
	}
	if p := rh.meta.Image().Topics["a"].Partitions[0]; !slices.Equal(p.Replicas, []int32{1, 2}) || p.Reassigning() {
		t.Fatalf("a-0 after the shrink: %+v", p)
	}

	// v1 without replication factor changes.
	resp := rh.alterReassignments(1, "User:ANONYMOUS", false, reassignReq{"a", 1, []int32{1}}, reassignReq{"a", 1, []int32{2, 1}})
	if got := answersInOrder(resp); !slices.Equal(got, []int16{kerr.InvalidReplicationFactor.Code, 0}) || resp.AllowReplicationFactorChange {
		t.Fatalf("v1 keeping the replication factor: %+v", resp)
	}

	// A move onto broker 3, which is not caught up, stays in flight.
	resp = rh.alterReassignments(0, "User:ANONYMOUS", true, reassignReq{"a", 1, []int32{3, 2}})
	if codes := reassignCodes(t, resp); codes["a-1"] != 0 {
		t.Fatalf("moving a-1: %v", codes)
	}
	listed := rh.listReassignments("User:ANONYMOUS", nil)
	want := []kmsg.ListPartitionReassignmentsResponseTopicPartition{{Partition: 1, Replicas: []int32{3, 2, 1}, AddingReplicas: []int32{3}, RemovingReplicas: []int32{1}}}
	if listed.ErrorCode != 0 || len(listed.Topics) != 1 || listed.Topics[0].Topic != "a" || !reflect.DeepEqual(listed.Topics[0].Partitions, want) {
		t.Fatalf("listed %+v", listed)
	}
	if l := rh.listReassignments("User:ANONYMOUS", map[string][]int32{"a": {0, 9}, "nope": {0}}); len(l.Topics) != 0 {
		t.Errorf("listing partitions without a reassignment: %+v", l.Topics)
	}
	if l := rh.listReassignments("User:ANONYMOUS", map[string][]int32{"a": {1}}); len(l.Topics) != 1 {
		t.Errorf("listing a-1: %+v", l.Topics)
	}
	resp = rh.alterReassignments(0, "User:ANONYMOUS", true, reassignReq{"a", 1, nil})
	if codes := reassignCodes(t, resp); codes["a-1"] != 0 {
		t.Fatalf("cancelling: %v", codes)
	}
	if p := rh.meta.Image().Topics["a"].Partitions[1]; !slices.Equal(p.Replicas, []int32{2, 1}) || p.Reassigning() {
		t.Fatalf("a-1 after the cancel: %+v", p)
	}
	if l := rh.listReassignments("User:ANONYMOUS", nil); len(l.Topics) != 0 {
		t.Errorf("listed after the cancel: %+v", l.Topics)
	}
}

// TestPartitionReassignmentsNeedClusterRights: ALTER on the cluster for
// 45, DESCRIBE for 46; a super user is served.
func TestPartitionReassignmentsNeedClusterRights(t *testing.T) {
	rh := newReplicaHarness(t, map[string]string{
		"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":           "User:admin",
	})
	rh.createTopic("a", nil, []int32{1, 2})
	resp := rh.alterReassignments(0, "User:mallory", true, reassignReq{"a", 0, []int32{2}})
	if codes := reassignCodes(t, resp); resp.ErrorCode != clusterDenied || codes["a-0"] != clusterDenied {
		t.Errorf("denied: top-level %d, %v", resp.ErrorCode, codes)
	}
	if p := rh.meta.Image().Topics["a"].Partitions[0]; !slices.Equal(p.Replicas, []int32{1, 2}) {
		t.Errorf("a denied request moved a-0: %+v", p)
	}
	if l := rh.listReassignments("User:mallory", nil); l.ErrorCode != clusterDenied {
		t.Errorf("listing denied: %d", l.ErrorCode)
	}
	resp = rh.alterReassignments(0, "User:admin", true, reassignReq{"a", 0, []int32{2}})
	if codes := reassignCodes(t, resp); resp.ErrorCode != 0 || codes["a-0"] != 0 {
		t.Errorf("super user: top-level %d, %v", resp.ErrorCode, codes)
	}
	if l := rh.listReassignments("User:admin", nil); l.ErrorCode != 0 {
		t.Errorf("super user listing: %d", l.ErrorCode)
	}
}

// TestPartitionReassignmentsOnASingleNode: with no broker registered, the
// only target is this broker (no change); anything else is an invalid
// assignment, and there is never anything to cancel or list.
func TestPartitionReassignmentsOnASingleNode(t *testing.T) {
	rh := newSingleNodeHarness(t)
	rh.createTopic("s", nil, []int32{1})
	resp := rh.alterReassignments(0, "User:ANONYMOUS", true,
		reassignReq{"s", 0, []int32{1}}, reassignReq{"s", 0, []int32{2}}, reassignReq{"s", 0, []int32{1, 2}}, reassignReq{"s", 0, nil})
	got := answersInOrder(resp)
	want := []int16{0, kerr.InvalidReplicaAssignment.Code, kerr.InvalidReplicaAssignment.Code, kerr.NoReassignmentInProgress.Code}
	if !slices.Equal(got, want) {
		t.Fatalf("%v, want %v", got, want)
	}
	if l := rh.listReassignments("User:ANONYMOUS", nil); len(l.Topics) != 0 {
		t.Errorf("listed %+v", l.Topics)
	}
}

// newSingleNodeHarness is the api of broker 1 on a node where no broker
// registered (a single node).
func newSingleNodeHarness(t *testing.T) *replicaHarness {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	meta, err := metadata.Open(ctx, metadata.Options{Dir: t.TempDir(), NodeID: 1, Clock: clock.Real{}, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = meta.Close() })
	dir := t.TempDir()
	cfg, err := config.LoadBroker("", nil, map[string]string{"node.id": "1", "log.dirs": dir})
	if err != nil {
		t.Fatal(err)
	}
	rh := &replicaHarness{t: t, meta: meta, epochs: map[int32]int64{}}
	const idle = time.Hour
	rh.b, err = broker.New(broker.Options{DataDir: dir, NodeID: 1, Meta: meta, Resolve: resolveMinInsync,
		RetentionInterval: idle, FlushCheckInterval: idle, ReplicaLagTimeMax: idle, Clock: clock.Real{}, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rh.b.Close(); err != nil {
			t.Error(err)
		}
	})
	rh.h, err = New(Options{Broker: rh.b, Meta: meta, Config: cfg, Logger: logger,
		Advertised: map[string]Address{"PLAINTEXT": {Host: "127.0.0.1", Port: 9091}}})
	if err != nil {
		t.Fatal(err)
	}
	return rh
}

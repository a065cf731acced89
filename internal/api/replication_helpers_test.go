package api

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/broker"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/record"
)

// replicaHarness is the api of broker 1 in a metadata quorum where brokers
// 1, 2 and 3 are registered (in racks rack-1, rack-2, rack-3) and unfenced; the tests play 2 and 3 (their
// fetches, their fencing). Real metadata, real partitions on disk.
type replicaHarness struct {
	t      *testing.T
	meta   *metadata.Store
	b      *broker.Broker
	h      *Handler
	epochs map[int32]int64
	self   int32
	dir    string // the broker's data directory
	cfg    *config.Broker
	logger *slog.Logger
}

func newReplicaHarness(t *testing.T, brokerConfig map[string]string) *replicaHarness {
	t.Helper()
	return newReplicaHarnessAs(t, 1, brokerConfig)
}

// newReplicaHarnessAs is the harness of broker self (1, 2 or 3) instead,
// with a metadata quorum of its own.
func newReplicaHarnessAs(t *testing.T, self int32, brokerConfig map[string]string) *replicaHarness {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	meta, err := metadata.Open(ctx, metadata.Options{Dir: t.TempDir(), NodeID: self, Clock: clock.Real{}, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = meta.Close() })
	rh := &replicaHarness{t: t, meta: meta, epochs: map[int32]int64{}}
	for _, id := range []int32{1, 2, 3} {
		reg, err := meta.RegisterBroker(ctx, metadata.BrokerRegistration{ID: id, Incarnation: [16]byte{byte(id)}, Rack: "rack-" + strconv.Itoa(int(id)),
			Endpoints: []metadata.Endpoint{{Listener: "PLAINTEXT", Host: "127.0.0.1", Port: 9090 + id, SecurityProtocol: "PLAINTEXT"}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := meta.UnfenceBroker(ctx, id, reg.Epoch); err != nil {
			t.Fatal(err)
		}
		rh.epochs[id] = reg.Epoch
	}
	dir := t.TempDir()
	flags := map[string]string{"node.id": strconv.Itoa(int(self)), "log.dirs": dir}
	for k, v := range brokerConfig {
		flags[k] = v
	}
	cfg, err := config.LoadBroker("", nil, flags)
	if err != nil {
		t.Fatal(err)
	}
	rh.self, rh.dir, rh.cfg, rh.logger = self, dir, cfg, logger
	rh.openBroker()
	return rh
}

// openBroker starts the harness's broker on its data directory, with a
// fresh api over it; it is closed at cleanup unless restarted before.
func (rh *replicaHarness) openBroker() {
	rh.t.Helper()
	const idle = time.Hour
	b, err := broker.New(broker.Options{
		DataDir: rh.dir, NodeID: rh.self, Meta: rh.meta,
		Resolve:           resolveMinInsync,
		RetentionInterval: idle, FlushCheckInterval: idle, ReplicaLagTimeMax: idle,
		Clock: clock.Real{}, Logger: rh.logger,
	})
	if err != nil {
		rh.t.Fatal(err)
	}
	rh.b = b
	rh.t.Cleanup(func() {
		if rh.b != b {
			return // restarted: closed then
		}
		if err := b.Close(); err != nil {
			rh.t.Error(err)
		}
	})
	rh.h, err = New(Options{Broker: b, Meta: rh.meta, Config: rh.cfg, Logger: rh.logger,
		Advertised: map[string]Address{"PLAINTEXT": {Host: "127.0.0.1", Port: 9090 + rh.self}}})
	if err != nil {
		rh.t.Fatal(err)
	}
}

// restartBroker stops the harness's broker cleanly and starts it again on
// the same directory, as a process restart would; its partitions reopen
// from disk at the next reconcile.
func (rh *replicaHarness) restartBroker() {
	rh.t.Helper()
	if err := rh.b.Close(); err != nil {
		rh.t.Fatal(err)
	}
	rh.openBroker()
	rh.reconcile()
}

// allow grants principal op on the literal resource name of type rt, as
// the admin (a super user of the harnesses that run an authorizer).
func (rh *replicaHarness) allow(principal string, rt kmsg.ACLResourceType, name string, op kmsg.ACLOperation) {
	rh.t.Helper()
	create := kmsg.NewPtrCreateACLsRequest()
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceType, c.ResourceName, c.ResourcePatternType = rt, name, kmsg.ACLResourcePatternTypeLiteral
	c.Principal, c.Host, c.Operation, c.PermissionType = principal, "*", op, kmsg.ACLPermissionTypeAllow
	create.Creations = append(create.Creations, c)
	if resp := rh.handle(30, 3, create, "User:admin").(*kmsg.CreateACLsResponse); resp.Results[0].ErrorCode != 0 {
		rh.t.Fatalf("allowing %s %v on %v %s: error %d", principal, op, rt, name, resp.Results[0].ErrorCode)
	}
}

// resolveMinInsync is a small topic config with the topic's
// min.insync.replicas (1 unless set).
func resolveMinInsync(cs broker.ConfigSources) (partition.Config, error) {
	minInsync := 1
	if v, ok := cs.Topic["min.insync.replicas"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return partition.Config{}, err
		}
		minInsync = n
	}
	return partition.Config{SegmentBytes: 1 << 20, IndexIntervalBytes: 4096, SegmentIndexBytes: 1 << 20,
		MaxMessageBytes: 1 << 20, MinInsyncReplicas: minInsync}, nil
}

// createTopic creates topic name with the given replica lists and configs.
func (rh *replicaHarness) createTopic(name string, configs map[string]string, assignments ...[]int32) {
	rh.t.Helper()
	if _, err := rh.meta.CreateTopic(rh.t.Context(), metadata.CreateTopic{Name: name, Assignments: assignments, Configs: configs}); err != nil {
		rh.t.Fatal(err)
	}
	rh.reconcile()
}

func (rh *replicaHarness) reconcile() {
	rh.t.Helper()
	if err := rh.b.Reconcile(); err != nil {
		rh.t.Fatal(err)
	}
}

func (rh *replicaHarness) fence(id int32) {
	rh.t.Helper()
	if err := rh.meta.FenceBroker(rh.t.Context(), id, rh.epochs[id]); err != nil {
		rh.t.Fatal(err)
	}
	rh.reconcile()
}

func (rh *replicaHarness) partition(topic string, idx int32) *partition.Partition {
	rh.t.Helper()
	p, ok := rh.b.Partition(base.TopicPartition{Topic: topic, Partition: idx})
	if !ok {
		rh.t.Fatalf("%s-%d is not hosted", topic, idx)
	}
	return p
}

// handle serves req as the server does, waiting for a deferred answer.
func (rh *replicaHarness) handle(key, version int16, body kmsg.Request, principal string) kmsg.Response {
	rh.t.Helper()
	body.SetVersion(version)
	reply := rh.h.Handle(rh.t.Context(), &Request{Key: key, Version: version, Body: body, Principal: principal})
	if reply.Release != nil {
		defer reply.Release()
	}
	if reply.Wait != nil {
		return reply.Wait()
	}
	return reply.Resp
}

// produceRecords appends n single-record batches to a led partition.
func (rh *replicaHarness) produceRecords(p *partition.Partition, n int) {
	rh.t.Helper()
	for range n {
		if _, _, err := p.Append(oneRecordBatch("v"), partition.AcksLeader); err != nil {
			rh.t.Fatal(err)
		}
	}
}

// oneRecordBatch is a producer's batch of one record.
func oneRecordBatch(value string) []byte { return producerBatch(1, []byte(value)) }

// replicaFetch is follower id's Fetch v15 of one partition, with its
// registered broker epoch; lastEpoch < 0 sends no last fetched epoch.
func (rh *replicaHarness) replicaFetch(id int32, topic string, idx int32, offset int64, lastEpoch int32, maxWait time.Duration) *kmsg.FetchResponseTopicPartition {
	rh.t.Helper()
	resp := rh.handle(1, 15, rh.replicaFetchRequest(id, topic, idx, offset, lastEpoch, maxWait), "User:ANONYMOUS").(*kmsg.FetchResponse)
	return onlyPartition(rh.t, resp)
}

func (rh *replicaHarness) replicaFetchRequest(id int32, topic string, idx int32, offset int64, lastEpoch int32, maxWait time.Duration) *kmsg.FetchRequest {
	r := kmsg.NewPtrFetchRequest()
	r.ReplicaState.ID, r.ReplicaState.Epoch = id, rh.epochs[id]
	r.MaxWaitMillis, r.MinBytes = int32(maxWait.Milliseconds()), 1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	if t, ok := rh.meta.Image().Topics[topic]; ok {
		rt.TopicID = t.ID // v13+ names topics by id
	}
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.LastFetchedEpoch, rp.PartitionMaxBytes = idx, offset, lastEpoch, 1<<20
	rt.Partitions = append(rt.Partitions, rp)
	r.Topics = append(r.Topics, rt)
	return r
}

func onlyPartition(t *testing.T, resp *kmsg.FetchResponse) *kmsg.FetchResponseTopicPartition {
	t.Helper()
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch answered %d with %d topics", resp.ErrorCode, len(resp.Topics))
	}
	return &resp.Topics[0].Partitions[0]
}

// batchOffsets are the [base, next) offsets of the batches in b.
func batchOffsets(b []byte) (first, next int64, n int) {
	first = -1
	it := record.SplitBatches(b)
	for {
		_, h, ok := it.Next()
		if !ok {
			return first, next, n
		}
		if first < 0 {
			first = int64(h.BaseOffset)
		}
		next = int64(h.NextOffset())
		n++
	}
}

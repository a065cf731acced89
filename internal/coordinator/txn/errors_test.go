package txn

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

func TestErrorResponseFillsEveryErrorField(t *testing.T) {
	code := kerr.CoordinatorLoadInProgress.Code
	describe := kmsg.NewPtrDescribeTransactionsRequest()
	describe.TransactionalIDs = []string{"a", "b"}
	for _, req := range []kmsg.Request{
		initReq("tx", 4),
		addReq("tx", 1, 0, 3, tp("t", 0), tp("t", 1), tp("u", 0)),
		offsetsReq("tx", 1, 0, 4, "g"),
		endReq("tx", 1, 0, 4, true),
		describe,
		kmsg.NewPtrListTransactionsRequest(),
	} {
		resp := ErrorResponse(req, code)
		if resp.Key() != req.Key() {
			t.Fatalf("%T answered with %T", req, resp)
		}
		var codes []int16
		switch r := resp.(type) {
		case *kmsg.InitProducerIDResponse:
			codes = append(codes, r.ErrorCode)
			if r.ProducerID != -1 || r.ProducerEpoch != -1 {
				t.Fatalf("init error %+v", r)
			}
		case *kmsg.AddPartitionsToTxnResponse:
			for _, rt := range r.Topics {
				for _, p := range rt.Partitions {
					codes = append(codes, p.ErrorCode)
				}
			}
			if len(codes) != 3 {
				t.Fatalf("add partitions error %+v", r)
			}
		case *kmsg.AddOffsetsToTxnResponse:
			codes = append(codes, r.ErrorCode)
		case *kmsg.EndTxnResponse:
			codes = append(codes, r.ErrorCode)
		case *kmsg.DescribeTransactionsResponse:
			for _, s := range r.TransactionStates {
				codes = append(codes, s.ErrorCode)
			}
			if len(codes) != 2 || r.TransactionStates[1].TransactionalID != "b" {
				t.Fatalf("describe error %+v", r)
			}
		case *kmsg.ListTransactionsResponse:
			codes = append(codes, r.ErrorCode)
		}
		if len(codes) == 0 {
			t.Fatalf("%T: no error field", resp)
		}
		for _, c := range codes {
			if c != code {
				t.Fatalf("%T: codes %v", resp, codes)
			}
		}
	}
}

func TestAddPartitionsNotAttempted(t *testing.T) {
	req := addReq("tx", 1, 0, 3, tp("t", 0), tp("t", 1), tp("u", 0))
	req.Topics = append(req.Topics, kmsg.AddPartitionsToTxnRequestTopic{Topic: "t", Partitions: []int32{1, 2}}) // a repeated topic
	resp := AddPartitionsNotAttempted(req, map[base.TopicPartition]int16{tp("u", 0): kerr.UnknownTopicOrPartition.Code})
	got := map[base.TopicPartition]int16{}
	var topics []string
	for _, rt := range resp.Topics {
		topics = append(topics, rt.Topic)
		for _, p := range rt.Partitions {
			if _, dup := got[tp(rt.Topic, p.Partition)]; dup {
				t.Fatalf("partition %s-%d answered twice", rt.Topic, p.Partition)
			}
			got[tp(rt.Topic, p.Partition)] = p.ErrorCode
		}
	}
	if !slices.Equal(topics, []string{"t", "u"}) || len(got) != 4 {
		t.Fatalf("answered %v", resp.Topics)
	}
	for p, c := range got {
		want := kerr.OperationNotAttempted.Code
		if p == tp("u", 0) {
			want = kerr.UnknownTopicOrPartition.Code
		}
		if c != want {
			t.Fatalf("%v: code %d, want %d", p, c, want)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	good := newHarness(t).opts
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(o *Options){
		"negative coordinator epoch": func(o *Options) { o.CoordinatorEpoch = -1 },
		"no allocator":               func(o *Options) { o.NextProducerID = nil },
		"no group partitioner":       func(o *Options) { o.GroupPartition = nil },
		"zero max timeout":           func(o *Options) { o.MaxTimeout = 0 },
		"max timeout beyond int32":   func(o *Options) { o.MaxTimeout = maxTimeoutLimit + 1e6 },
		"zero expiration":            func(o *Options) { o.IDExpiration = 0 },
		"zero abort interval":        func(o *Options) { o.AbortCheckInterval = 0 },
		"zero expiry interval":       func(o *Options) { o.ExpiryCheckInterval = 0 },
	} {
		o := good
		mutate(&o)
		if o.Validate() == nil {
			t.Fatalf("%s: accepted", name)
		}
		if _, err := New(o); err == nil {
			t.Fatalf("%s: New accepted", name)
		}
	}
}

func TestProgrammerErrorsPanic(t *testing.T) {
	h := newHarness(t)
	noID := initReq("tx", 4)
	noID.TransactionalID = nil
	for name, op := range map[string]runtime.Op{
		"unserved request":             {Req: kmsg.NewPtrJoinGroupRequest()},
		"InitProducerId without an id": {Req: noID},
		"AddPartitionsToTxn v4":        {Req: addReq("tx", 1, 0, 4, tp("t", 0))},
		"unknown event":                {Event: "markers"},
		"event by pointer":             {Event: &MarkersWritten{TransactionalID: "tx"}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Fatalf("%s: no panic", name)
				}
			}()
			h.c.Handle(op, h.now)
		}()
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("ErrorResponse of an unserved request: no panic")
			}
		}()
		ErrorResponse(kmsg.NewPtrJoinGroupRequest(), kerr.NotCoordinator.Code)
	}()
}

package server

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestKgoApiVersions checks the framing against a real client. kgo first asks
// at a version newer than the fake handler's v3, so this also exercises the
// UNSUPPORTED_VERSION fallback and the client's retry.
func TestKgoApiVersions(t *testing.T) {
	h := newFakeHandler()
	var fallbacks atomic.Int32
	h.handle = func(_ context.Context, req *Request) Reply {
		if req.Key == apiVersionsKey && req.Version == 0 {
			fallbacks.Add(1)
		}
		return Reply{Resp: h.answer(req)}
	}
	s := startServer(t, h, nil)
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != 0 {
		t.Fatalf("error code %d", resp.ErrorCode)
	}
	found := false
	for _, k := range resp.ApiKeys {
		found = found || k.ApiKey == 3 && k.MaxVersion == 12
	}
	if !found {
		t.Fatalf("Metadata missing from %+v", resp.ApiKeys)
	}
	if fallbacks.Load() == 0 {
		t.Fatal("kgo never hit the UNSUPPORTED_VERSION fallback")
	}
}

package main

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestRecordPoolGivesStampedRecordsTheirOwnValue(t *testing.T) {
	payload := []byte("0123456789abcdef")
	p := newRecordPool(payload, true, 4)
	a, b := p.get(), p.get()
	a.Value[0] = 'x'
	if b.Value[0] != '0' || payload[0] != '0' {
		t.Fatal("stamped records share their value bytes")
	}
	a.Partition, a.Offset, a.Topic = 3, 99, "t"
	p.put(a)
	c := p.get()
	if c != a {
		t.Fatal("a returned record was not reused")
	}
	if c.Partition != 0 || c.Offset != 0 || c.Topic != "" || len(c.Value) != len(payload) {
		t.Fatalf("a reused record keeps what the client filled in: %+v", c)
	}
}

func TestRecordPoolSharesTheUnstampedPayload(t *testing.T) {
	payload := []byte("abc")
	p := newRecordPool(payload, false, 1)
	r := p.get()
	if &r.Value[0] != &payload[0] {
		t.Fatal("an unstamped record copied the payload")
	}
	p.put(r)
	p.put(&kgo.Record{Value: payload}) // over capacity: dropped, not blocking
	if got := p.get(); !bytes.Equal(got.Value, payload) {
		t.Fatalf("value %q", got.Value)
	}
}

func TestBenchFlagsRejectAWarmupOutOfRange(t *testing.T) {
	for _, w := range []string{"-1s", "2m"} {
		cmd := benchCmd()
		cmd.SetArgs([]string{"--warmup", w, "--bootstrap", "127.0.0.1:1"})
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		err := cmd.Execute()
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte("--warmup")) {
			t.Fatalf("--warmup %s: err %v, want one naming --warmup", w, err)
		}
	}
}

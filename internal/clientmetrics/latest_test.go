package clientmetrics

import (
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/clock"
)

// Latest keeps each instance's last push, forgets it after its TTL or on
// Forget, and keeps at most max instances, dropping the oldest push.
func TestLatestKeepsTheLastPushOfEachInstance(t *testing.T) {
	clk := clock.NewManual(time.Unix(1000, 0))
	l := NewLatest(clk, time.Minute, 2)
	a, b, c := InstanceID{1}, InstanceID{2}, InstanceID{3}
	ids := func() []InstanceID {
		var out []InstanceID
		for _, p := range l.Snapshot() {
			out = append(out, p.Instance)
		}
		return out
	}
	l.Put(a, Selectors{ClientID: "a"}, []Sample{{Name: "x", Value: 1}})
	clk.Advance(time.Second)
	l.Put(b, Selectors{ClientID: "b"}, []Sample{{Name: "x", Value: 2}})
	clk.Advance(time.Second)
	l.Put(a, Selectors{ClientID: "a"}, []Sample{{Name: "x", Value: 3}})
	if got := l.Snapshot(); len(got) != 2 || got[0].Samples[0].Value != 3 || got[1].Client.ClientID != "b" {
		t.Fatalf("after pushes of a, b, a: %+v", got)
	}
	clk.Advance(time.Second)
	l.Put(c, Selectors{}, nil) // over max: b, pushed before a's last, goes
	if got := ids(); len(got) != 2 || got[0] != a || got[1] != c {
		t.Fatalf("over max: %v, want a and c", got)
	}
	l.Forget(a)
	if got := ids(); len(got) != 1 || got[0] != c {
		t.Fatalf("after forgetting a: %v", got)
	}
	clk.Advance(time.Minute) // c pushed exactly a TTL ago
	if got := ids(); len(got) != 1 {
		t.Fatalf("at the TTL: %v", got)
	}
	clk.Advance(time.Millisecond)
	if got := ids(); len(got) != 0 {
		t.Fatalf("after the TTL: %v", got)
	}
}

package replication

import (
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

// FetcherID is Kafka's getFetcherId: abs(31 * topic.hashCode() + partition)
// % n, with Java's String.hashCode (the constants below are Java's).
func TestFetcherID(t *testing.T) {
	for s, want := range map[string]int32{"": 0, "hello": 99162322, "Hello World": -862545276} {
		if got := javaStringHash(s); got != want {
			t.Errorf("javaStringHash(%q) = %d, want Java's %d", s, got, want)
		}
	}
	cases := []struct {
		topic     string
		partition int32
		n, want   int
	}{
		{"test", 0, 3, 1},        // 31*3556498 + 0 = 110251438
		{"test", 1, 3, 2},        // 110251439
		{"Hello World", 5, 4, 3}, // negative before abs
		{"test", 7, 1, 0},
		{"test", 7, 0, 0},
	}
	for _, c := range cases {
		if got := FetcherID(base.TopicPartition{Topic: c.topic, Partition: c.partition}, c.n); got != c.want {
			t.Errorf("FetcherID(%s-%d, %d) = %d, want %d", c.topic, c.partition, c.n, got, c.want)
		}
	}
	// Every partition lands on one of the n fetchers, and consecutive
	// partitions of a topic use all of them.
	for n := 1; n <= 8; n++ {
		used := map[int]bool{}
		for p := range int32(100) {
			id := FetcherID(base.TopicPartition{Topic: "orders-eu", Partition: p}, n)
			if id < 0 || id >= n {
				t.Fatalf("FetcherID(orders-eu-%d, %d) = %d, out of range", p, n, id)
			}
			used[id] = true
		}
		if len(used) != n {
			t.Errorf("n=%d: 100 partitions used fetchers %v", n, used)
		}
	}
}

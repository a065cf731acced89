package broker

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/partition"
)

// concurrentOpens wraps a resolver (called once per partition open) to
// record how many opens run at once; each lingers a little so that
// parallel ones overlap.
type concurrentOpens struct {
	mu       sync.Mutex
	now, max int
}

func (c *concurrentOpens) resolver(resolve ConfigResolver) ConfigResolver {
	return func(cs ConfigSources) (partition.Config, error) {
		c.mu.Lock()
		c.now++
		c.max = max(c.max, c.now)
		c.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
		c.mu.Lock()
		c.now--
		c.mu.Unlock()
		return resolve(cs)
	}
}

// OpenWorkers (num.recovery.threads.per.data.dir) opens that many
// partitions at once, and every partition is hosted, with its data, as
// with one at a time.
func TestOpenWorkers(t *testing.T) {
	for _, workers := range []int{0, 1, 4} {
		t.Run(fmt.Sprint(workers), func(t *testing.T) {
			meta := openTestMeta(t)
			const n = 16
			assignments := make([][]int32, n)
			for i := range assignments {
				assignments[i] = []int32{1}
			}
			if _, err := meta.CreateTopic(t.Context(), metadata.CreateTopic{Name: "many", Assignments: assignments}); err != nil {
				t.Fatal(err)
			}
			seen := &concurrentOpens{}
			o := idleTestOptions(t, meta, replicatedConfig(1))
			o.Resolve = seen.resolver(o.Resolve)
			o.OpenWorkers = workers
			b := startTestBroker(t, o)
			for i := range int32(n) {
				if _, ok := b.Partition(base.TopicPartition{Topic: "many", Partition: i}); !ok {
					t.Fatalf("many-%d is not hosted", i)
				}
			}
			seen.mu.Lock()
			defer seen.mu.Unlock()
			switch {
			case workers <= 1 && seen.max != 1:
				t.Fatalf("%d opens at once with OpenWorkers=%d, want 1", seen.max, workers)
			case workers > 1 && (seen.max < 2 || seen.max > workers):
				t.Fatalf("%d opens at once with OpenWorkers=%d, want 2..%d", seen.max, workers, workers)
			}
		})
	}
}

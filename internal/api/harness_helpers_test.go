package api

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/coordinator/offsets"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// checkAdvertised checks that key is registered at exactly min..max and
// that ApiVersions advertises that range.
func checkAdvertised(t *testing.T, key, min, max int16) {
	t.Helper()
	h := &Handler{}
	if !h.Supported(key, min) || !h.Supported(key, max) || h.Supported(key, max+1) || (min > 0 && h.Supported(key, min-1)) {
		t.Fatalf("%s must be registered at v%d-%d", kmsg.NameForKey(key), min, max)
	}
	rh := newReplicaHarness(t, nil)
	resp := rh.handle(18, 3, kmsg.NewPtrApiVersionsRequest(), "User:ANONYMOUS").(*kmsg.ApiVersionsResponse)
	for _, k := range resp.ApiKeys {
		if k.ApiKey == key {
			if k.MinVersion != min || k.MaxVersion != max {
				t.Fatalf("ApiVersions advertises %s v%d-%d, want v%d-%d", kmsg.NameForKey(key), k.MinVersion, k.MaxVersion, min, max)
			}
			return
		}
	}
	t.Fatalf("ApiVersions does not advertise %s", kmsg.NameForKey(key))
}

// coordinatorRuntime runs a coordinator runtime over the partitions of
// topic that rh's broker leads, closed at cleanup before the broker.
func (rh *replicaHarness) coordinatorRuntime(topic string, newShard func(int32) (runtime.Shard, error), errorResponse func(kmsg.Request, int16) kmsg.Response) *runtime.Runtime {
	rh.t.Helper()
	rt, err := runtime.New(runtime.Options{
		NewShard: newShard,
		Open: func(idx int32) (runtime.Log, runtime.Appender, error) {
			p, ok := rh.b.Partition(base.TopicPartition{Topic: topic, Partition: idx})
			if !ok {
				return nil, nil, runtime.ErrNotLeader
			}
			a := offsets.New(p, clock.Real{})
			return a, a, nil
		},
		ErrorResponse: errorResponse,
		Clock:         clock.Real{},
		NewTicker:     runtime.NewRealTicker(100 * time.Millisecond),
		MaxQueuedOps:  64,
	})
	if err != nil {
		rh.t.Fatal(err)
	}
	rh.t.Cleanup(rt.Close) // before the broker closes
	return rt
}

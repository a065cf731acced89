package api

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// BenchmarkFetchSessionIncremental is the session's own cost per fetch of
// a consumer of 1000 partitions that moves one of them: begin (update,
// copy of the wants) and finish (news, rotation, the filtered response),
// with a response skeleton built as resolveFetch builds one but without
// the reads. It stays linear in the session's partitions, as Kafka's
// does; a fetch that visited only changed partitions would not be.
func BenchmarkFetchSessionIncremental(b *testing.B) {
	const partitions = 1000
	c := newFetchSessionCache(10, time.Now)
	all := make([]int32, partitions)
	for i := range all {
		all[i] = int32(i)
	}
	fc := c.begin(fetchRequest(0, 0, topicParts("t", all...)), 12)
	resp := answer(fc.wants, func(fetchWant) kmsg.FetchResponseTopicPartition { return part(0, 0, 0, nil) })
	c.finish(fc, resp)
	id, epoch := resp.SessionID, int32(1)
	records := []byte("records")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		moved := int32(i % partitions)
		fc := c.begin(fetchRequest(id, epoch, topicParts("t", moved)), 12)
		if fc.errCode != 0 {
			b.Fatalf("session error %d", fc.errCode)
		}
		resp := answer(fc.wants, func(w fetchWant) kmsg.FetchResponseTopicPartition {
			if w.key.partition == moved {
				return part(int64(i), 0, 0, records)
			}
			return part(0, 0, 0, nil)
		})
		c.finish(fc, resp)
		epoch = nextSessionEpoch(epoch)
	}
}

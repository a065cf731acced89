package partition

import (
	"fmt"
	"sync"

	"github.com/strata-broker/strata/internal/record"
)

// recordReaders reuse decompression buffers across produce requests.
var recordReaders = sync.Pool{New: func() any { return new(record.RecordReader) }}

// requireKeys refuses a batch with a record that has no key, as Kafka's
// LogValidator does for a compacted topic: the cleaner could never tell
// which record such a one supersedes.
func requireKeys(batch []byte, tp fmt.Stringer) error {
	rr := recordReaders.Get().(*record.RecordReader)
	defer recordReaders.Put(rr)
	if err := rr.Reset(batch); err != nil {
		return err
	}
	for {
		rec, ok := rr.Next()
		if !ok {
			return rr.Err()
		}
		if rec.Key == nil {
			return &record.Error{Code: record.CodeInvalidRecord,
				Msg: fmt.Sprintf("Compacted topic cannot accept message without key in topic partition %s.", tp)}
		}
	}
}

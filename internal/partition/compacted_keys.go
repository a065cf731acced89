package partition

import (
	"fmt"
	"sync"

	"github.com/strata-broker/strata/internal/record"
)

// recordReaders reuse decompression buffers across produce requests.
var recordReaders = sync.Pool{New: func() any { return new(record.RecordReader) }}

// requireKeys refuses a batch with records that have no key, as Kafka's
// LogValidator does for a compacted topic (the cleaner could never tell
// which record such a one supersedes), naming each of them (KIP-467).
func requireKeys(batch []byte, tp fmt.Stringer) error {
	rr := recordReaders.Get().(*record.RecordReader)
	defer recordReaders.Put(rr)
	if err := rr.Reset(batch); err != nil {
		return err
	}
	var keyless []record.RecordError
	var msg string
	for i := int32(0); ; i++ {
		rec, ok := rr.Next()
		if !ok {
			break
		}
		if rec.Key == nil {
			if msg == "" {
				msg = fmt.Sprintf("Compacted topic cannot accept message without key in topic partition %s.", tp)
			}
			keyless = append(keyless, record.RecordError{Index: i, Msg: msg})
		}
	}
	if err := rr.Err(); err != nil {
		return err
	}
	if keyless != nil {
		return record.RecordsError(record.CodeInvalidRecord, keyless)
	}
	return nil
}

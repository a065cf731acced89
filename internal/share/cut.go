package share

import "github.com/strata-broker/strata/internal/base"

// CutAtBatches is ShareFetch's BatchSize (v1+): in the batch-optimized
// mode Kafka answers a large acquisition as several AcquiredRecords, each
// cut at the first log batch that starts batchSize or more offsets after
// the piece's first offset, so a client can acknowledge in batches of
// about that size. The offsets and their delivery counts do not change;
// only how they are listed. A batchSize of 0 or less cuts nothing. got
// and batches are in offset order (batches as Read.Batches).
func CutAtBatches(got []Acquisition, batches []base.Range, batchSize int64) []Acquisition {
	if batchSize <= 0 || len(got) == 0 {
		return got
	}
	out := make([]Acquisition, 0, len(got))
	next := 0
	for _, a := range got {
		first := a.Offsets.Start
		for next < len(batches) && batches[next].Start <= first {
			next++
		}
		for ; next < len(batches) && batches[next].Start < a.Offsets.End; next++ {
			if at := batches[next].Start; int64(at-first) >= batchSize {
				out = append(out, Acquisition{Offsets: base.Range{Start: first, End: at}, Deliveries: a.Deliveries})
				first = at
			}
		}
		out = append(out, Acquisition{Offsets: base.Range{Start: first, End: a.Offsets.End}, Deliveries: a.Deliveries})
	}
	return out
}

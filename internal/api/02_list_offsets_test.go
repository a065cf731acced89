package api

import (
	"math"
	"testing"
)

// TestParseOffsetQuery: ListOffsets' timestamp field is a timestamp from 0
// up, or one of Kafka's six sentinels; anything else below 0 is refused.
func TestParseOffsetQuery(t *testing.T) {
	for _, tc := range []struct {
		ts   int64
		want offsetQuery
		ok   bool
	}{
		{0, queryTimestamp, true},
		{1, queryTimestamp, true},
		{math.MaxInt64, queryTimestamp, true},
		{-1, queryLatest, true},
		{-2, queryEarliest, true},
		{-3, queryMaxTimestamp, true},
		{-4, queryEarliestLocal, true},
		{-5, queryLastTiered, true},
		{-6, queryEarliestPendingUpload, true},
		{-7, 0, false},
		{math.MinInt64, 0, false},
	} {
		if got, ok := parseOffsetQuery(tc.ts); got != tc.want || ok != tc.ok {
			t.Errorf("parseOffsetQuery(%d) = %v, %v; want %v, %v", tc.ts, got, ok, tc.want, tc.ok)
		}
	}
}

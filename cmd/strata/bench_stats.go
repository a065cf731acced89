package main

import (
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// latencyHist is a log-linear histogram of durations, in the manner of an
// HDR histogram: values below 2^histSubBits ns are counted exactly, and
// every power of two above that is split into 2^histSubBits equal buckets,
// so a reported percentile is within 1/2^(histSubBits+1) (0.4%) of a
// recorded value. Its memory is fixed (histBuckets counters) however long
// the run, and Record is safe from many goroutines at once (the produce
// promises run concurrently).
//
// Invariant: count is the sum of counts; maxNs is the largest recorded
// value (0 when empty).
type latencyHist struct {
	counts [histBuckets]atomic.Uint64
	count  atomic.Int64
	maxNs  atomic.Int64
}

const (
	histSubBits  = 7
	histSubCount = 1 << histSubBits
	// histBuckets covers every non-negative int64: the exact range plus
	// one row of histSubCount buckets per shift 0..(62-histSubBits).
	histBuckets = histSubCount * (64 - histSubBits)
)

// histIndex is the bucket that holds ns (ns >= 0).
func histIndex(ns int64) int {
	v := uint64(ns)
	if v < histSubCount {
		return int(v)
	}
	shift := bits.Len64(v) - 1 - histSubBits
	sub := v >> uint(shift) // in [histSubCount, 2*histSubCount)
	return histSubCount*(shift+1) + int(sub-histSubCount)
}

// histBounds is the half-open range of values [lo, hi) in bucket i.
func histBounds(i int) (lo, hi int64) {
	if i < histSubCount {
		return int64(i), int64(i) + 1
	}
	shift := uint(i/histSubCount - 1)
	sub := uint64(i%histSubCount + histSubCount)
	return int64(sub << shift), int64((sub + 1) << shift)
}

// Record adds one latency. Negative durations (a clock that went back)
// count as zero rather than being dropped, so count stays the number of
// records seen.
func (h *latencyHist) Record(d time.Duration) {
	ns := max(int64(d), 0)
	h.counts[histIndex(ns)].Add(1)
	h.count.Add(1)
	for {
		cur := h.maxNs.Load()
		if ns <= cur || h.maxNs.CompareAndSwap(cur, ns) {
			return
		}
	}
}

// Count is the number of recorded values.
func (h *latencyHist) Count() int64 { return h.count.Load() }

// Max is the largest recorded value, exactly.
func (h *latencyHist) Max() time.Duration { return time.Duration(h.maxNs.Load()) }

// Percentile is the nearest-rank q-quantile (0 < q <= 1): the smallest
// recorded value v such that at least ceil(q*count) values are <= v, up to
// the bucket resolution. It reports the middle of the bucket, clamped to
// the exact maximum, and 0 when nothing was recorded. Call it once the
// recording goroutines are done.
func (h *latencyHist) Percentile(q float64) time.Duration {
	n := h.count.Load()
	if n == 0 {
		return 0
	}
	rank := nearestRank(q, n)
	var seen int64
	for i := range h.counts {
		seen += int64(h.counts[i].Load())
		if seen >= rank {
			lo, hi := histBounds(i)
			mid := lo + (hi-1-lo)/2
			return time.Duration(min(mid, h.maxNs.Load()))
		}
	}
	return h.Max()
}

// nearestRank is the 1-based rank of the q-quantile among n sorted values:
// ceil(q*n), kept within [1, n].
func nearestRank(q float64, n int64) int64 {
	rank := int64(math.Ceil(q * float64(n)))
	return min(max(rank, 1), n)
}

// rates turns a byte and record count over an elapsed time into MB/s
// (10^6 bytes, as Kafka's perf tools and most storage benchmarks count)
// and records/s. A non-positive elapsed time gives zeros, not infinities.
func rates(bytes, records int64, elapsed time.Duration) (mbPerSec, recordsPerSec float64) {
	if elapsed <= 0 {
		return 0, 0
	}
	s := elapsed.Seconds()
	return float64(bytes) / 1e6 / s, float64(records) / s
}

// ms is a duration in milliseconds, for the JSON output.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// fmtMs prints a duration in milliseconds with three significant digits or
// so: 0.41, 1.20, 23.4, 512.
func fmtMs(d time.Duration) string {
	v := ms(d)
	switch {
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 100:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

// latencySummary is a histogram's percentiles, in milliseconds.
type latencySummary struct {
	Count  int64   `json:"count"`
	P50Ms  float64 `json:"p50"`
	P99Ms  float64 `json:"p99"`
	P999Ms float64 `json:"p999"`
	MaxMs  float64 `json:"max"`
}

func summarize(h *latencyHist) latencySummary {
	return latencySummary{
		Count:  h.Count(),
		P50Ms:  ms(h.Percentile(0.50)),
		P99Ms:  ms(h.Percentile(0.99)),
		P999Ms: ms(h.Percentile(0.999)),
		MaxMs:  ms(h.Max()),
	}
}

// latencyLine is "p50 0.41 ms p99 1.20 ms p999 2.30 ms max 8.10 ms".
func latencyLine(h *latencyHist) string {
	return fmt.Sprintf("p50 %s ms p99 %s ms p999 %s ms max %s ms",
		fmtMs(h.Percentile(0.50)), fmtMs(h.Percentile(0.99)), fmtMs(h.Percentile(0.999)), fmtMs(h.Max()))
}

package main

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestHistBucketsCoverEveryValueInOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	values := []int64{0, 1, 127, 128, 129, 255, 256, 257, 1 << 20, 1<<20 + 1, math.MaxInt64 - 1, math.MaxInt64}
	for range 10000 {
		values = append(values, r.Int64N(1<<uint(r.IntN(63))+1))
	}
	for _, v := range values {
		i := histIndex(v)
		if i < 0 || i >= histBuckets {
			t.Fatalf("histIndex(%d) = %d, outside [0, %d)", v, i, histBuckets)
		}
		lo, hi := histBounds(i)
		// hi of the last bucket overflows int64 to MinInt64; compare as uint64.
		if v < lo || uint64(v) >= uint64(hi) {
			t.Fatalf("value %d in bucket %d = [%d, %d)", v, i, lo, hi)
		}
	}
	// Buckets tile the number line: each starts where the previous ends.
	for i := 1; i < histBuckets; i++ {
		_, prevHi := histBounds(i - 1)
		if lo, _ := histBounds(i); lo != prevHi {
			t.Fatalf("bucket %d starts at %d, bucket %d ends at %d", i, lo, i-1, prevHi)
		}
	}
}

// exactPercentile is the naive model: nearest rank in a sorted slice.
func exactPercentile(sorted []time.Duration, q float64) time.Duration {
	return sorted[nearestRank(q, int64(len(sorted)))-1]
}

func TestPercentileMatchesSortedSliceWithinResolution(t *testing.T) {
	dists := map[string]func(r *rand.Rand) time.Duration{
		"uniform 0-5ms":  func(r *rand.Rand) time.Duration { return time.Duration(r.Int64N(int64(5 * time.Millisecond))) },
		"log-uniform":    func(r *rand.Rand) time.Duration { return time.Duration(math.Exp(r.Float64() * math.Log(1e10))) },
		"tiny ns values": func(r *rand.Rand) time.Duration { return time.Duration(r.IntN(200)) },
		"long tail": func(r *rand.Rand) time.Duration {
			if r.IntN(1000) == 0 {
				return time.Duration(r.Int64N(int64(time.Second)))
			}
			return 300*time.Microsecond + time.Duration(r.Int64N(int64(100*time.Microsecond)))
		},
	}
	for name, gen := range dists {
		for _, n := range []int{1, 2, 10, 999, 1000, 100003} {
			r := rand.New(rand.NewPCG(uint64(n), 1))
			var h latencyHist
			vals := make([]time.Duration, n)
			for i := range vals {
				vals[i] = gen(r)
				h.Record(vals[i])
			}
			slices.Sort(vals)
			for _, q := range []float64{0.001, 0.5, 0.9, 0.99, 0.999, 1} {
				got, want := h.Percentile(q), exactPercentile(vals, q)
				// Half a bucket: 1/2^(histSubBits+1) of the value, plus one ns.
				tol := float64(want)/(2*histSubCount) + 1
				if math.Abs(float64(got-want)) > tol {
					t.Errorf("%s n=%d q=%v: got %v, exact %v (tolerance %.0f ns)", name, n, q, got, want, tol)
				}
			}
			if h.Max() != vals[n-1] || h.Count() != int64(n) {
				t.Errorf("%s n=%d: max %v count %d, want %v %d", name, n, h.Max(), h.Count(), vals[n-1], n)
			}
		}
	}
}

func TestPercentileSmallValuesAreExact(t *testing.T) {
	var h latencyHist
	for v := 100; v >= 1; v-- { // order must not matter
		h.Record(time.Duration(v))
	}
	for q, want := range map[float64]time.Duration{0.5: 50, 0.99: 99, 0.999: 100, 1: 100, 0.01: 1} {
		if got := h.Percentile(q); got != want {
			t.Errorf("p%v = %v, want %v", q*100, got, want)
		}
	}
}

func TestPercentileEmptyAndNegative(t *testing.T) {
	var h latencyHist
	if h.Percentile(0.99) != 0 || h.Max() != 0 {
		t.Fatalf("empty histogram: p99 %v max %v, want 0", h.Percentile(0.99), h.Max())
	}
	h.Record(-time.Millisecond) // a clock step back counts as zero, not lost
	if h.Count() != 1 || h.Percentile(0.5) != 0 {
		t.Fatalf("negative: count %d p50 %v, want 1 and 0", h.Count(), h.Percentile(0.5))
	}
}

// A percentile never reports more than the largest value recorded, though
// that value's bucket reaches further: a single record is reported exactly.
func TestPercentileIsClampedToTheMax(t *testing.T) {
	var h latencyHist
	h.Record(1000 * time.Microsecond) // in a bucket 4096 ns wide
	for _, q := range []float64{0.5, 0.99, 1} {
		if got := h.Percentile(q); got != time.Millisecond {
			t.Errorf("p%v of one record of 1ms = %v, want 1ms", q*100, got)
		}
	}
}

// skewedHist records 1000 values: 500 of unit, 400 of 2*unit, 90 of
// 4*unit, 9 of 8*unit and one of 16*unit, so that p50, p90, p99, p999 and
// max each fall on another.
func skewedHist(unit time.Duration) *latencyHist {
	var h latencyHist
	for i, n := range []int{500, 400, 90, 9, 1} {
		for range n {
			h.Record(unit << i)
		}
	}
	return &h
}

func TestSummarizeAndLatencyLine(t *testing.T) {
	// Below histSubCount ns the percentiles are exact.
	want := latencySummary{Count: 1000, P50Ms: 0.00001, P99Ms: 0.00004, P999Ms: 0.00008, MaxMs: 0.00016}
	if got := summarize(skewedHist(10)); got != want {
		t.Errorf("summarize = %+v, want %+v", got, want)
	}
	// 20 ms is one whose bucket's middle prints as 20.0 (and so on up).
	if got, want := latencyLine(skewedHist(20*time.Millisecond)), "p50 20.0 ms p99 80.0 ms p999 160 ms max 320 ms"; got != want {
		t.Errorf("latencyLine = %q, want %q", got, want)
	}
}

func TestHistRecordConcurrent(t *testing.T) {
	var h latencyHist
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 10000 {
				h.Record(time.Duration(g*10000 + i))
			}
		})
	}
	wg.Wait()
	if h.Count() != 80000 || h.Max() != 79999 {
		t.Fatalf("count %d max %d, want 80000 and 79999", h.Count(), h.Max())
	}
}

func TestNearestRank(t *testing.T) {
	for _, c := range []struct {
		q    float64
		n    int64
		want int64
	}{
		{0.5, 1, 1}, {0.5, 10, 5}, {0.5, 11, 6}, {0.99, 100, 99}, {0.999, 100, 100},
		{0.999, 1000, 999}, {0.999, 1001, 1000}, {1, 7, 7}, {0, 7, 1},
	} {
		if got := nearestRank(c.q, c.n); got != c.want {
			t.Errorf("nearestRank(%v, %d) = %d, want %d", c.q, c.n, got, c.want)
		}
	}
}

func TestRates(t *testing.T) {
	for _, c := range []struct {
		name           string
		bytes, records int64
		elapsed        time.Duration
		mbps, rps      float64
	}{
		{"the example line", 1023711 * 1024, 1023711, time.Second, 1048.280064, 1023711},
		{"half a second doubles", 5e6, 1000, 500 * time.Millisecond, 10, 2000},
		{"MB is 10^6 bytes", 1 << 20, 1, time.Second, 1.048576, 1},
		{"no time elapsed", 100, 1, 0, 0, 0},
		{"negative elapsed", 100, 1, -time.Second, 0, 0},
	} {
		mbps, rps := rates(c.bytes, c.records, c.elapsed)
		if math.Abs(mbps-c.mbps) > 1e-9 || math.Abs(rps-c.rps) > 1e-9 {
			t.Errorf("%s: rates = %v MB/s %v rec/s, want %v %v", c.name, mbps, rps, c.mbps, c.rps)
		}
	}
}

func TestFmtMs(t *testing.T) {
	for d, want := range map[time.Duration]string{
		410 * time.Microsecond:   "0.41",
		1200 * time.Microsecond:  "1.20",
		23456 * time.Microsecond: "23.5",
		512 * time.Millisecond:   "512",
		10 * time.Millisecond:    "10.0",
		100 * time.Millisecond:   "100",
		0:                        "0.00",
	} {
		if got := fmtMs(d); got != want {
			t.Errorf("fmtMs(%v) = %q, want %q", d, got, want)
		}
	}
}

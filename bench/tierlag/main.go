// Command tierlag is the Kafka-client side of bench/tier_upload.sh: it
// creates a topic with configs, and watches a topic's copy lag (the
// records not yet uploaded to the remote tier: ListOffsets -1, the high
// watermark, minus -6, the earliest pending upload, summed over the
// partitions) while a load runs, then says whether the lag stayed bounded.
//
//	tierlag create --bootstrap H:P --topic T --partitions N --config k=v ...
//	tierlag watch  --bootstrap H:P --topic T --every 5s --for 60s --drain 20s \
//	               --record-bytes 1024 --segment-bytes 16777216
//
// watch prints one tab-separated line per sample (seconds since start,
// high watermark sum, pending sum, lag in records, MiB, segments and
// seconds of load at --rate), then a summary line starting with "verdict".
// The lag is bounded when it does not trend up during the load and when,
// within --drain after the load, it falls back to at most two segments
// per partition (the active segment and the one that just rolled): the
// uploads were behind by a steady amount, not losing ground. "Trends up"
// is a least-squares line through the load's samples after its first
// quarter (ramp-up): growing when even its slope less two standard errors
// would add a segment per partition over the window. The lag swings by
// a task interval's worth of segments from one sample to the next (each
// pass uploads what rolled since the last), so the noise is estimated,
// not assumed. It also prints the upload rate over the window as a
// fraction of the produce rate.
// Every run is bounded by --for + --drain + a minute.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/bench/internal/admin"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: tierlag create|watch [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "create":
		err = create(os.Args[2:])
	case "watch":
		err = watch(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: use create or watch", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tierlag:", err)
		os.Exit(1)
	}
}

type configFlag map[string]*string

func (c configFlag) String() string { return fmt.Sprint(map[string]*string(c)) }

func (c configFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("config %q: want key=value", s)
	}
	c[k] = kadm.StringPtr(v)
	return nil
}

func create(args []string) error {
	fs := flag.NewFlagSet("create", flag.ExitOnError)
	bootstrap := fs.String("bootstrap", "127.0.0.1:9092", "seed broker")
	topic := fs.String("topic", "", "topic to create")
	partitions := fs.Int("partitions", 6, "partitions")
	configs := configFlag{}
	fs.Var(configs, "config", "key=value topic config (repeatable)")
	_ = fs.Parse(args)
	if *topic == "" {
		return errors.New("create: --topic is required")
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(*bootstrap))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := admin.CreateTopic(ctx, kadm.NewClient(cl), *topic, int32(*partitions), configs); err != nil {
		return err
	}
	fmt.Printf("created %s: %d partitions\n", *topic, *partitions)
	return nil
}

// sample is the summed offsets of one ListOffsets round.
type sample struct {
	at      time.Duration
	end     int64 // sum of high watermarks (-1)
	pending int64 // sum of earliest pending uploads (-6)
}

func (s sample) lag() int64 { return s.end - s.pending }

func watch(args []string) error {
	fs := flag.NewFlagSet("watch", flag.ExitOnError)
	bootstrap := fs.String("bootstrap", "127.0.0.1:9092", "seed broker")
	topic := fs.String("topic", "", "topic to watch")
	every := fs.Duration("every", 5*time.Second, "sampling interval")
	load := fs.Duration("for", 60*time.Second, "how long the load runs")
	drain := fs.Duration("drain", 20*time.Second, "how long to keep sampling after the load")
	recordBytes := fs.Int64("record-bytes", 1024, "bytes per record (to express the lag in bytes)")
	segmentBytes := fs.Int64("segment-bytes", 16<<20, "the topic's segment.bytes")
	rate := fs.Float64("rate", 0, "the load's records/s, to express the lag in seconds of load (0: not shown)")
	_ = fs.Parse(args)
	if *topic == "" || *every <= 0 || *load <= 0 || *drain < 0 || *recordBytes <= 0 || *segmentBytes <= 0 {
		return errors.New("watch: --topic, and positive --every, --for, --record-bytes, --segment-bytes are required")
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(*bootstrap))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), *load+*drain+time.Minute)
	defer cancel()

	segs := func(records int64) float64 { return float64(records**recordBytes) / float64(*segmentBytes) }
	lagSeconds := func(records int64) float64 {
		if *rate <= 0 {
			return 0
		}
		return float64(records) / *rate
	}
	fmt.Println("t_s\thw_sum\tpending_sum\tlag_records\tlag_mib\tlag_segments\tlag_s")
	start := time.Now()
	var during, after []sample
	partitions := 0
	for tick := time.NewTicker(*every); ; {
		s, n, err := sampleLag(ctx, cl, *topic)
		if err != nil {
			return err
		}
		s.at, partitions = time.Since(start), n
		fmt.Printf("%.1f\t%d\t%d\t%d\t%.1f\t%.2f\t%.2f\n", s.at.Seconds(), s.end, s.pending, s.lag(),
			float64(s.lag()**recordBytes)/(1<<20), segs(s.lag()), lagSeconds(s.lag()))
		if s.at <= *load {
			during = append(during, s)
		} else {
			after = append(after, s)
		}
		if s.at >= *load+*drain {
			tick.Stop()
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return verdict(during, after, partitions, segs, lagSeconds)
}

func verdict(during, after []sample, partitions int, segs, lagSeconds func(int64) float64) error {
	if len(during) < 8 || partitions == 0 {
		return fmt.Errorf("only %d samples during the load: sample more often", len(during))
	}
	window := during[len(during)/4:] // past the ramp-up
	var xs, ys []float64
	var maxLag, sumLag float64
	var maxSeconds float64
	for _, s := range window {
		xs, ys = append(xs, s.at.Seconds()), append(ys, segs(s.lag()))
		maxLag, sumLag = max(maxLag, segs(s.lag())), sumLag+segs(s.lag())
		maxSeconds = max(maxSeconds, lagSeconds(s.lag()))
	}
	slope, stderr := leastSquares(xs, ys)
	span := xs[len(xs)-1] - xs[0]
	steady := (slope-2*stderr)*span < float64(partitions)
	first, last := window[0], window[len(window)-1]
	uploadShare := float64(last.pending-first.pending) / float64(max(last.end-first.end, 1))
	drained, drainedOK := -1.0, true
	if len(after) > 0 {
		drained = segs(after[len(after)-1].lag())
		drainedOK = drained <= 2*float64(partitions)
	}
	word := "BOUNDED"
	if !steady || !drainedOK {
		word = "GROWING"
	}
	fmt.Printf("verdict %s: during the load (from %.0fs) the lag averaged %.1f segments, at most %.1f (%.1fs of load); "+
		"trend %+.3f ± %.3f segments/s (growing if %+.1f segments over %.0fs is above +%d); uploads kept %.1f%% of the produce rate; "+
		"after the load it drained to %.2f segments (limit %d)\n",
		word, xs[0], sumLag/float64(len(window)), maxLag, maxSeconds, slope, stderr, (slope-2*stderr)*span, span,
		partitions, 100*uploadShare, drained, 2*partitions)
	if word != "BOUNDED" {
		return errors.New("the copy lag did not stay bounded")
	}
	return nil
}

// leastSquares returns the slope of the least-squares line through
// (xs, ys) and its standard error; it needs at least three points.
func leastSquares(xs, ys []float64) (slope, stderr float64) {
	n := float64(len(xs))
	var mx, my float64
	for i := range xs {
		mx, my = mx+xs[i]/n, my+ys[i]/n
	}
	var sxx, sxy float64
	for i := range xs {
		sxx, sxy = sxx+(xs[i]-mx)*(xs[i]-mx), sxy+(xs[i]-mx)*(ys[i]-my)
	}
	if sxx == 0 || n < 3 {
		return 0, 0
	}
	slope = sxy / sxx
	var rss float64
	for i := range xs {
		r := ys[i] - (my + slope*(xs[i]-mx))
		rss += r * r
	}
	return slope, math.Sqrt(rss / (n - 2) / sxx)
}

// sampleLag sums, over topic's partitions, the high watermark (-1) and the
// earliest pending upload (-6, ListOffsets v11).
func sampleLag(ctx context.Context, cl *kgo.Client, topic string) (sample, int, error) {
	meta := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	meta.Topics = append(meta.Topics, mt)
	mresp, err := meta.RequestWith(ctx, cl)
	if err != nil {
		return sample{}, 0, err
	}
	if len(mresp.Topics) != 1 || mresp.Topics[0].ErrorCode != 0 {
		return sample{}, 0, fmt.Errorf("metadata of %s: %v", topic, mresp.Topics)
	}
	n := len(mresp.Topics[0].Partitions)
	var s sample
	for _, ts := range []int64{-1, -6} {
		offsets, err := admin.ListOffsets(ctx, cl, topic, int32(n), ts)
		if err != nil {
			return sample{}, 0, err
		}
		for p, o := range offsets {
			if o < 0 {
				return sample{}, 0, fmt.Errorf("ListOffsets %d of %s-%d: no offset (tier unknown?)", ts, topic, p)
			}
			if ts == -1 {
				s.end += o
			} else {
				s.pending += o
			}
		}
	}
	return s, n, nil
}

// Command remoteread is the client side of bench/remote_read.sh: against a
// running Strata broker with a remote tier it produces the same bytes to a
// tiered topic (small segments, small local retention, so its data ends up
// only in the bucket) and to an untiered one, waits until the tiered
// topic's local log start (ListOffsets -4) is near its end, then consumes
// both from the start, alternating which goes first, for a few rounds, and
// prints MB/s for each and the ratio remote/local. MB is 10^6 bytes of
// record values, as in `strata bench`. Every phase is bounded in time.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	benchadmin "github.com/strata-broker/strata/bench/internal/admin"
)

type options struct {
	bootstrap      string
	totalBytes     int64
	recordBytes    int
	partitions     int32
	rounds         int
	segmentBytes   int64
	localRetention int64
	tierTimeout    time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.bootstrap, "bootstrap", "127.0.0.1:9092", "broker host:port")
	flag.Int64Var(&o.totalBytes, "bytes", 1<<30, "record value bytes produced to each topic")
	flag.IntVar(&o.recordBytes, "record-bytes", 1024, "bytes in each record value")
	o.partitions = 6
	flag.Var((*int32Flag)(&o.partitions), "partitions", "partitions of each topic")
	flag.IntVar(&o.rounds, "rounds", 3, "consume rounds (each reads both topics)")
	flag.Int64Var(&o.segmentBytes, "segment-bytes", 64<<20, "segment.bytes of both topics")
	flag.Int64Var(&o.localRetention, "local-retention-bytes", 1<<20, "local.retention.bytes of the tiered topic")
	flag.DurationVar(&o.tierTimeout, "tier-timeout", 5*time.Minute, "longest wait for the data to leave the local log")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "remoteread:", err)
		os.Exit(1)
	}
}

type int32Flag int32

func (f *int32Flag) String() string { return strconv.Itoa(int(*f)) }
func (f *int32Flag) Set(s string) error {
	v, err := strconv.ParseInt(s, 10, 32)
	*f = int32Flag(v)
	return err
}

const (
	tieredTopic    = "remote-read-tiered"
	localTopic     = "remote-read-local"
	consumeTimeout = 10 * time.Minute
)

func run(o options) error {
	ctx := context.Background()
	adm, err := kgo.NewClient(kgo.SeedBrokers(o.bootstrap))
	if err != nil {
		return err
	}
	defer adm.Close()
	admin := kadm.NewClient(adm)
	seg := strconv.FormatInt(o.segmentBytes, 10)
	topics := []struct {
		name    string
		configs map[string]*string
	}{
		{tieredTopic, map[string]*string{
			"remote.storage.enable": kadm.StringPtr("true"),
			"segment.bytes":         kadm.StringPtr(seg),
			"local.retention.bytes": kadm.StringPtr(strconv.FormatInt(o.localRetention, 10)),
			"retention.bytes":       kadm.StringPtr("-1"),
		}},
		{localTopic, map[string]*string{"segment.bytes": kadm.StringPtr(seg), "retention.bytes": kadm.StringPtr("-1")}},
	}
	for _, t := range topics {
		if err := benchadmin.CreateTopic(ctx, admin, t.name, o.partitions, t.configs); err != nil {
			return err
		}
		start := time.Now()
		if err := produce(ctx, o, t.name); err != nil {
			return fmt.Errorf("produce to %s: %w", t.name, err)
		}
		fmt.Printf("produced %d MB to %s in %.1f s\n", o.totalBytes/1e6, t.name, time.Since(start).Seconds())
	}
	start := time.Now()
	if err := waitTiered(ctx, adm, o); err != nil {
		return err
	}
	fmt.Printf("tiered topic below its local log start after %.1f s more\n", time.Since(start).Seconds())

	var remote, local []float64
	for round := range o.rounds {
		order := []string{localTopic, tieredTopic}
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, topic := range order {
			mbps, err := consume(ctx, o, admin, topic)
			if err != nil {
				return fmt.Errorf("round %d, consume %s: %w", round+1, topic, err)
			}
			fmt.Printf("round %d: %s %.1f MB/s\n", round+1, topic, mbps)
			if topic == tieredTopic {
				remote = append(remote, mbps)
			} else {
				local = append(local, mbps)
			}
		}
	}
	mr, ml := median(remote), median(local)
	fmt.Printf("median: remote %.1f MB/s, local %.1f MB/s, remote/local %.2f\n", mr, ml, mr/ml)
	return nil
}

// produce writes o.totalBytes of incompressible values to topic, acks=1.
func produce(ctx context.Context, o options, topic string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(o.bootstrap), kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, consumeTimeout)
	defer cancel()
	// A pool of random values, reused: incompressible, cheap to make.
	pool := make([]byte, 4<<20)
	rand.Read(pool)
	var failed error
	errs := make(chan error, 1)
	n := o.totalBytes / int64(o.recordBytes)
	for i := range n {
		off := (i * 7919 * int64(o.recordBytes)) % int64(len(pool)-o.recordBytes)
		cl.Produce(ctx, &kgo.Record{Value: pool[off : off+int64(o.recordBytes)]}, func(_ *kgo.Record, err error) {
			if err != nil {
				select {
				case errs <- err:
				default:
				}
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	select {
	case failed = <-errs:
	default:
	}
	return failed
}

// waitTiered waits until every partition of the tiered topic keeps
// locally at most two segments of records (the active one, which is never
// tiered, and one more that local retention may keep), and prints how
// much of the topic is then only in the bucket.
func waitTiered(ctx context.Context, cl *kgo.Client, o options) error {
	deadline := time.Now().Add(o.tierTimeout)
	localMaxRecords := 2 * o.segmentBytes / int64(o.recordBytes)
	for {
		ends, err := listTiered(ctx, cl, o.partitions, -1)
		if err != nil {
			return err
		}
		locals, err := listTiered(ctx, cl, o.partitions, -4)
		if err != nil {
			return err
		}
		done := true
		var remote, total int64
		for p := range o.partitions {
			if ends[p]-locals[p] > localMaxRecords {
				done = false
			}
			remote += locals[p]
			total += ends[p]
		}
		if done {
			fmt.Printf("%.1f%% of the tiered topic's records are only in the bucket\n", 100*float64(remote)/float64(total))
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s the local log starts are %v of ends %v: not tiered", o.tierTimeout, locals, ends)
		}
		time.Sleep(time.Second)
	}
}

// listTiered asks ListOffsets with timestamp ts for every partition of the
// tiered topic, within 10 s.
func listTiered(ctx context.Context, cl *kgo.Client, partitions int32, ts int64) ([]int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return benchadmin.ListOffsets(ctx, cl, tieredTopic, partitions, ts)
}

// consume reads topic from its start to its end, with franz-go's default
// fetch sizes (as `strata bench --mode consume`), and returns MB/s.
func consume(ctx context.Context, o options, admin *kadm.Client, topic string) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, consumeTimeout)
	defer cancel()
	ends, err := admin.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, err
	}
	from := map[int32]kgo.Offset{}
	endOf := map[int32]int64{}
	var target int64
	ends.Each(func(e kadm.ListedOffset) {
		from[e.Partition] = kgo.NewOffset().At(0)
		endOf[e.Partition] = e.Offset
		target += e.Offset
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(o.bootstrap),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: from}))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	var records, bytes int64
	start := time.Now()
	for records < target {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("read %d of %d records: %w", records, target, err)
		}
		for _, e := range fs.Errors() {
			return 0, fmt.Errorf("fetch %s[%d]: %w", e.Topic, e.Partition, e.Err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset < endOf[r.Partition] {
				records++
				bytes += int64(len(r.Value))
			}
		})
	}
	secs := time.Since(start).Seconds()
	if secs <= 0 {
		return 0, errors.New("no time passed")
	}
	return float64(bytes) / 1e6 / secs, nil
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

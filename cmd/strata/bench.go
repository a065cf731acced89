package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Limits that keep every benchmark bounded in time and memory.
const (
	benchMaxDuration     = 10 * time.Minute // longest send or consume phase
	benchFlushTimeout    = time.Minute      // for the last acks after sending stops
	benchDrainTimeout    = 30 * time.Second // for e2e records still in flight at the end
	benchWarmupTimeout   = 30 * time.Second
	benchMaxWarmup       = time.Minute
	benchDeliveryTimeout = 30 * time.Second // a record not acked by then fails the run
	benchMinRecordBytes  = 8                // room for the e2e send stamp
	benchMaxRecordBytes  = 512 << 10        // well under the default 1 MB batch limit
	benchMaxInflight     = 1 << 20
	benchMaxPartitions   = 10000
)

type benchFlags struct {
	bootstrap   string
	topic       string
	partitions  int32
	recordBytes int
	records     int64
	duration    time.Duration
	durationSet bool
	acks        string
	linger      time.Duration
	compression string
	mode        string
	rate        int
	inflight    int
	warmup      time.Duration
	json        bool
	// churnPartitions, when positive, makes the e2e run create and delete
	// a topic of this many partitions over and over (topicChurn).
	churnPartitions int32
	security        benchSecurity
	// conn are the connection options of security, set by runBench.
	conn []kgo.Opt
}

// benchGCPercent is the bench client's GOGC (see runBench).
const benchGCPercent = 400

func benchCmd() *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure produce/consume throughput and latency of any Kafka cluster",
		Long: `Measure a Kafka-compatible cluster (Strata, Kafka, Redpanda, kfake...).

Modes:
  produce  produce for --duration (or --records) with --inflight records in
           flight; report MB/s, records/s and ack latency (Produce call to
           acknowledgement) p50/p99/p999/max.
  consume  read the topic from its start to its end as of the start of the
           run (at most --records); report MB/s and records/s.
  e2e      produce at --rate with linger 0 while a consumer in this process
           reads the records; latency = receive time - send time stamped in
           the record value.
  all      produce, then consume, then e2e.

With --churn-partitions N, the e2e run creates and deletes a topic of N
partitions over and over while it measures, from a client of its own: the
latency of one topic's producers while others' topics come and go.

MB is 10^6 bytes, and only record values count. Every phase is bounded:
--duration is at most 10m, and a --records run stops at 10m (or at
--duration when it is given).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.durationSet = cmd.Flags().Changed("duration")
			if err := f.validate(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(ctxOrBackground(cmd.Context()), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return runBench(ctx, f, cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.bootstrap, "bootstrap", "127.0.0.1:9092", "comma-separated seed brokers")
	fl.StringVar(&f.topic, "topic", "strata-bench", "topic to use; created when missing")
	fl.Int32Var(&f.partitions, "partitions", 6, "partitions when creating the topic")
	fl.IntVar(&f.recordBytes, "record-bytes", 1024, "bytes in each record value")
	fl.Int64Var(&f.records, "records", 0, "records to send (produce, e2e) or read at most (consume); 0 = use --duration")
	fl.DurationVar(&f.duration, "duration", 10*time.Second, "how long to send (produce, e2e); at most 10m")
	fl.StringVar(&f.acks, "acks", "all", "all (idempotent), 1 or 0")
	fl.DurationVar(&f.linger, "linger", 5*time.Millisecond, "producer linger for produce mode (e2e always uses 0)")
	fl.StringVar(&f.compression, "compression", "none", "none, gzip, snappy, lz4 or zstd")
	fl.StringVar(&f.mode, "mode", "produce", "produce, consume, e2e or all")
	fl.IntVar(&f.rate, "rate", 0, "records/s to send, 0 = as fast as possible (use a rate for latency runs)")
	fl.DurationVar(&f.warmup, "warmup", 2*time.Second, "e2e, and produce at a --rate: send at the rate this long first, not counted, so the figures are the steady state's")
	fl.IntVar(&f.inflight, "inflight", 10000, "records produced but not yet acknowledged, at most")
	fl.BoolVar(&f.json, "json", false, "print one JSON line instead of text")
	fl.Int32Var(&f.churnPartitions, "churn-partitions", 0, "e2e: create and delete a topic of this many partitions over and over while measuring; 0 = none")
	f.security.register(fl)
	return cmd
}

func (f benchFlags) validate() error {
	switch {
	case f.bootstrap == "":
		return errors.New("--bootstrap is empty; give host:port of a broker")
	case f.topic == "":
		return errors.New("--topic is empty")
	case f.partitions < 1 || f.partitions > benchMaxPartitions:
		return fmt.Errorf("--partitions %d: use 1..%d", f.partitions, benchMaxPartitions)
	case f.recordBytes < benchMinRecordBytes || f.recordBytes > benchMaxRecordBytes:
		return fmt.Errorf("--record-bytes %d: use %d..%d", f.recordBytes, benchMinRecordBytes, benchMaxRecordBytes)
	case f.records < 0:
		return fmt.Errorf("--records %d: use 0 (run for --duration) or more", f.records)
	case f.duration <= 0 || f.duration > benchMaxDuration:
		return fmt.Errorf("--duration %s: use more than 0 and at most %s", f.duration, benchMaxDuration)
	case f.linger < 0 || f.linger > time.Second:
		return fmt.Errorf("--linger %s: use 0..1s", f.linger)
	case f.warmup < 0 || f.warmup > benchMaxWarmup:
		return fmt.Errorf("--warmup %s: use 0..%s", f.warmup, benchMaxWarmup)
	case f.rate < 0:
		return fmt.Errorf("--rate %d: use 0 (unlimited) or more", f.rate)
	case f.inflight < 1 || f.inflight > benchMaxInflight:
		return fmt.Errorf("--inflight %d: use 1..%d", f.inflight, benchMaxInflight)
	case f.churnPartitions < 0 || f.churnPartitions > benchMaxChurnPartitions:
		return fmt.Errorf("--churn-partitions %d: use 0 (none) or 1..%d", f.churnPartitions, benchMaxChurnPartitions)
	case f.churnPartitions > 0 && f.mode != "e2e" && f.mode != "all":
		return fmt.Errorf("--churn-partitions applies to the e2e run: use it with --mode e2e or all, not %s", f.mode)
	}
	if _, err := f.acksOpts(); err != nil {
		return err
	}
	if err := f.security.validate(); err != nil {
		return err
	}
	if _, err := compressionCodec(f.compression); err != nil {
		return err
	}
	switch f.mode {
	case "produce", "consume", "e2e", "all":
		return nil
	}
	return fmt.Errorf("--mode %q: use produce, consume, e2e or all", f.mode)
}

func (f benchFlags) acksOpts() ([]kgo.Opt, error) {
	switch f.acks {
	case "all", "-1":
		return []kgo.Opt{kgo.RequiredAcks(kgo.AllISRAcks())}, nil
	case "1":
		return []kgo.Opt{kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite()}, nil
	case "0":
		return []kgo.Opt{kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite()}, nil
	}
	return nil, fmt.Errorf("--acks %q: use all, 1 or 0", f.acks)
}

func compressionCodec(name string) (kgo.CompressionCodec, error) {
	switch name {
	case "none":
		return kgo.NoCompression(), nil
	case "gzip":
		return kgo.GzipCompression(), nil
	case "snappy":
		return kgo.SnappyCompression(), nil
	case "lz4":
		return kgo.Lz4Compression(), nil
	case "zstd":
		return kgo.ZstdCompression(), nil
	}
	return kgo.CompressionCodec{}, fmt.Errorf("--compression %q: use none, gzip, snappy, lz4 or zstd", name)
}

// sendTimeLimit is how long a produce or e2e phase may send: --duration,
// or for a --records run the 10 minute cap unless --duration was given.
func (f benchFlags) sendTimeLimit() time.Duration {
	if f.records > 0 && !f.durationSet {
		return benchMaxDuration
	}
	return f.duration
}

func (f benchFlags) seeds() []string {
	var s []string
	for _, b := range strings.Split(f.bootstrap, ",") {
		if b = strings.TrimSpace(b); b != "" {
			s = append(s, b)
		}
	}
	return s
}

func (f benchFlags) producer(linger time.Duration) (*kgo.Client, error) {
	acks, _ := f.acksOpts()
	codec, _ := compressionCodec(f.compression)
	opts := append([]kgo.Opt{
		kgo.SeedBrokers(f.seeds()...),
		kgo.DefaultProduceTopic(f.topic),
		kgo.ProducerLinger(linger),
		kgo.ProducerBatchCompression(codec),
		kgo.MaxBufferedRecords(f.inflight),
		kgo.RecordDeliveryTimeout(benchDeliveryTimeout),
	}, acks...)
	return kgo.NewClient(append(opts, f.conn...)...)
}

func (f benchFlags) consumer(from map[int32]kgo.Offset) (*kgo.Client, error) {
	return kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(f.seeds()...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{f.topic: from}),
	}, f.conn...)...)
}

// benchReport is the --json line; a phase that did not run is left out.
type benchReport struct {
	Bootstrap   string         `json:"bootstrap"`
	Topic       string         `json:"topic"`
	Partitions  int32          `json:"partitions"`
	RecordBytes int            `json:"record_bytes"`
	Acks        string         `json:"acks"`
	Idempotent  bool           `json:"idempotent"`
	LingerMs    float64        `json:"linger_ms"`
	Compression string         `json:"compression"`
	Rate        int            `json:"rate"`
	WarmupS     float64        `json:"warmup_s,omitempty"` // e2e: uncounted load before the measured one
	Produce     *produceReport `json:"produce,omitempty"`
	Consume     *consumeReport `json:"consume,omitempty"`
	E2E         *e2eReport     `json:"e2e,omitempty"`
}

type produceReport struct {
	Records       int64          `json:"records"`
	Bytes         int64          `json:"bytes"`
	Seconds       float64        `json:"seconds"`
	MBPerSec      float64        `json:"mb_per_s"`
	RecordsPerSec float64        `json:"records_per_s"`
	Ack           latencySummary `json:"ack_ms"`
}

type consumeReport struct {
	Records       int64   `json:"records"`
	Bytes         int64   `json:"bytes"`
	Seconds       float64 `json:"seconds"`
	MBPerSec      float64 `json:"mb_per_s"`
	RecordsPerSec float64 `json:"records_per_s"`
}

type e2eReport struct {
	Records       int64          `json:"records"`
	Seconds       float64        `json:"seconds"`
	RecordsPerSec float64        `json:"records_per_s"`
	E2E           latencySummary `json:"e2e_ms"`
	Ack           latencySummary `json:"ack_ms"`
	// ChurnCycles are the topics created and deleted meanwhile, each of
	// ChurnPartitions partitions (--churn-partitions).
	ChurnPartitions int32 `json:"churn_partitions,omitempty"`
	ChurnCycles     int64 `json:"churn_cycles,omitempty"`
}

func runBench(ctx context.Context, f benchFlags, out io.Writer) error {
	// The client measures the broker: collect its own garbage less often,
	// so its GC pauses do not show up as broker latency. GOGC, when set,
	// still wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(benchGCPercent)
	}
	rep := benchReport{
		Bootstrap: f.bootstrap, Topic: f.topic, Partitions: f.partitions, RecordBytes: f.recordBytes,
		Acks: f.acks, Idempotent: f.acks == "all" || f.acks == "-1", LingerMs: ms(f.linger),
		Compression: f.compression, Rate: f.rate,
	}
	if f.mode == "e2e" || f.mode == "all" || f.rate > 0 {
		rep.WarmupS = f.warmup.Seconds()
	}
	text := func(format string, a ...any) {
		if !f.json {
			fmt.Fprintf(out, format, a...)
		}
	}
	text("bench: %s topic %s, %d B records, acks %s (idempotent %v), linger %s, compression %s, rate %s\n",
		f.bootstrap, f.topic, f.recordBytes, f.acks, rep.Idempotent, f.linger, f.compression, rateString(f.rate))

	conn, err := f.security.opts()
	if err != nil {
		return err
	}
	f.conn = conn
	adm, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(f.seeds()...)}, f.conn...)...)
	if err != nil {
		return err
	}
	defer adm.Close()
	admin := kadm.NewClient(adm)
	if f.mode != "consume" {
		if err := ensureTopic(ctx, admin, f.topic, f.partitions); err != nil {
			return err
		}
	}

	if f.mode == "produce" || f.mode == "all" {
		r, err := benchProduce(ctx, f)
		if err != nil {
			return fmt.Errorf("produce: %w", err)
		}
		rep.Produce = r.report
		text("produce: %.1f MB/s, %.0f rec/s, ack %s (%d records in %.2f s)\n",
			r.report.MBPerSec, r.report.RecordsPerSec, latencyLine(r.ack), r.report.Records, r.report.Seconds)
	}
	if f.mode == "consume" || f.mode == "all" {
		r, err := benchConsume(ctx, f, admin)
		if err != nil {
			return fmt.Errorf("consume: %w", err)
		}
		rep.Consume = r
		text("consume: %.1f MB/s, %.0f rec/s (%d records in %.2f s)\n", r.MBPerSec, r.RecordsPerSec, r.Records, r.Seconds)
	}
	if f.mode == "e2e" || f.mode == "all" {
		r, err := benchE2E(ctx, f, admin)
		if err != nil {
			return fmt.Errorf("e2e: %w", err)
		}
		rep.E2E = r.report
		text("e2e: %.0f rec/s (rate %s), e2e %s, ack %s (%d records)\n",
			r.report.RecordsPerSec, rateString(f.rate), latencyLine(r.e2e), latencyLine(r.ack), r.report.Records)
		if f.churnPartitions > 0 {
			text("churn: %d topics of %d partitions created and deleted meanwhile\n", r.report.ChurnCycles, f.churnPartitions)
		}
	}
	if f.json {
		line, err := json.Marshal(rep)
		if err != nil {
			return err
		}
		fmt.Fprintln(out, string(line))
	}
	return nil
}

func rateString(rate int) string {
	if rate == 0 {
		return "unlimited"
	}
	return fmt.Sprintf("%d/s", rate)
}

// ensureTopic creates the topic unless it exists. The replication factor
// is the broker's default; a broker that cannot take "default" (-1) gets 1.
func ensureTopic(ctx context.Context, admin *kadm.Client, topic string, partitions int32) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	_, err := admin.CreateTopic(ctx, partitions, -1, nil, topic)
	if errors.Is(err, kerr.InvalidReplicationFactor) || errors.Is(err, kerr.InvalidRequest) {
		_, err = admin.CreateTopic(ctx, partitions, 1, nil, topic)
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, kerr.TopicAlreadyExists):
		return checkPartitions(ctx, admin, topic, partitions)
	}
	return fmt.Errorf("create topic %s: %w", topic, err)
}

// checkPartitions warns when an existing topic has another partition count
// than asked for: the run goes on, but its numbers are not comparable.
func checkPartitions(ctx context.Context, admin *kadm.Client, topic string, want int32) error {
	td, err := admin.ListTopics(ctx, topic)
	if err != nil {
		return fmt.Errorf("describe topic %s: %w", topic, err)
	}
	if got := len(td[topic].Partitions); got != int(want) {
		fmt.Fprintf(os.Stderr, "bench: topic %s exists with %d partitions, not %d\n", topic, got, want)
	}
	return nil
}

// sendPlan says what one producing phase sends.
type sendPlan struct {
	records   int64         // stop after this many; 0 = at timeLimit
	timeLimit time.Duration // stop sending by then, always
	rate      int           // records/s; 0 = as fast as the in-flight cap allows
	inflight  int
	// stampBase, when set, makes every value start with the nanoseconds
	// from stampBase to its Produce call, plus one (zero marks warm-up).
	stampBase *time.Time
	// warmUp stamps every value zero: sent like the measured records, not
	// counted (stampBase must be set too).
	warmUp bool
}

type sendResult struct {
	acked   int64
	bytes   int64
	elapsed time.Duration // first Produce call to last acknowledgement
	ack     *latencyHist
}

// send produces records until the plan says stop, then waits for every
// acknowledgement. Any failed record fails the phase: a throughput that
// counts only the survivors would flatter a broker that drops records.
func send(ctx context.Context, cl *kgo.Client, recordBytes int, p sendPlan) (sendResult, error) {
	payload := randomPayload(recordBytes)
	res := sendResult{ack: new(latencyHist)}
	var (
		acked, bytes, failed atomic.Int64
		firstErr             atomic.Pointer[error]
		wg                   sync.WaitGroup
	)
	sem := make(chan struct{}, p.inflight)
	free := newRecordPool(payload, p.stampBase != nil, p.inflight)
	start := time.Now()
	deadline := start.Add(p.timeLimit)
	var sent int64
sending:
	for p.records == 0 || sent < p.records {
		if p.rate > 0 {
			if err := pace(ctx, start, sent, p.rate, deadline); err != nil {
				break
			}
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			break sending
		}
		t0 := time.Now()
		if !t0.Before(deadline) {
			<-sem
			break
		}
		rec := free.get()
		if p.stampBase != nil {
			stamp := uint64(t0.Sub(*p.stampBase)) + 1
			if p.warmUp {
				stamp = 0
			}
			binary.BigEndian.PutUint64(rec.Value, stamp)
		}
		wg.Add(1)
		sent++
		cl.Produce(ctx, rec, func(r *kgo.Record, err error) {
			lat := time.Since(t0)
			if err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, &err)
			} else {
				res.ack.Record(lat)
				acked.Add(1)
				bytes.Add(int64(len(r.Value)))
			}
			free.put(r)
			<-sem
			wg.Done()
		})
	}
	fctx, cancel := context.WithTimeout(ctx, benchFlushTimeout)
	defer cancel()
	if err := cl.Flush(fctx); err != nil {
		return res, fmt.Errorf("after sending %d records, %d were not acknowledged within %s: %w",
			sent, sent-acked.Load()-failed.Load(), benchFlushTimeout, err)
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.acked, res.bytes = acked.Load(), bytes.Load()
	if n := failed.Load(); n > 0 {
		return res, fmt.Errorf("%d of %d records failed, first: %w", n, sent, *firstErr.Load())
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if p.records > 0 && sent < p.records {
		fmt.Fprintf(os.Stderr, "bench: stopped at the %s limit after %d of %d records\n", p.timeLimit, sent, p.records)
	}
	return res, nil
}

// pace sleeps until record n (0-based) is due at rate records/s after
// start. It does not sleep for less than a quarter millisecond: at high
// rates the records go out in small bursts, which keeps the schedule
// instead of drifting behind by the timer's granularity on every record.
func pace(ctx context.Context, start time.Time, n int64, rate int, deadline time.Time) error {
	due := start.Add(time.Duration(float64(n) / float64(rate) * float64(time.Second)))
	wait := time.Until(due)
	if wait < 250*time.Microsecond {
		return nil
	}
	if due.After(deadline) {
		return errors.New("past the deadline")
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// randomPayload is incompressible filler from a fixed seed, so every run
// and every broker sees the same bytes.
func randomPayload(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

type produceResult struct {
	report *produceReport
	ack    *latencyHist
}

func benchProduce(ctx context.Context, f benchFlags) (produceResult, error) {
	cl, err := f.producer(f.linger)
	if err != nil {
		return produceResult{}, err
	}
	defer cl.Close()
	if f.rate > 0 && f.warmup > 0 {
		// A latency run at a rate measures the steady state, as e2e does.
		if _, err := send(ctx, cl, f.recordBytes, sendPlan{timeLimit: f.warmup, rate: f.rate, inflight: f.inflight}); err != nil {
			return produceResult{}, fmt.Errorf("warm-up at the rate: %w", err)
		}
	}
	r, err := send(ctx, cl, f.recordBytes, sendPlan{
		records: f.records, timeLimit: f.sendTimeLimit(), rate: f.rate, inflight: f.inflight,
	})
	if err != nil {
		return produceResult{}, err
	}
	mbps, rps := rates(r.bytes, r.acked, r.elapsed)
	return produceResult{
		report: &produceReport{
			Records: r.acked, Bytes: r.bytes, Seconds: r.elapsed.Seconds(),
			MBPerSec: mbps, RecordsPerSec: rps, Ack: summarize(r.ack),
		},
		ack: r.ack,
	}, nil
}

// partitionRange is the offsets [start, end) of one partition to read.
type partitionRange struct{ start, end int64 }

// topicRanges lists every partition's [log start, high watermark).
func topicRanges(ctx context.Context, admin *kadm.Client, topic string) (map[int32]partitionRange, error) {
	starts, err := admin.ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	if errors.Is(err, kerr.UnknownTopicOrPartition) {
		return nil, fmt.Errorf("topic %s does not exist; produce to it first", topic)
	}
	if err != nil {
		return nil, fmt.Errorf("list start offsets of %s: %w", topic, err)
	}
	ends, err := admin.ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("list end offsets of %s: %w", topic, err)
	}
	ranges := map[int32]partitionRange{}
	starts.Each(func(o kadm.ListedOffset) {
		if e, ok := ends.Lookup(topic, o.Partition); ok && o.Topic == topic {
			ranges[o.Partition] = partitionRange{o.Offset, max(e.Offset, o.Offset)}
		}
	})
	if len(ranges) == 0 {
		return nil, fmt.Errorf("topic %s does not exist", topic)
	}
	return ranges, nil
}

func benchConsume(ctx context.Context, f benchFlags, admin *kadm.Client) (*consumeReport, error) {
	ctx, cancel := context.WithTimeout(ctx, benchMaxDuration)
	defer cancel()
	ranges, err := topicRanges(ctx, admin, f.topic)
	if err != nil {
		return nil, err
	}
	from := map[int32]kgo.Offset{}
	var target int64
	for p, r := range ranges {
		from[p] = kgo.NewOffset().At(r.start)
		target += r.end - r.start
	}
	if f.records > 0 {
		target = min(target, f.records)
	}
	if target == 0 {
		return nil, fmt.Errorf("topic %s is empty; produce to it first", f.topic)
	}
	cl, err := f.consumer(from)
	if err != nil {
		return nil, err
	}
	defer cl.Close()

	var records, bytes int64
	start := time.Now()
	for records < target {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read %d of %d records before the %s limit: %w", records, target, benchMaxDuration, err)
		}
		if err := fetchError(fs); err != nil {
			return nil, err
		}
		fs.EachRecord(func(r *kgo.Record) {
			if rg, ok := ranges[r.Partition]; ok && r.Offset < rg.end && records < target {
				records++
				bytes += int64(len(r.Value))
			}
		})
	}
	elapsed := time.Since(start)
	mbps, rps := rates(bytes, records, elapsed)
	return &consumeReport{Records: records, Bytes: bytes, Seconds: elapsed.Seconds(), MBPerSec: mbps, RecordsPerSec: rps}, nil
}

// fetchError is the first error in a poll, if any; kgo has already retried
// whatever it could, so what comes back here ends the run.
func fetchError(fs kgo.Fetches) error {
	for _, e := range fs.Errors() {
		return fmt.Errorf("fetch %s[%d]: %w", e.Topic, e.Partition, e.Err)
	}
	return nil
}

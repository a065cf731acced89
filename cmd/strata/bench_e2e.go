package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// e2eResult is what an e2e phase measured: its report and the histograms
// behind it.
type e2eResult struct {
	report *e2eReport
	e2e    *latencyHist
	ack    *latencyHist
}

// e2eReader counts what the e2e consumer has read.
type e2eReader struct {
	lat     latencyHist
	warm    atomic.Int64 // warm-up records (stamp 0)
	timed   atomic.Int64 // stamped records
	err     atomic.Pointer[error]
	stopped chan struct{}
}

func (rd *e2eReader) run(ctx context.Context, cl *kgo.Client, base time.Time) {
	defer close(rd.stopped)
	for {
		fs := cl.PollFetches(ctx)
		if fs.IsClientClosed() || ctx.Err() != nil {
			return
		}
		if err := fetchError(fs); err != nil {
			rd.err.Store(&err)
			return
		}
		now := time.Since(base)
		fs.EachRecord(func(r *kgo.Record) {
			if len(r.Value) < 8 {
				return // not ours
			}
			stamp := binary.BigEndian.Uint64(r.Value)
			if stamp == 0 {
				rd.warm.Add(1)
				return
			}
			rd.lat.Record(now - time.Duration(stamp-1))
			rd.timed.Add(1)
		})
	}
}

// waitFor waits until count reaches n, the reader fails, or the timeout.
func (rd *e2eReader) waitFor(ctx context.Context, count *atomic.Int64, n int64, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for count.Load() < n {
		if e := rd.err.Load(); e != nil {
			return *e
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("consumer read %d of %d records within %s", count.Load(), n, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-rd.stopped:
			return errors.New("consumer stopped")
		case <-time.After(2 * time.Millisecond):
		}
	}
	return nil
}

// benchE2E runs a consumer from the current end of the topic, warms both
// clients up (connections, metadata, fetch sessions) with records stamped
// 0, then produces stamped records at --rate with linger 0.
func benchE2E(ctx context.Context, f benchFlags, admin *kadm.Client) (e2eResult, error) {
	ranges, err := topicRanges(ctx, admin, f.topic)
	if err != nil {
		return e2eResult{}, err
	}
	from := map[int32]kgo.Offset{}
	for p, r := range ranges {
		from[p] = kgo.NewOffset().At(r.end)
	}
	cons, err := f.consumer(from)
	if err != nil {
		return e2eResult{}, err
	}
	prod, err := f.producer(0)
	if err != nil {
		cons.Close()
		return e2eResult{}, err
	}
	defer prod.Close()

	rctx, stopReader := context.WithCancel(ctx)
	rd := &e2eReader{stopped: make(chan struct{})}
	base := time.Now()
	go rd.run(rctx, cons, base)
	defer func() {
		stopReader()
		cons.Close()
		<-rd.stopped
	}()

	warm := 4 * int64(len(ranges))
	if err := warmUp(ctx, prod, f.recordBytes, warm); err != nil {
		return e2eResult{}, err
	}
	if err := rd.waitFor(ctx, &rd.warm, warm, benchWarmupTimeout); err != nil {
		return e2eResult{}, fmt.Errorf("warm-up: %w", err)
	}
	if f.warmup > 0 {
		// The first second of a fresh client is not the steady state:
		// its heap, buffers and batches grow, and the broker's files are
		// new. Run the load itself, uncounted, until both sides are warm.
		w, err := send(ctx, prod, f.recordBytes, sendPlan{
			timeLimit: f.warmup, rate: f.rate, inflight: f.inflight, stampBase: &base, warmUp: true,
		})
		if err != nil {
			return e2eResult{}, fmt.Errorf("warm-up at the rate: %w", err)
		}
		if err := rd.waitFor(ctx, &rd.warm, warm+w.acked, benchDrainTimeout); err != nil {
			return e2eResult{}, fmt.Errorf("warm-up at the rate: %w", err)
		}
	}

	var churn *topicChurn
	if f.churnPartitions > 0 {
		churn = startTopicChurn(ctx, admin, f.topic, f.churnPartitions)
	}
	r, err := send(ctx, prod, f.recordBytes, sendPlan{
		records: f.records, timeLimit: f.sendTimeLimit(), rate: f.rate, inflight: f.inflight, stampBase: &base,
	})
	var churned int64
	if churn != nil {
		var cerr error
		churned, cerr = churn.stop()
		err = errors.Join(err, cerr)
	}
	if err != nil {
		return e2eResult{}, err
	}
	if err := rd.waitFor(ctx, &rd.timed, r.acked, benchDrainTimeout); err != nil {
		return e2eResult{}, err
	}
	_, rps := rates(r.bytes, r.acked, r.elapsed)
	return e2eResult{
		report: &e2eReport{
			Records: r.acked, Seconds: r.elapsed.Seconds(), RecordsPerSec: rps,
			E2E: summarize(&rd.lat), Ack: summarize(r.ack),
			ChurnPartitions: f.churnPartitions, ChurnCycles: churned,
		},
		e2e: &rd.lat,
		ack: r.ack,
	}, nil
}

// warmUp produces n records stamped 0, keyed so they spread over the
// partitions, and waits for their acknowledgements.
func warmUp(ctx context.Context, cl *kgo.Client, recordBytes int, n int64) error {
	rs := make([]*kgo.Record, n)
	for i := range rs {
		rs[i] = &kgo.Record{Key: fmt.Appendf(nil, "warm-up-%d", i), Value: make([]byte, recordBytes)}
	}
	ctx, cancel := context.WithTimeout(ctx, benchWarmupTimeout)
	defer cancel()
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		return fmt.Errorf("warm-up produce: %w", err)
	}
	return nil
}

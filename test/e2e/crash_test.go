package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestCrashKeepsAcknowledgedRecords runs four idempotent acks=all producers,
// crashes the broker with SIGKILL twice while they write, restarts it on the
// same port and directory each time, and then reads everything back. Every
// acknowledged record must be there exactly once; an unacknowledged one may
// be there or not, but at most once; and each producer's records appear in
// the order it produced them.
func TestCrashKeepsAcknowledgedRecords(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	const topic, producers = "crash", 4
	createTopic(t, newAdmin(t, b.Addr), topic, producers, nil)

	fleet := startCrashFleet(t, b.Addr, topic, producers)
	for crash := 1; crash <= 2; crash++ {
		time.Sleep(1500 * time.Millisecond)
		acked := fleet.acked()
		if acked == 0 {
			fleet.halt()
			t.Fatalf("crash %d: no record acknowledged in 1.5s before the crash", crash)
		}
		b.Kill()
		t.Logf("crash %d: killed the broker with %d records acknowledged", crash, acked)
		b.Restart()
		// Writing must resume after the restart.
		deadline := time.Now().Add(20 * time.Second)
		for fleet.acked() <= acked && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if fleet.acked() <= acked {
			fleet.halt()
			t.Fatalf("crash %d: no record acknowledged within 20s of the restart", crash)
		}
	}
	time.Sleep(500 * time.Millisecond)
	fleet.halt()
	fleet.flush(t)

	got := consumeAll(t, b.Addr, topic)
	for _, w := range fleet.writers {
		w.check(t, got[int32(w.id)])
	}
}

// crashFleet is n crashProducers writing topic, producer i only to
// partition i, so that a partition's log order is its producer's order.
type crashFleet struct {
	writers []*crashProducer
	wg      sync.WaitGroup
	stop    chan struct{}
}

// startCrashFleet starts the producers of a fleet; halt stops them.
func startCrashFleet(t *testing.T, addr, topic string, n int) *crashFleet {
	t.Helper()
	f := &crashFleet{writers: make([]*crashProducer, n), stop: make(chan struct{})}
	for i := range f.writers {
		f.writers[i] = newCrashProducer(i, newClient(t, addr,
			kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.MaxBufferedRecords(2000),
			kgo.RecordDeliveryTimeout(40*time.Second),
			kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
		))
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			f.writers[i].run(topic, f.stop)
		}()
	}
	return f
}

// acked is the records the fleet has had acknowledged so far.
func (f *crashFleet) acked() int {
	n := 0
	for _, w := range f.writers {
		n += w.ackedCount()
	}
	return n
}

// halt stops producing new records and waits for the producers' loops.
func (f *crashFleet) halt() {
	close(f.stop)
	f.wg.Wait()
}

// flush waits for every record handed to a client to be acknowledged or
// failed.
func (f *crashFleet) flush(t *testing.T) {
	t.Helper()
	for _, w := range f.writers {
		ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
		err := w.cl.Flush(ctx)
		cancel()
		if err != nil {
			t.Fatalf("producer %d: flush: %v", w.id, err)
		}
	}
}

// crashProducer writes values p<id>-<seq> with seq 0, 1, 2, … and remembers
// which were acknowledged.
type crashProducer struct {
	id int
	cl *kgo.Client

	mu struct {
		sync.Mutex
		produced int
		acked    map[int]bool
		failed   int
		firstErr error
	}
}

// A producer writes at most recordsPerMs records a millisecond and at most
// maxRecordsPerProducer in all, which bounds the log however fast the broker.
const (
	recordsPerMs          = 10
	maxRecordsPerProducer = 100_000
)

func newCrashProducer(id int, cl *kgo.Client) *crashProducer {
	p := &crashProducer{id: id, cl: cl}
	p.mu.acked = make(map[int]bool)
	return p
}

func (p *crashProducer) run(topic string, stop <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-stop
		cancel()
	}()
	for seq := 0; seq < maxRecordsPerProducer; seq++ {
		select {
		case <-stop:
			return
		default:
		}
		r := &kgo.Record{
			Topic:     topic,
			Partition: int32(p.id),
			Key:       fmt.Appendf(nil, "p%d", p.id),
			Value:     []byte(crashValue(p.id, seq)),
		}
		// Produce blocks while the buffer is full (the broker is down); a
		// cancelled ctx only fails this record, which is never retried by us.
		p.cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			p.mu.Lock()
			defer p.mu.Unlock()
			if err == nil {
				p.mu.acked[seq] = true
			} else {
				p.mu.failed++
				if p.mu.firstErr == nil {
					p.mu.firstErr = err
				}
			}
		})
		p.mu.Lock()
		p.mu.produced = seq + 1
		p.mu.Unlock()
		if seq%recordsPerMs == recordsPerMs-1 {
			time.Sleep(time.Millisecond)
		}
	}
}

func (p *crashProducer) ackedCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.mu.acked)
}

// check verifies one producer's partition: values parse as this producer's,
// sequence numbers strictly increase (no duplicate, no reordering), and every
// acknowledged one is present.
func (p *crashProducer) check(t *testing.T, records []*kgo.Record) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	present := make(map[int]bool, len(records))
	last := -1
	for _, r := range records {
		seq := crashSeq(t, p.id, r)
		if seq <= last {
			t.Fatalf("producer %d: seq %d at offset %d after seq %d (duplicate or reordered)", p.id, seq, r.Offset, last)
		}
		last = seq
		present[seq] = true
	}
	missing := 0
	for seq := range p.mu.acked {
		if !present[seq] {
			if missing < 5 {
				t.Errorf("producer %d: acknowledged record %s is missing", p.id, crashValue(p.id, seq))
			}
			missing++
		}
	}
	if missing > 0 {
		t.Fatalf("producer %d: %d of %d acknowledged records missing", p.id, missing, len(p.mu.acked))
	}
	t.Logf("producer %d: produced %d, acknowledged %d, failed %d (first: %v), in log %d",
		p.id, p.mu.produced, len(p.mu.acked), p.mu.failed, p.mu.firstErr, len(records))
}

func crashValue(id, seq int) string { return fmt.Sprintf("p%d-%08d", id, seq) }

// crashSeq is the sequence number in r, a record of producer id.
func crashSeq(t *testing.T, id int, r *kgo.Record) int {
	t.Helper()
	var got, seq int
	if _, err := fmt.Sscanf(string(r.Value), "p%d-%d", &got, &seq); err != nil || got != id {
		t.Fatalf("partition %d offset %d holds %q, not a record of producer %d", r.Partition, r.Offset, r.Value, id)
	}
	return seq
}

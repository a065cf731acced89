package e2e

import (
	"encoding/binary"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestIdempotentProducerSurvivesDroppedConnections sends an idempotent
// producer through a proxy that drops the connection around produce requests,
// often after the broker has written the batch. The client retries those
// batches with the same sequence numbers; the broker must answer the retry
// without appending again, so each value is in the log exactly once, in
// produce order.
func TestIdempotentProducerSurvivesDroppedConnections(t *testing.T) {
	t.Parallel()
	proxy := newDropProxy(t, 0.2, 60)
	// The broker advertises the proxy, so every connection the client opens
	// after bootstrapping also goes through it.
	b := startBroker(t, t.TempDir(), "advertised.listeners=PLAINTEXT://"+proxy.Addr())
	proxy.SetTarget(b.Addr)

	const topic, partitions, n = "idempotent", 3, 2000
	createTopic(t, newAdmin(t, proxy.Addr()), topic, partitions, nil)

	meta, err := newAdmin(t, proxy.Addr()).BrokerMetadata(testContext(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(meta.Brokers) != 1 || net.JoinHostPort(meta.Brokers[0].Host, strconv.Itoa(int(meta.Brokers[0].Port))) != proxy.Addr() {
		t.Fatalf("metadata advertises %+v, want only %s (advertised.listeners)", meta.Brokers, proxy.Addr())
	}

	producer := newClient(t, proxy.Addr(),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }),
		kgo.MaxBufferedRecords(200),
	)
	proxy.StartDropping()
	want := make(map[int32][]string)
	var records []*kgo.Record
	for i := range n {
		r := &kgo.Record{Topic: topic, Partition: int32(i % partitions), Value: []byte(value("idem", i))}
		want[r.Partition] = append(want[r.Partition], string(r.Value))
		records = append(records, r)
	}
	// Many small produce calls give the proxy many requests to cut.
	for start := 0; start < n; start += 10 {
		produceSync(t, producer, records[start:start+10]...)
	}
	proxy.StopDropping()
	if d := proxy.Drops(); d == 0 {
		t.Fatalf("the proxy dropped no connection; the test proved nothing")
	} else {
		t.Logf("proxy dropped %d connections around produce requests", d)
	}

	got := consumeAll(t, proxy.Addr(), topic)
	for p := int32(0); p < partitions; p++ {
		requireOffsetsContiguous(t, got[p], 0)
		if len(got[p]) != len(want[p]) {
			t.Errorf("partition %d holds %d records, want %d", p, len(got[p]), len(want[p]))
		}
		for i := 0; i < len(got[p]) && i < len(want[p]); i++ {
			if v := string(got[p][i].Value); v != want[p][i] {
				t.Fatalf("partition %d offset %d holds %q, want %q (duplicate or reordered batch)", p, i, v, want[p][i])
			}
		}
	}
}

// dropProxy forwards TCP bytes unchanged between clients and one broker. It
// reads the client→broker direction as Kafka frames; while dropping is on,
// after some produce requests (api key 0) it closes both sides, at one of
// three points: halfway through forwarding the request, right after it, or
// a few milliseconds after it (often mid-response).
type dropProxy struct {
	t        *testing.T
	ln       net.Listener
	dropProb float64
	maxDrops int64

	target   atomic.Pointer[string]
	dropping atomic.Bool
	drops    atomic.Int64
	wg       sync.WaitGroup

	mu struct {
		sync.Mutex
		rng    *rand.Rand
		conns  map[net.Conn]struct{}
		closed bool
	}
}

func newDropProxy(t *testing.T, dropProb float64, maxDrops int64) *dropProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &dropProxy{t: t, ln: ln, dropProb: dropProb, maxDrops: maxDrops}
	seed := uint64(time.Now().UnixNano())
	t.Logf("drop proxy seed %d", seed)
	p.mu.rng = rand.New(rand.NewPCG(seed, 0x5eed))
	p.mu.conns = make(map[net.Conn]struct{})
	p.wg.Add(1)
	go p.acceptLoop()
	t.Cleanup(p.Close)
	return p
}

func (p *dropProxy) Addr() string          { return p.ln.Addr().String() }
func (p *dropProxy) SetTarget(addr string) { p.target.Store(&addr) }
func (p *dropProxy) StartDropping()        { p.dropping.Store(true) }
func (p *dropProxy) StopDropping()         { p.dropping.Store(false) }
func (p *dropProxy) Drops() int64          { return p.drops.Load() }

// Close stops accepting, closes every connection and waits for the pumps.
func (p *dropProxy) Close() {
	p.mu.Lock()
	p.mu.closed = true
	for c := range p.mu.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.ln.Close()
	p.wg.Wait()
}

func (p *dropProxy) acceptLoop() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		target := p.target.Load()
		if target == nil {
			client.Close()
			continue
		}
		broker, err := net.DialTimeout("tcp", *target, clientDialTimeout)
		if err != nil {
			client.Close()
			continue
		}
		if !p.track(client, broker) {
			return
		}
		p.wg.Add(2)
		go func() {
			defer p.wg.Done()
			p.pumpRequests(client, broker)
			p.closePair(client, broker)
		}()
		go func() {
			defer p.wg.Done()
			_, _ = io.Copy(client, broker)
			p.closePair(client, broker)
		}()
	}
}

func (p *dropProxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.closed {
		for _, c := range conns {
			c.Close()
		}
		return false
	}
	for _, c := range conns {
		p.mu.conns[c] = struct{}{}
	}
	return true
}

func (p *dropProxy) closePair(a, b net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range []net.Conn{a, b} {
		c.Close()
		delete(p.mu.conns, c)
	}
}

// dropPoint is where a connection is cut relative to a produce request.
type dropPoint int

const (
	keepConnection dropPoint = iota + 1
	dropMidRequest
	dropAfterRequest
	dropAfterDelay
)

// decide picks whether and where to cut after a produce request.
func (p *dropProxy) decide() (dropPoint, time.Duration) {
	if !p.dropping.Load() || p.drops.Load() >= p.maxDrops {
		return keepConnection, 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.rng.Float64() >= p.dropProb {
		return keepConnection, 0
	}
	switch p.mu.rng.IntN(4) {
	case 0:
		return dropMidRequest, 0
	case 1:
		return dropAfterRequest, 0
	default:
		return dropAfterDelay, time.Duration(p.mu.rng.IntN(5000)) * time.Microsecond
	}
}

// pumpRequests forwards whole frames from client to broker until an error or
// a decided drop.
func (p *dropProxy) pumpRequests(client, broker net.Conn) {
	const maxFrameBytes = 100 << 20
	var sizeBuf [4]byte
	for {
		if _, err := io.ReadFull(client, sizeBuf[:]); err != nil {
			return
		}
		size := binary.BigEndian.Uint32(sizeBuf[:])
		if size < 2 || size > maxFrameBytes {
			return
		}
		frame := make([]byte, 4+size)
		copy(frame, sizeBuf[:])
		if _, err := io.ReadFull(client, frame[4:]); err != nil {
			return
		}
		apiKey := int16(binary.BigEndian.Uint16(frame[4:6]))
		point, delay := keepConnection, time.Duration(0)
		if apiKey == 0 {
			point, delay = p.decide()
		}
		switch point {
		case dropMidRequest:
			_, _ = broker.Write(frame[:4+size/2])
			p.drops.Add(1)
			return
		case dropAfterRequest, dropAfterDelay:
			_, _ = broker.Write(frame)
			time.Sleep(delay)
			p.drops.Add(1)
			return
		}
		if _, err := broker.Write(frame); err != nil {
			return
		}
	}
}

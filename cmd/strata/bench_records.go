package main

import (
	"github.com/twmb/franz-go/pkg/kgo"
)

// recordPool recycles the records of a producing phase. A stamped value is
// written per record, so each in-flight record needs a value of its own; at
// 100,000 records/s allocating them would feed the client's garbage
// collector 100 MB/s and its pauses would show up as broker latency. A
// record comes back once its promise has run, when the client no longer
// holds it.
type recordPool struct {
	payload []byte
	stamped bool // every record gets its own copy of payload
	free    chan *kgo.Record
}

func newRecordPool(payload []byte, stamped bool, capacity int) *recordPool {
	return &recordPool{payload: payload, stamped: stamped, free: make(chan *kgo.Record, capacity)}
}

func (p *recordPool) get() *kgo.Record {
	select {
	case r := <-p.free:
		return r
	default:
	}
	value := p.payload
	if p.stamped {
		value = append([]byte(nil), p.payload...)
	}
	return &kgo.Record{Value: value}
}

// put returns r for reuse; the client is done with it. Only the value is
// kept: the client filled in the partition, offset and timestamp.
func (p *recordPool) put(r *kgo.Record) {
	*r = kgo.Record{Value: r.Value}
	select {
	case p.free <- r:
	default:
	}
}

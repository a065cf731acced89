package broker

import (
	"errors"
	"math"
	"sync"
	"time"

	"github.com/strata-broker/strata/internal/partition"
)

// cleanerPool runs the log cleaner's goroutines with the options it was
// last given (Options.Cleaner at start, then SetCleanerOptions, Kafka's
// dynamic log.cleaner.* configs): a supervisor goroutine starts the
// threads the options want that are not running; a thread whose index is
// past the options' count stops after its pass; each takes the new
// backoff, key map share and rate at its next pass.
type cleanerPool struct {
	throttle *ioThrottle // nil until the cleaner starts
	mu       sync.Mutex
	opts     CleanerOptions
	alive    []bool        // by thread index
	changed  chan struct{} // closed and replaced at each change: wakes the sleeping threads
	wake     chan struct{} // tells the supervisor to start missing threads
}

// startCleaner starts the log cleaner with o.
func (b *Broker) startCleaner(o CleanerOptions) {
	p := &b.cleaners
	p.throttle = newIOThrottle(b.opts.Clock)
	p.throttle.setRate(rateOrUnlimited(o.IOBytesPerSecond))
	p.opts, p.changed, p.wake = o, make(chan struct{}), make(chan struct{}, 1)
	b.done.Add(1)
	go func() {
		defer b.done.Done()
		for {
			b.startMissingCleaners()
			select {
			case <-b.stop:
				return
			case <-p.wake:
			}
		}
	}()
}

// SetCleanerOptions gives the running cleaner new options: the threads
// follow at their next pass (a sleeping thread at once). It fails when the
// broker runs no cleaner (Options.Cleaner was nil) or o is unusable.
func (b *Broker) SetCleanerOptions(o CleanerOptions) error {
	if err := o.Validate(); err != nil {
		return err
	}
	p := &b.cleaners
	if p.throttle == nil {
		return errNoCleaner
	}
	p.throttle.setRate(rateOrUnlimited(o.IOBytesPerSecond))
	p.mu.Lock()
	p.opts = o
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
	return nil
}

// CleanerOptions is what the running cleaner was last given; ok is false
// when the broker runs none.
func (b *Broker) CleanerOptions() (o CleanerOptions, ok bool) {
	p := &b.cleaners
	if p.throttle == nil {
		return CleanerOptions{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.opts, true
}

// startMissingCleaners starts the threads the options want that are not
// running. Only the supervisor calls it, so done's count is above zero.
func (b *Broker) startMissingCleaners() {
	p := &b.cleaners
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.opts.threads() {
		if i >= len(p.alive) {
			p.alive = append(p.alive, false)
		}
		if !p.alive[i] {
			p.alive[i] = true
			b.done.Add(1)
			go b.runCleaner(i)
		}
	}
}

// next is what thread i does next: its options and the channel that tells
// of the next change, or stop when the options want fewer threads (it is
// then counted out).
func (p *cleanerPool) next(i int) (o CleanerOptions, changed <-chan struct{}, stop bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i >= p.opts.threads() {
		p.alive[i] = false
		return CleanerOptions{}, nil, true
	}
	return p.opts, p.changed, false
}

// runCleaner is cleaner thread i: it cleans the dirtiest compacted
// partition that no other thread is cleaning, again and again, and sleeps
// for the backoff once none needs it, until the broker stops or the
// options want fewer threads.
func (b *Broker) runCleaner(i int) {
	defer b.done.Done()
	var cm *partition.CleanerMap // allocated at the first pass that needs it
	var cmBytes int64
	for {
		o, changed, stop := b.cleaners.next(i)
		if stop {
			return
		}
		if cm != nil && cmBytes != o.mapBytes() {
			cm = nil // the share changed: a new map at the next pass
		}
		cmBytes = o.mapBytes()
		if b.cleanDirtiest(&cm, cmBytes) {
			select {
			case <-b.stop:
				return
			default:
			}
			continue
		}
		timer := time.NewTimer(o.Backoff)
		select {
		case <-b.stop:
			timer.Stop()
			return
		case <-changed:
		case <-timer.C:
		}
		timer.Stop()
	}
}

var errNoCleaner = errors.New("broker: the log cleaner is not running (log.cleaner.enable=false or log.cleaner.threads=0 at start)")

// rateOrUnlimited is the throttle's rate for IOBytesPerSecond (0: none).
func rateOrUnlimited(r float64) float64 {
	if r <= 0 {
		return math.MaxFloat64
	}
	return r
}

package runtime

import (
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Client identifies who sent an op.
type Client struct {
	ID   string // the request header's client id
	Host string // the connection's remote address
	// TopicVisible reports whether the client may see (DESCRIBE) a topic;
	// nil when it may see every topic.
	TopicVisible func(topic string) bool
}

// Runtime runs the coordinator partitions this broker leads, one goroutine
// each. Safe for concurrent use.
type Runtime struct {
	opts Options
	log  *slog.Logger
	mu   struct {
		sync.Mutex
		parts  map[int32]*partition
		closed bool
	}
}

// New returns a runtime that leads no partition yet.
func New(opts Options) (*Runtime, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.After == nil {
		opts.After = time.After
	}
	r := &Runtime{opts: opts, log: opts.Logger}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	r.mu.parts = map[int32]*partition{}
	return r, nil
}

// Start makes this broker the coordinator of partition p: a goroutine loads
// it and then serves its ops. Starting a partition already started is a
// no-op.
func (r *Runtime) Start(p int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.closed || r.mu.parts[p] != nil {
		return
	}
	part := newPartition(r, p)
	r.mu.parts[p] = part
	go part.run()
}

// Resign stops serving partition p and returns when its goroutine has
// exited; its outstanding ops are answered NOT_COORDINATOR.
func (r *Runtime) Resign(p int32) {
	r.mu.Lock()
	part := r.mu.parts[p]
	delete(r.mu.parts, p)
	r.mu.Unlock()
	if part != nil {
		part.stopAndWait()
	}
}

// Close resigns every partition; later Starts are ignored.
func (r *Runtime) Close() {
	r.mu.Lock()
	r.mu.closed = true
	parts := r.mu.parts
	r.mu.parts = map[int32]*partition{}
	r.mu.Unlock()
	for _, p := range slices.Sorted(maps.Keys(parts)) {
		parts[p].stopAndWait()
	}
}

// Hosted is the partitions this runtime serves (loading or loaded), in
// order: the ones a broker answers list requests for.
func (r *Runtime) Hosted() []int32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.mu.parts))
}

// Submit hands req for partition p to its goroutine. done is called exactly
// once with the response: from the partition's goroutine once the op's
// records are durable, or at once from the caller's goroutine when the op
// cannot be taken (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
// COORDINATOR_NOT_AVAILABLE when the queue is full). done must not block.
func (r *Runtime) Submit(p int32, req kmsg.Request, client Client, done func(kmsg.Response)) {
	r.mu.Lock()
	part := r.mu.parts[p]
	r.mu.Unlock()
	if part == nil {
		done(r.opts.ErrorResponse(req, kerr.NotCoordinator.Code))
		return
	}
	if code := part.enqueue(queued{req: req, client: client, done: done}); code != 0 {
		done(r.opts.ErrorResponse(req, code))
	}
}

// CodeError is the error an event fails with when the runtime cannot run
// it: Code is NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS or
// COORDINATOR_NOT_AVAILABLE, as for a request.
type CodeError struct{ Code int16 }

func (e *CodeError) Error() string {
	if err := kerr.ErrorForCode(e.Code); err != nil {
		return "runtime: event not run: " + err.Error()
	}
	return "runtime: event not run"
}

// SubmitEvent hands an event of the broker's own (Op.Event) to partition
// p's goroutine, as Submit does a request. done is called exactly once:
// with the shard's Reply.Err once the event's records are durable, or with
// a *CodeError when the event cannot be taken or its append fails. done
// must not block.
func (r *Runtime) SubmitEvent(p int32, ev any, done func(error)) {
	r.mu.Lock()
	part := r.mu.parts[p]
	r.mu.Unlock()
	if part == nil {
		done(&CodeError{Code: kerr.NotCoordinator.Code})
		return
	}
	if code := part.enqueue(queued{event: ev, doneEvent: done}); code != 0 {
		done(&CodeError{Code: code})
	}
}

package markers

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/group"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
	"github.com/strata-broker/strata/internal/coordinator/txn"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/partition/producers"
)

// maxBackoff caps the wait between two attempts at one marker.
const maxBackoff = time.Minute

// MarkerAppender is the part of a partition that takes a marker.
type MarkerAppender interface {
	AppendMarker(pid base.ProducerID, epoch int16, commit bool, coordinatorEpoch int32) (base.Offset, func() error, error)
}

// Options wire a Writer.
type Options struct {
	// Partition returns where the marker of tp goes: the partition when
	// it is led here, a MarkerAppender that sends the marker to its leader
	// (a WriteTxnMarkers request) when another broker leads it;
	// ErrPartitionGone if there is none (its topic was deleted: its marker
	// is skipped). Any other error is retried (the broker is still opening
	// its partitions, the partition has no leader now). It is asked for
	// every partition but those of GroupsTopic that GroupLedElsewhere does
	// not place on another broker.
	Partition func(tp base.TopicPartition) (MarkerAppender, error)
	// GroupsTopic is __consumer_offsets: the markers of its partitions
	// coordinated here go through SubmitGroupEvent.
	GroupsTopic string
	// GroupLedElsewhere reports whether partition p of GroupsTopic is led
	// by another broker: its marker then goes through Partition, as a data
	// partition's, to the group coordinator there. Nil means never (a
	// single broker). A partition led nowhere may answer either way: both
	// paths refuse it retriably.
	GroupLedElsewhere func(p int32) bool
	// SubmitGroupEvent and SubmitTxnEvent are the SubmitEvent of the group
	// and the transaction coordinators' runtimes.
	SubmitGroupEvent func(p int32, ev any, done func(error))
	SubmitTxnEvent   func(p int32, ev any, done func(error))
	// RetryBackoff is the first wait before a failed marker is tried again.
	RetryBackoff time.Duration
	Logger       *slog.Logger
}

// Validate reports the first missing option.
func (o Options) Validate() error {
	switch {
	case o.Partition == nil:
		return errors.New("markers: Options.Partition is nil")
	case o.GroupsTopic == "":
		return errors.New("markers: Options.GroupsTopic is empty")
	case o.SubmitGroupEvent == nil || o.SubmitTxnEvent == nil:
		return errors.New("markers: Options.SubmitGroupEvent and SubmitTxnEvent are required")
	case o.RetryBackoff <= 0:
		return errors.New("markers: Options.RetryBackoff must be positive")
	}
	return nil
}

// Writer writes transaction markers. Safe for concurrent use.
type Writer struct {
	opts Options
	log  *slog.Logger
	stop chan struct{}
	wg   sync.WaitGroup
	mu   struct {
		sync.Mutex
		// closed is set by Close; effects are then dropped (the next load
		// of the coordinator emits them again).
		closed bool
		// flights holds the write in progress of each transactional id.
		flights map[string]*flight
	}
}

// flight is the one write in progress for a transactional id: the
// effect being written and, at most, one different effect to write after.
type flight struct {
	current writeKey
	next    *txn.WriteMarkers
}

// writeKey is what makes two effects the same write.
type writeKey struct {
	ProducerID    int64
	ProducerEpoch int16
	Commit        bool
}

func keyOf(wm txn.WriteMarkers) writeKey {
	return writeKey{ProducerID: wm.ProducerID, ProducerEpoch: wm.ProducerEpoch, Commit: wm.Commit}
}

// New returns a Writer.
func New(opts Options) (*Writer, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	w := &Writer{opts: opts, log: opts.Logger, stop: make(chan struct{})}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	w.mu.flights = map[string]*flight{}
	return w, nil
}

// OnEffects is the transaction runtime's Options.OnEffects: it starts
// writing the markers of every txn.WriteMarkers among effects. It does not
// block. An effect identical to the write in progress for its
// transactional id joins it (a reloaded coordinator emits again what it
// finds in Prepare): two writers of one transaction's markers could
// otherwise complete its producer's next transaction, which has the same
// producer id and epoch.
func (w *Writer) OnEffects(txnPartition int32, effects []any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.closed {
		return
	}
	for _, e := range effects {
		wm, ok := e.(txn.WriteMarkers)
		if !ok {
			panic(fmt.Sprintf("markers: unknown effect %T", e))
		}
		if f := w.mu.flights[wm.TransactionalID]; f != nil {
			if f.current != keyOf(wm) {
				f.next = &wm
			}
			continue
		}
		w.mu.flights[wm.TransactionalID] = &flight{current: keyOf(wm)}
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			w.fly(txnPartition, wm)
		}()
	}
}

// fly writes wm, then whatever effect for its transactional id arrived
// meanwhile, until none is left.
func (w *Writer) fly(txnPartition int32, wm txn.WriteMarkers) {
	for {
		if !w.write(txnPartition, wm) {
			return // closing
		}
		w.mu.Lock()
		f := w.mu.flights[wm.TransactionalID]
		if f.next == nil {
			delete(w.mu.flights, wm.TransactionalID)
			w.mu.Unlock()
			return
		}
		wm = *f.next
		f.current, f.next = keyOf(wm), nil
		w.mu.Unlock()
	}
}

// Close stops every write in progress and waits for it.
func (w *Writer) Close() {
	w.mu.Lock()
	if !w.mu.closed {
		w.mu.closed = true
		close(w.stop)
	}
	w.mu.Unlock()
	w.wg.Wait()
}

// write writes wm's markers, then tells the coordinator, retrying until
// it has heard; false means the Writer is closing.
func (w *Writer) write(txnPartition int32, wm txn.WriteMarkers) bool {
	for _, tp := range wm.Partitions {
		if !w.settle(tp, wm) {
			return false
		}
	}
	done := txn.MarkersWritten{TransactionalID: wm.TransactionalID, ProducerID: wm.ProducerID, ProducerEpoch: wm.ProducerEpoch}
	return w.retry("recording a completed transaction", wm, func() (bool, error) {
		err := w.submit(w.opts.SubmitTxnEvent, txnPartition, done)
		var ce *runtime.CodeError
		if errors.As(err, &ce) && ce.Code == kerr.NotCoordinator.Code {
			// Not led here any more: whoever loads the partition sends
			// this transaction's markers again.
			return true, nil
		}
		return err == nil, err
	})
}

// submit hands ev to a runtime and waits for its answer.
func (w *Writer) submit(submit func(int32, any, func(error)), p int32, ev any) error {
	ch := make(chan error, 1)
	submit(p, ev, func(err error) { ch <- err })
	select {
	case err := <-ch:
		return err
	case <-w.stop:
		return errClosing
	}
}

// errClosing ends a wait when the Writer closes.
var errClosing = errors.New("markers: closing")

// retry runs attempt until it reports done, waiting RetryBackoff
// (doubling, at most maxBackoff) between attempts; false means the Writer
// is closing.
func (w *Writer) retry(what string, wm txn.WriteMarkers, attempt func() (done bool, err error)) bool {
	backoff := w.opts.RetryBackoff
	for {
		ok, err := attempt()
		if ok {
			return true
		}
		w.log.Warn(what+" failed; retrying", "transactional_id", wm.TransactionalID, "in", backoff, "err", err)
		t := time.NewTimer(backoff)
		select {
		case <-w.stop:
			t.Stop()
			return false
		case <-t.C:
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// settle writes the marker of wm to tp, retrying until it is durable or
// needs no writing; false means the Writer is closing.
func (w *Writer) settle(tp base.TopicPartition, wm txn.WriteMarkers) bool {
	return w.retry("writing the transaction marker to "+tp.String(), wm, func() (bool, error) {
		err := w.writeOne(tp, wm)
		if skip, why := skippable(err); skip {
			w.log.Info("transaction marker not needed", "partition", tp.String(), "transactional_id", wm.TransactionalID, "why", why, "err", err)
			return true, nil
		}
		return err == nil, err
	})
}

// ErrPartitionGone means the marker's partition does not exist any more.
var ErrPartitionGone = errors.New("markers: the partition does not exist")

// skippable says whether err means the marker needs no writing: its
// partition is gone, or a newer marker already ended the transaction there.
func skippable(err error) (bool, string) {
	switch {
	case errors.Is(err, ErrPartitionGone):
		return true, "the partition was deleted"
	case errors.Is(err, group.ErrStaleMarker),
		errors.Is(err, producers.ErrInvalidProducerEpoch),
		errors.Is(err, producers.ErrTransactionCoordinatorFenced):
		return true, "a newer epoch ended the transaction there"
	}
	var ce *runtime.CodeError
	if errors.As(err, &ce) && ce.Code == kerr.UnknownTopicOrPartition.Code {
		return true, "the partition was deleted"
	}
	return false, ""
}

func (w *Writer) writeOne(tp base.TopicPartition, wm txn.WriteMarkers) error {
	if tp.Topic == w.opts.GroupsTopic && (w.opts.GroupLedElsewhere == nil || !w.opts.GroupLedElsewhere(tp.Partition)) {
		return w.writeGroupMarker(tp.Partition, wm)
	}
	p, err := w.opts.Partition(tp)
	if err != nil {
		return err
	}
	_, wait, err := p.AppendMarker(base.ProducerID(wm.ProducerID), wm.ProducerEpoch, wm.Commit, wm.CoordinatorEpoch)
	if err != nil {
		return err
	}
	return wait()
}

func (w *Writer) writeGroupMarker(p int32, wm txn.WriteMarkers) error {
	ev := group.TxnCompleted{ProducerID: wm.ProducerID, ProducerEpoch: wm.ProducerEpoch, Commit: wm.Commit, CoordinatorEpoch: wm.CoordinatorEpoch}
	return w.submit(w.opts.SubmitGroupEvent, p, ev)
}

var _ MarkerAppender = (*partition.Partition)(nil)

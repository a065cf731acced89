package partition

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition/producers"
	"github.com/strata-broker/strata/internal/vfs"
)

// The aborted-transaction index. Kafka keeps a .txnindex next to each
// segment; here the log package owns the segment files, so the partition
// keeps one append-only file for all its segments, in Kafka's
// TransactionIndex entry layout (34 bytes, big-endian): version int16 (0),
// producerId int64, firstOffset int64, lastOffset int64, lastStableOffset
// int64. Entries are in the order their markers were written, so
// lastOffset strictly ascends.
//
// The file is a durable mirror of Partition.mu.aborted, the list queries
// read. Its protocol:
//   - A marker adds its entry to the list under the partition lock; the
//     file is written later, outside that lock (flushAbortedIndex), so no
//     append ever waits for the index's fsync.
//   - Every entry whose marker is below a producer snapshot's offset is
//     in the file and fsynced before that snapshot is written
//     (writeSnapshot flushes first). Open replays the log only from the
//     newest usable snapshot, so it can trust the file below that offset
//     and re-derives every entry at or after it from the log; file entries
//     at or after it (possibly unsynced, torn or describing a lost tail)
//     are dropped, never duplicated.
//   - A torn last entry is dropped. An entry that fails validation makes
//     Open rebuild what the local log holds below the snapshot by a
//     second replay (Kafka rebuilds a corrupt .txnindex from its segment).
//   - Entries wholly below the log start (lastOffset < logStart) leave the
//     list when the log start moves; the file is rewritten (temp, fsync,
//     rename, fsync dir) once at least half of it is such entries, outside
//     the partition lock.
const (
	abortedIndexFile    = "aborted-txns.index"
	abortedEntryBytes   = 34
	abortedIndexVersion = 0
)

// abortedIndex is the writer of the aborted-transaction index file.
// Entries are numbered in the order they join Partition.mu.aborted; the
// list holds numbers [mu.abortedNext - len(mu.aborted), mu.abortedNext).
//
// Lock order: mu, then the partition's mu (held only to copy entries).
// Nothing holding the partition's mu takes mu.
type abortedIndex struct {
	mu sync.Mutex
	// f is the file opened for appending; nil until the first append or
	// after a rewrite or a failed write.
	f vfs.File
	// written: every entry numbered below it is in the file and synced.
	written uint64
	// fileEntries is how many entries the file holds, pruned ones included.
	fileEntries int
	// rewrite: the file must be replaced before anything is appended to it
	// (it holds entries the list does not, or a write failed midway).
	rewrite bool
}

func appendAbortedEntry(dst []byte, t AbortedTxn) []byte {
	be := binary.BigEndian
	dst = be.AppendUint16(dst, abortedIndexVersion)
	dst = be.AppendUint64(dst, uint64(t.ProducerID))
	dst = be.AppendUint64(dst, uint64(t.FirstOffset))
	dst = be.AppendUint64(dst, uint64(t.LastOffset))
	return be.AppendUint64(dst, uint64(t.LastStableOffset))
}

func encodeAbortedEntries(ts []AbortedTxn) []byte {
	out := make([]byte, 0, len(ts)*abortedEntryBytes)
	for _, t := range ts {
		out = appendAbortedEntry(out, t)
	}
	return out
}

// abortedFile is what readAbortedIndex found.
type abortedFile struct {
	entries []AbortedTxn // the valid prefix, in file order
	torn    bool         // the file ends with a partial entry
	corrupt error        // why the entry after the prefix is invalid; nil if none is
}

// readAbortedIndex is the gateway for the index file: it keeps the longest
// prefix of whole, valid entries (version 0, producer id and offsets
// non-negative, firstOffset <= lastOffset, lastOffset strictly ascending).
// A missing file holds no entry (partitions older than transactions).
func readAbortedIndex(dir string) (abortedFile, error) {
	data, err := os.ReadFile(filepath.Join(dir, abortedIndexFile))
	if errors.Is(err, fs.ErrNotExist) {
		return abortedFile{}, nil
	}
	if err != nil {
		return abortedFile{}, fmt.Errorf("reading %s: %w", abortedIndexFile, err)
	}
	return decodeAbortedIndex(data), nil
}

// decodeAbortedIndex is readAbortedIndex on the file's bytes.
func decodeAbortedIndex(data []byte) abortedFile {
	var out abortedFile
	out.torn = len(data)%abortedEntryBytes != 0
	be := binary.BigEndian
	for i := 0; i+abortedEntryBytes <= len(data); i += abortedEntryBytes {
		e := data[i : i+abortedEntryBytes]
		t := AbortedTxn{
			ProducerID:       base.ProducerID(be.Uint64(e[2:])),
			FirstOffset:      base.Offset(be.Uint64(e[10:])),
			LastOffset:       base.Offset(be.Uint64(e[18:])),
			LastStableOffset: base.Offset(be.Uint64(e[26:])),
		}
		var why string
		switch n := len(out.entries); {
		case be.Uint16(e) != abortedIndexVersion:
			why = fmt.Sprintf("version %d", be.Uint16(e))
		case t.ProducerID < 0 || t.FirstOffset < 0 || t.LastStableOffset < 0 || t.FirstOffset > t.LastOffset:
			why = fmt.Sprintf("%+v", t)
		case n > 0 && t.LastOffset <= out.entries[n-1].LastOffset:
			why = fmt.Sprintf("last offset %d not above %d", t.LastOffset, out.entries[n-1].LastOffset)
		}
		if why != "" {
			out.corrupt = fmt.Errorf("%s: entry %d at byte %d: %s", abortedIndexFile, i/abortedEntryBytes, i, why)
			break
		}
		out.entries = append(out.entries, t)
	}
	return out
}

// abortedSinceLocked returns copies of the listed entries numbered seq or
// more, and the number after the last.
func (p *Partition) abortedSinceLocked(seq uint64) ([]AbortedTxn, uint64) {
	next := p.mu.abortedNext
	first := next - uint64(len(p.mu.aborted))
	i := max(seq, first) - first
	if i >= uint64(len(p.mu.aborted)) {
		return nil, next
	}
	return slices.Clone(p.mu.aborted[i:]), next
}

// flushAbortedIndex makes every entry listed so far durable in the file:
// appended and fdatasynced, or by a rewrite if one is due.
func (p *Partition) flushAbortedIndex() error {
	x := &p.txnIndex
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.rewrite {
		return p.rewriteAbortedIndexLocked()
	}
	p.mu.Lock()
	pending, next := p.abortedSinceLocked(x.written)
	p.mu.Unlock()
	if len(pending) == 0 {
		x.written = max(x.written, next)
		return nil
	}
	created := false
	if x.f == nil {
		path := filepath.Join(p.opts.Dir, abortedIndexFile)
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			created = true
		}
		f, err := vfs.Default.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("partition %v: opening %s: %w", p.opts.TP, abortedIndexFile, err)
		}
		x.f = f
	}
	_, err := x.f.Write(encodeAbortedEntries(pending))
	if err == nil {
		err = x.f.Datasync()
	}
	if err == nil && created {
		err = vfs.SyncDir(p.opts.Dir)
	}
	if err != nil {
		// What reached the file is unknown: replace it before appending.
		x.closeFileLocked()
		x.rewrite = true
		return fmt.Errorf("partition %v: writing %s up to the marker at %d: %w",
			p.opts.TP, abortedIndexFile, pending[len(pending)-1].LastOffset, err)
	}
	x.written = next
	x.fileEntries += len(pending)
	return nil
}

// rewriteAbortedIndexLocked replaces the file with the list, crash-safely.
func (p *Partition) rewriteAbortedIndexLocked() error {
	x := &p.txnIndex
	p.mu.Lock()
	all, next := p.abortedSinceLocked(0)
	p.mu.Unlock()
	x.closeFileLocked()
	if err := vfs.WriteFileAtomic(p.opts.Dir, abortedIndexFile, encodeAbortedEntries(all)); err != nil {
		x.rewrite = true
		return fmt.Errorf("partition %v: rewriting %s: %w", p.opts.TP, abortedIndexFile, err)
	}
	x.written, x.fileEntries, x.rewrite = next, len(all), false
	return nil
}

// compactAbortedIndex rewrites the file when at least half of its entries
// are below the log start (or it must be rewritten anyway).
func (p *Partition) compactAbortedIndex() error {
	x := &p.txnIndex
	x.mu.Lock()
	defer x.mu.Unlock()
	p.mu.Lock()
	if p.mu.closed { // Close flushed it; a deleted partition has no directory
		p.mu.Unlock()
		return nil
	}
	first := p.mu.abortedNext - uint64(len(p.mu.aborted))
	live := 0
	if x.written > first {
		live = int(x.written - first)
	}
	p.mu.Unlock()
	prunable := x.fileEntries - live
	if !x.rewrite && (prunable <= 0 || 2*prunable < x.fileEntries) {
		return nil
	}
	return p.rewriteAbortedIndexLocked()
}

// compactAbortedIndexLogged is compactAbortedIndex after the log start
// moved. A failure costs only disk space, and the next try repeats it.
func (p *Partition) compactAbortedIndexLogged() {
	if err := p.compactAbortedIndex(); err != nil {
		p.logger.Warn("aborted-transaction index not compacted", "err", err)
	}
}

// closeAbortedIndex closes the file, as the partition closes.
func (p *Partition) closeAbortedIndex() {
	x := &p.txnIndex
	x.mu.Lock()
	defer x.mu.Unlock()
	x.closeFileLocked()
}

func (x *abortedIndex) closeFileLocked() {
	if x.f != nil {
		_ = x.f.Close() // its data is synced or about to be rewritten
		x.f = nil
	}
}

// pruneAbortedLocked drops the listed entries wholly below the log start:
// no read can reach them any more.
func (p *Partition) pruneAbortedLocked() {
	i := 0
	for i < len(p.mu.aborted) && p.mu.aborted[i].LastOffset < p.mu.logStart {
		i++
	}
	if i > 0 {
		p.mu.aborted = slices.Delete(p.mu.aborted, 0, i)
	}
}

// loadAborted restores the aborted-transaction list at Open, before the
// partition is shared: the file's entries at or after the log start and
// below replayFrom (durable, by the protocol above), then derived, the
// ones the replay from replayFrom found. A corrupt file is rebuilt for the
// part of the local log below replayFrom.
func (p *Partition) loadAborted(replayFrom base.Offset, derived []AbortedTxn) error {
	file, err := readAbortedIndex(p.opts.Dir)
	if err != nil {
		return err
	}
	below := replayFrom
	if file.corrupt != nil {
		below = min(replayFrom, p.log.Start())
		p.logger.Warn("aborted-transaction index is corrupt; rebuilding it from the local log",
			"err", file.corrupt, "from", below, "to", replayFrom)
	}
	var kept []AbortedTxn
	for _, t := range file.entries {
		if t.LastOffset >= p.mu.logStart && t.LastOffset < below {
			kept = append(kept, t)
		}
	}
	var rebuilt []AbortedTxn
	if below < replayFrom {
		if rebuilt, err = p.replayLog(producers.New(), below, replayFrom); err != nil {
			return err
		}
	}
	p.mu.aborted = slices.Concat(kept, rebuilt, derived)
	// A replay from a snapshot below the log start (inside its segment)
	// re-derives transactions that DeleteRecords already released.
	p.pruneAbortedLocked()
	p.mu.abortedNext = uint64(len(p.mu.aborted))
	// The list begins with kept, which is the whole file unless something
	// was dropped from it; then the file is replaced at the next flush.
	x := &p.txnIndex
	x.written = uint64(len(kept))
	x.fileEntries = len(file.entries)
	x.rewrite = file.torn || file.corrupt != nil || len(kept) != len(file.entries)
	return nil
}

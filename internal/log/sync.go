package log

import (
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/vfs"
)

// syncPlan is what one fdatasync round makes durable, decided under mu and
// executed without it.
type syncPlan struct {
	segs    []*segment // segments whose .log has unsynced bytes
	sizes   []int64    // the size of each .log that this round covers
	sealed  []*segment // sealed segments whose index files are not yet durable
	dir     bool       // fsync the directory: segment files were created
	end     base.Offset
	newRP   base.Offset // recovery point to persist after the round
	writeRP bool
	bytes   int64 // appended bytes the round makes durable
}

// Sync returns once everything appended before the call is durable.
func (l *Log) Sync() error {
	return l.SyncTo(l.End())
}

// SyncTo returns once every offset below end is durable. Callers share
// fdatasync rounds (group commit): a caller that arrives while a round runs
// waits for it, and only if that round does not cover end does it wait for
// the next one, which the first such waiter leads. A producer waits for its
// own batch, not for whatever was appended after it: with requests
// pipelined on a connection, waiting for the log end would make every
// request pay for a round that covers the next one.
func (l *Log) SyncTo(end base.Offset) error {
	target := end
	for {
		l.mu.Lock()
		// Truncation may have removed the caller's data; nothing is left
		// to wait for, even once later appends pass end again.
		target = min(target, l.activeLocked().nextOffset)
		if l.mu.durableEnd >= target {
			l.mu.Unlock()
			return nil
		}
		if err := l.usableLocked(); err != nil {
			l.mu.Unlock()
			return err
		}
		if ch := l.mu.syncing; ch != nil {
			l.mu.Unlock()
			<-ch
			continue
		}
		l.mu.Unlock()
		if err := l.leadSyncRound(); err != nil {
			return err
		}
	}
}

// leadSyncRound runs one fdatasync round, unless another caller started one
// first. Once it has claimed the round it may wait a moment first
// (syncPacer), holding no lock: appends go on meanwhile and the round
// covers them.
func (l *Log) leadSyncRound() error {
	l.mu.Lock()
	if l.mu.syncing != nil || l.mu.closed || l.mu.failed != nil {
		l.mu.Unlock()
		return nil // the caller's loop looks again
	}
	done := make(chan struct{})
	l.mu.syncing = done
	wait := l.mu.pacer.wait(l.clock.Now())
	l.mu.Unlock()
	if wait > 0 {
		time.Sleep(wait)
	}
	return l.runSyncRound(done)
}

// runSyncRound plans and executes the round that leadSyncRound claimed,
// then closes done. lifecycle is held shared so that no file is truncated
// or closed under the round.
func (l *Log) runSyncRound(done chan struct{}) error {
	l.lifecycle.RLock()
	defer l.lifecycle.RUnlock()
	l.mu.Lock()
	if l.mu.closed || l.mu.failed != nil { // while the round waited
		l.mu.syncing = nil
		close(done)
		l.mu.Unlock()
		return nil // the caller's loop reports it
	}
	started := l.clock.Now()
	p := l.planSyncLocked()
	l.mu.pacer.started(started, p.bytes)
	l.mu.Unlock()

	err := p.execute(l.fs, l.dir)
	took := l.clock.Now().Sub(started)
	if err == nil && l.onSync != nil {
		l.onSync(took)
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.syncing = nil
	close(done)
	if err != nil {
		return l.failLocked(err)
	}
	l.mu.pacer.finished(took)
	for i, s := range p.segs {
		s.syncedBytes = max(s.syncedBytes, p.sizes[i])
	}
	for _, s := range p.sealed {
		s.indexDurable = true
	}
	l.mu.durableEnd = max(l.mu.durableEnd, p.end)
	if p.writeRP {
		l.mu.persistedRP = p.newRP
	}
	return nil
}

func (l *Log) planSyncLocked() syncPlan {
	p := syncPlan{end: l.activeLocked().nextOffset, dir: l.mu.dirDirty}
	// Cleared now, not when the round ends: a segment created while the
	// round runs may miss its directory fsync and must leave the flag set
	// for the next round. If this round fails the log is failed anyway.
	l.mu.dirDirty = false
	for i, s := range l.mu.segs {
		// A cut (sizeDirty) is made durable by this round; cleared now for
		// the reason dirDirty is.
		if s.syncedBytes < s.sizeBytes || s.sizeDirty {
			p.bytes += max(0, s.sizeBytes-s.syncedBytes)
			p.sizes = append(p.sizes, s.sizeBytes)
			p.segs = append(p.segs, s)
			s.sizeDirty = false
		}
		if i < len(l.mu.segs)-1 && !s.indexDurable {
			p.sealed = append(p.sealed, s)
		}
	}
	// After the round every sealed segment is durable with its indexes, so
	// recovery may start at the active segment. Persisting that costs a few
	// fsyncs, so it happens only when a roll moved the active segment.
	if rp := l.activeLocked().baseOffset; rp > l.mu.persistedRP {
		p.newRP, p.writeRP = rp, true
	}
	return p
}

func (p *syncPlan) execute(fsys vfs.FS, dir string) error {
	for _, s := range p.segs {
		if err := fdatasync(s); err != nil {
			return err
		}
	}
	for _, s := range p.sealed {
		if err := syncIndexFiles(s); err != nil {
			return err
		}
	}
	if p.dir {
		if err := syncDir(fsys, dir); err != nil {
			return err
		}
	}
	if p.writeRP {
		return writeRecoveryPoint(fsys, dir, p.newRP)
	}
	return nil
}

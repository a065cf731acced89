package broker

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/vfs"
)

// failedLogCheckInterval is how often a broker with ReopenFailedLogs looks
// for failed logs it may reopen.
const failedLogCheckInterval = 2 * time.Second

// Bounds of the free space a full disk must have again before a log that
// failed on it is reopened: a twentieth of the disk, so that the writes it
// takes do not fill it again at once, within these.
const (
	minReopenFreeBytes = 4 << 20
	maxReopenFreeBytes = 1 << 30
)

// diskSpace is the free and total bytes of a file system.
type diskSpace struct {
	free, total uint64
}

// reopenFreeBytes is how much of a disk of total bytes must be free before
// a log that failed because it was full is reopened.
func reopenFreeBytes(total uint64) uint64 {
	return min(max(total/20, minReopenFreeBytes), maxReopenFreeBytes)
}

// fileUsage is how many files the process has open, and its limit
// (RLIMIT_NOFILE).
type fileUsage struct {
	open, limit uint64
}

// reopenFileMargin is how far under its open-file limit the process must
// be before a log that failed for want of a file descriptor is reopened:
// a twentieth of the limit, at least 64, so that it can roll and take
// connections for a while.
func reopenFileMargin(limit uint64) uint64 { return max(limit/20, 64) }

// mayReopen decides whether a log that failed with failure may be reopened
// now, on a disk with space and with the process's files at files: one
// that failed because the disk was full once the disk has room again, one
// that failed for want of a file descriptor (EMFILE) once the process is
// well under its limit (raised, say, with `prlimit --pid`). Any other
// failure (an I/O error, a failed fsync) keeps the log refusing writes
// until the broker restarts: its disk needs an operator first.
func mayReopen(failure error, space diskSpace, files fileUsage) bool {
	switch {
	case errors.Is(failure, syscall.ENOSPC):
		return space.free >= reopenFreeBytes(space.total)
	case errors.Is(failure, syscall.EMFILE):
		return files.limit > 0 && files.open+reopenFileMargin(files.limit) <= files.limit
	}
	return false
}

// reopenCause names, for the log, what a reopened log had failed on.
func reopenCause(failure error) string {
	if errors.Is(failure, syscall.EMFILE) {
		return "too many open files: the process is under its limit again"
	}
	return "a full disk: the disk has room again"
}

// countFiles reads how many files this process has open and its limit.
func countFiles() (fileUsage, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fileUsage{}, fmt.Errorf("getrlimit: %w", err)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fileUsage{}, err
	}
	return fileUsage{open: uint64(len(fds)), limit: lim.Cur}, nil
}

// statDisk reads the space of the file system holding dir.
func statDisk(dir string) (diskSpace, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return diskSpace{}, fmt.Errorf("statfs %s: %w", dir, err)
	}
	return diskSpace{free: st.Bavail * uint64(st.Bsize), total: st.Blocks * uint64(st.Bsize)}, nil
}

// reopenFailedLogs reopens every hosted partition whose log failed on a
// cause that has gone (mayReopen: a full disk that has room, a file limit
// the process is well under): the partition is closed and opened again,
// which recovers its log from disk as a restart would (every record that
// was durable stays; a torn tail is cut), and takes its role from the
// image again. A partition whose reopening fails stays closed and is tried
// again at the next check. As in Reconcile, the closing and opening (file
// work: recovery reads the segments past the recovery point) happen
// outside the broker's lock, under b.hosting.
func (b *Broker) reopenFailedLogs() {
	b.hosting.Lock()
	defer b.hosting.Unlock()
	var failed []*hosted
	b.mu.Lock()
	for _, h := range b.mu.parts {
		if h.p.LogFailed() != nil {
			failed = append(failed, h)
		}
	}
	pending := len(b.mu.reopening) > 0
	b.mu.Unlock()
	if len(failed) == 0 && !pending {
		return
	}
	space, err := statDisk(b.opts.DataDir)
	if err != nil {
		b.logger.Warn("reading the data disk's free space to reopen failed logs", "err", err)
		return
	}
	files, err := countFiles()
	if err != nil {
		b.logger.Warn("counting open files to reopen failed logs", "err", err)
		return
	}
	img := b.opts.Meta.Image() // under b.hosting: never older than Reconcile's
	type closing struct {
		h       *hosted
		failure error
	}
	var toClose []closing
	b.mu.Lock()
	if b.mu.closed {
		b.mu.Unlock()
		return
	}
	for _, h := range failed {
		tp := h.p.TP()
		failure := h.p.LogFailed()
		if b.mu.parts[tp] != h || !mayReopen(failure, space, files) {
			continue
		}
		toClose = append(toClose, closing{b.detachLocked(tp), failure})
		b.mu.reopening[tp] = reopenCause(failure)
	}
	reopening := maps.Clone(b.mu.reopening)
	b.mu.Unlock()
	for _, c := range toClose {
		if err := c.h.p.Close(); err != nil && !errors.Is(err, c.failure) {
			b.logger.Warn("closing a failed log to reopen it", "partition", c.h.p.TP().String(), "err", err)
		}
	}
	for tp, cause := range reopening {
		b.reopen(img, tp, cause, space, files)
	}
}

// reopen opens tp again, closed by reopenFailedLogs, if the image still
// has it here and nothing opened it meanwhile (a Reconcile opens what it
// finds unhosted).
func (b *Broker) reopen(img *metadata.Image, tp base.TopicPartition, cause string, space diskSpace, files fileUsage) {
	b.mu.Lock()
	_, open := b.mu.parts[tp]
	if open || b.mu.closed {
		delete(b.mu.reopening, tp)
		b.mu.Unlock()
		return
	}
	b.mu.Unlock()
	t, ok := img.Topics[tp.Topic]
	if !ok || int(tp.Partition) >= len(t.Partitions) || !slices.Contains(t.Partitions[tp.Partition].Replicas, b.opts.NodeID) {
		// Deleted or moved away meanwhile, as Reconcile would have.
		b.forgetReopening(tp)
		b.logger.Info("deleting partition: its topic is gone or it has no replica here", "partition", tp.String())
		if err := vfs.RemoveDir(b.partitionDir(tp)); err != nil {
			b.logger.Error("deleting a partition closed to reopen its log", "partition", tp.String(), "err", err)
		}
		return
	}
	pa := t.Partitions[tp.Partition]
	cs := configSources(img, b.opts.NodeID, t)
	err := b.reopenAndHost(tp, t, pa, cs)
	if err != nil {
		b.logger.Error("reopening a failed log; trying again", "partition", tp.String(), "failed_on", cause,
			"free_bytes", space.free, "open_files", files.open, "open_files_limit", files.limit, "err", err)
		return
	}
	b.forgetReopening(tp)
	b.logger.Info("reopened a partition's log that had failed on "+cause+"; writes are accepted",
		"partition", tp.String(), "free_bytes", space.free, "disk_bytes", space.total,
		"open_files", files.open, "open_files_limit", files.limit)
}

// reopenAndHost opens tp outside the broker's lock and hosts it in pa's
// role; on a failure it is left closed.
func (b *Broker) reopenAndHost(tp base.TopicPartition, t *metadata.Topic, pa metadata.Partition, cs ConfigSources) error {
	h, err := b.open(tp, t, pa, cs)
	if err != nil {
		return err
	}
	b.mu.Lock()
	if b.mu.closed {
		b.mu.Unlock()
		return closeUnhosted([]*hosted{h})
	}
	b.hostLocked(h)
	err = b.updateLocked(h, t, pa, cs)
	if err != nil {
		b.detachLocked(tp)
	}
	b.mu.Unlock()
	if err != nil {
		_ = h.p.Close()
	}
	return err
}

func (b *Broker) forgetReopening(tp base.TopicPartition) {
	b.mu.Lock()
	delete(b.mu.reopening, tp)
	b.mu.Unlock()
}

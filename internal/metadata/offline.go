package metadata

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftwal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
)

// Reading the metadata of a stopped broker, for `strata inspect`. Opening
// the Raft log is not read-only: raft-wal recovers the tail segment and
// prunes unused ones, bbolt opens its file for writing, and the snapshot
// store touches a probe file. So LoadOffline copies the metadata directory
// and opens the copy; the broker's files are only read. While it copies it
// holds a shared lock on the WAL's bbolt file, which a running broker holds
// exclusively: a broker that runs is refused (its files change under the
// copy), and a broker cannot start in the middle of the copy.

// ErrMetadataInUse: the metadata directory belongs to a running broker.
var ErrMetadataInUse = errors.New("metadata: in use by a running broker; stop the broker first")

// ErrNoMetadata: the directory holds no Raft state.
var ErrNoMetadata = errors.New("metadata: no metadata found")

// OfflineImage is what LoadOffline rebuilt.
type OfflineImage struct {
	Image *Image
	// SnapshotIndex is the Raft index of the snapshot the image started
	// from; 0 when there was none (replayed from the first entry).
	SnapshotIndex uint64
	// LastIndex is the last Raft index read from the log.
	LastIndex uint64
	// Rejected counts the commands the FSM refused on replay (as it did
	// when the broker ran: a refused command leaves the image unchanged).
	Rejected int
}

// LoadOffline rebuilds the image that a Store on dir (its Options.Dir)
// would publish once it has replayed its log: the newest readable
// snapshot, then every command logged after it. It starts no Raft and
// writes nothing under dir. Every command in the log is applied, as a
// single-node quorum applies its whole log on restart; on a node of a
// larger quorum the last entries may not have been committed yet.
func LoadOffline(dir string) (OfflineImage, error) {
	walDir := filepath.Join(dir, "wal")
	if _, err := os.Stat(filepath.Join(walDir, metadb.FileName)); err != nil {
		return OfflineImage{}, fmt.Errorf("%w in %s (%v)", ErrNoMetadata, dir, unwrapPathErr(err))
	}
	unlock, err := lockShared(filepath.Join(walDir, metadb.FileName))
	if err != nil {
		return OfflineImage{}, err
	}
	tmp, err := os.MkdirTemp("", "strata-metadata-")
	if err != nil {
		unlock()
		return OfflineImage{}, fmt.Errorf("metadata: a temporary copy: %w", err)
	}
	defer os.RemoveAll(tmp)
	err = copyTree(dir, tmp)
	unlock()
	if err != nil {
		return OfflineImage{}, fmt.Errorf("metadata: copying %s: %w", dir, err)
	}
	return replayCopy(tmp)
}

// lockShared takes a shared, non-blocking flock on path; a running broker's
// bbolt holds an exclusive one.
func lockShared(path string) (unlock func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (%s is locked)", ErrMetadataInUse, path)
		}
		return nil, fmt.Errorf("metadata: lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil // closing releases the lock
}

// copyTree copies the regular files and directories under src into dst,
// which exists.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type().IsRegular():
			return copyFile(path, to)
		}
		return nil // sockets, links: nothing Raft writes
	})
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// replayCopy rebuilds the image from the Raft state in dir, a copy that
// it may modify.
func replayCopy(dir string) (OfflineImage, error) {
	hlog := hclog.NewNullLogger()
	var out OfflineImage
	img, snapIndex, err := newestSnapshot(dir, hlog)
	if err != nil {
		return out, err
	}
	out.Image, out.SnapshotIndex = img, snapIndex
	meta := &metadb.BoltMetaDB{}
	defer meta.Close()
	wal, err := raftwal.Open(filepath.Join(dir, "wal"), raftwal.WithMetaStore(meta), raftwal.WithLogger(hlog))
	if err != nil {
		return out, fmt.Errorf("metadata: open the raft log: %w", err)
	}
	defer wal.Close()
	first, err := wal.FirstIndex()
	if err != nil {
		return out, fmt.Errorf("metadata: raft log: %w", err)
	}
	last, err := wal.LastIndex()
	if err != nil {
		return out, fmt.Errorf("metadata: raft log: %w", err)
	}
	from := snapIndex + 1
	if last >= from && first > from {
		return out, fmt.Errorf("%w: the raft log starts at %d but the snapshot ends at %d", ErrInvalidCommand, first, snapIndex)
	}
	for i := from; i <= last; i++ {
		var l raft.Log
		if err := wal.GetLog(i, &l); err != nil {
			return out, fmt.Errorf("metadata: raft log entry %d: %w", i, err)
		}
		if l.Type != raft.LogCommand {
			continue // no-ops, configurations, barriers: not the FSM's
		}
		next, err := replayEntry(out.Image, l.Data, l.Index)
		if err != nil {
			out.Rejected++
			continue
		}
		out.Image = next
	}
	out.LastIndex = max(last, snapIndex)
	return out, nil
}

// replayEntry is fsm.Apply without publishing.
func replayEntry(img *Image, data []byte, index uint64) (*Image, error) {
	cmd, err := decodeCommand(data)
	if err != nil {
		return nil, err
	}
	return applyCommand(img, cmd, index)
}

// newestSnapshot restores the newest snapshot that opens and decodes, as
// Raft does at start; an empty image at index 0 when there is none.
func newestSnapshot(dir string, hlog hclog.Logger) (*Image, uint64, error) {
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, snapshotsRetained, hlog)
	if err != nil {
		return nil, 0, fmt.Errorf("metadata: open the snapshots: %w", err)
	}
	metas, err := snaps.List()
	if err != nil {
		return nil, 0, fmt.Errorf("metadata: list the snapshots: %w", err)
	}
	var errs []error
	for _, m := range metas { // newest first
		img, err := readSnapshot(snaps, m.ID)
		if err != nil {
			errs = append(errs, fmt.Errorf("snapshot %s: %w", m.ID, err))
			continue
		}
		return img, m.Index, nil
	}
	if len(errs) > 0 {
		return nil, 0, fmt.Errorf("metadata: no snapshot is readable: %w", errors.Join(errs...))
	}
	return emptyImage(), 0, nil
}

func readSnapshot(snaps *raft.FileSnapshotStore, id string) (*Image, error) {
	_, rc, err := snaps.Open(id)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, maxSnapshotBytes+1))
	if err != nil {
		return nil, err
	}
	return decodeSnapshot(data)
}

func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

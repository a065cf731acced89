package vfs

import (
	"errors"
	"io"
	"io/fs"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// memFile is an open handle on a memNode. Its fields other than offset and
// closed never change; those two are guarded by fs.mu like the node.
type memFile struct {
	fs                             *Mem
	node                           *memNode
	name                           string
	readable, writable, appendMode bool

	offset int64 // where Write writes next, without O_APPEND
	closed bool
}

// checkLocked returns the error for op on f, if any.
func (f *memFile) checkLocked(op string, write bool) error {
	switch {
	case f.closed:
		return pathErr(op, f.name, fs.ErrClosed)
	case write && !f.writable, !write && !f.readable && op == "read":
		return pathErr(op, f.name, syscall.EBADF)
	case f.node.dir && op != "sync" && op != "stat" && op != "close":
		return pathErr(op, f.name, syscall.EISDIR)
	}
	return nil
}

func (f *memFile) ReadAt(b []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.checkLocked("read", false); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("read", f.name, syscall.EINVAL)
	}
	if off >= int64(len(f.node.data)) {
		return 0, io.EOF
	}
	n := copy(b, f.node.data[off:])
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) WriteAt(b []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.checkLocked("write", true); err != nil {
		return 0, err
	}
	if f.appendMode {
		return 0, errors.New("vfs: invalid use of WriteAt on file opened with O_APPEND")
	}
	if off < 0 {
		return 0, pathErr("write", f.name, syscall.EINVAL)
	}
	f.node.writeLocked(b, off)
	return len(b), nil
}

func (f *memFile) Write(b []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.checkLocked("write", true); err != nil {
		return 0, err
	}
	if f.appendMode {
		f.offset = int64(len(f.node.data))
	}
	f.node.writeLocked(b, f.offset)
	f.offset += int64(len(b))
	return len(b), nil
}

// writeLocked writes b at off, zero-filling any gap past the end.
func (n *memNode) writeLocked(b []byte, off int64) {
	if end := off + int64(len(b)); end > int64(len(n.data)) {
		n.resizeLocked(end)
	}
	copy(n.data[off:], b)
}

// resizeLocked cuts or zero-extends the content to size bytes.
func (n *memNode) resizeLocked(size int64) {
	if size <= int64(len(n.data)) {
		n.data = n.data[:size]
		return
	}
	// append writes zeros over any stale bytes left in the backing array by
	// an earlier cut.
	n.data = append(n.data, make([]byte, size-int64(len(n.data)))...)
}

func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.checkLocked("sync", false); err != nil {
		return err
	}
	f.node.syncLocked()
	return nil
}

func (f *memFile) Datasync() error { return f.Sync() }

func (f *memFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.checkLocked("truncate", true); err != nil {
		return err
	}
	if size < 0 {
		return pathErr("truncate", f.name, syscall.EINVAL)
	}
	f.node.resizeLocked(size)
	return nil
}

func (f *memFile) Stat() (fs.FileInfo, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.checkLocked("stat", false); err != nil {
		return nil, err
	}
	return f.node.infoLocked(filepath.Base(f.name)), nil
}

func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return pathErr("close", f.name, fs.ErrClosed)
	}
	f.closed = true
	return nil
}

// memInfo is a snapshot of a node for Stat and ReadDir. Mem keeps no clock,
// so ModTime is the zero time.
type memInfo struct {
	name string
	size int64
	dir  bool
}

func (n *memNode) infoLocked(name string) memInfo {
	return memInfo{name: name, size: int64(len(n.data)), dir: n.dir}
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }
func (i memInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}

// Crash returns a new Mem holding only what is durable in m: each directory
// with its entries as of its last SyncDir, each file reachable through them
// with its content as of its last Sync. m is unchanged and stays usable (a
// process still holding its files writes into m, never into the result).
func (m *Mem) Crash() *Mem { return m.crash(nil) }

// CrashTorn is Crash where the machine got part of the unsynced state to
// disk before it died, chosen by seed (the same seed gives the same result):
//   - each file keeps a random prefix of its unsynced suffix (the bytes past
//     its synced size), or, one time in four, its whole current content (an
//     unsynced truncation included);
//   - each directory, one time in four, keeps its whole current set of
//     entries instead of the synced one.
func (m *Mem) CrashTorn(seed uint64) *Mem {
	return m.crash(rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)))
}

func (m *Mem) crash(rng *rand.Rand) *Mem {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[*memNode]*memNode{}
	return &Mem{root: crashCopy(m.root, rng, seen)}
}

// crashCopy returns the durable copy of n. seen keeps a file reachable by
// two names (a rename whose both directories were not synced) one file.
func crashCopy(n *memNode, rng *rand.Rand, seen map[*memNode]*memNode) *memNode {
	if c, ok := seen[n]; ok {
		return c
	}
	if n.dir {
		c := newMemDir()
		seen[n] = c
		entries := n.syncedChildren
		if rng != nil && rng.IntN(4) == 0 {
			entries = n.children
		}
		// Sorted, so that the random draws are the same for the same seed.
		for _, name := range slices.Sorted(maps.Keys(entries)) {
			c.children[name] = crashCopy(entries[name], rng, seen)
		}
		c.syncLocked()
		return c
	}
	c := &memNode{}
	seen[n] = c
	switch {
	case rng == nil:
		c.data = append([]byte(nil), n.synced...)
	case rng.IntN(4) == 0:
		c.data = append([]byte(nil), n.data...)
	default:
		c.data = append([]byte(nil), n.synced...)
		if extra := len(n.data) - len(n.synced); extra > 0 {
			k := rng.IntN(extra + 1)
			c.data = append(c.data, n.data[len(n.synced):len(n.synced)+k]...)
		}
	}
	c.syncLocked()
	return c
}

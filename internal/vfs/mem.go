package vfs

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// Mem is an in-memory FS that keeps, beside the current state, what is
// durable under the package's durability model: for each file the content as
// of its last Sync, for each directory the entries as of its last SyncDir.
// Crash and CrashTorn return what a machine would find after a power loss.
// Paths are cleaned and rooted at "/" ("a/b" and "/a/b" are the same file).
// Mem is safe for concurrent use; one mutex guards the whole tree.
type Mem struct {
	mu   sync.Mutex
	root *memNode
}

// memNode is a file (an inode: renames move it, open handles keep it) or a
// directory.
type memNode struct {
	dir bool

	// Files.
	data   []byte // current content
	synced []byte // content at the last Sync; a separate copy, never aliased

	// Directories.
	children       map[string]*memNode // current entries
	syncedChildren map[string]*memNode // entries at the last SyncDir
}

func newMemDir() *memNode {
	return &memNode{dir: true, children: map[string]*memNode{}, syncedChildren: map[string]*memNode{}}
}

// NewMem returns an empty in-memory FS holding only the root directory.
func NewMem() *Mem { return &Mem{root: newMemDir()} }

var _ FS = (*Mem)(nil)

func pathErr(op, name string, err error) error { return &fs.PathError{Op: op, Path: name, Err: err} }

// splitPath returns name's components below the root; none for the root.
func splitPath(name string) []string {
	p := strings.Trim(filepath.ToSlash(filepath.Clean(name)), "/")
	if p == "" || p == "." {
		return nil
	}
	return strings.Split(p, "/")
}

// walkLocked returns the node at parts.
func (m *Mem) walkLocked(op, name string, parts []string) (*memNode, error) {
	n := m.root
	for _, p := range parts {
		if !n.dir {
			return nil, pathErr(op, name, syscall.ENOTDIR)
		}
		c, ok := n.children[p]
		if !ok {
			return nil, pathErr(op, name, fs.ErrNotExist)
		}
		n = c
	}
	return n, nil
}

// parentLocked returns the directory that holds name's entry and the entry's
// name. The root has no parent.
func (m *Mem) parentLocked(op, name string) (*memNode, string, error) {
	parts := splitPath(name)
	if len(parts) == 0 {
		return nil, "", pathErr(op, name, syscall.EINVAL)
	}
	d, err := m.walkLocked(op, name, parts[:len(parts)-1])
	if err != nil {
		return nil, "", err
	}
	if !d.dir {
		return nil, "", pathErr(op, name, syscall.ENOTDIR)
	}
	return d, parts[len(parts)-1], nil
}

func (m *Mem) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f := &memFile{fs: m, name: name}
	switch flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) {
	case os.O_RDONLY:
		f.readable = true
	case os.O_WRONLY:
		f.writable = true
	default:
		f.readable, f.writable = true, true
	}
	f.appendMode = flag&os.O_APPEND != 0
	parts := splitPath(name)
	if len(parts) == 0 {
		if f.writable {
			return nil, pathErr("open", name, syscall.EISDIR)
		}
		f.node = m.root
		return f, nil
	}
	d, base, err := m.parentLocked("open", name)
	if err != nil {
		return nil, err
	}
	n, ok := d.children[base]
	switch {
	case ok && flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
		return nil, pathErr("open", name, fs.ErrExist)
	case !ok && flag&os.O_CREATE == 0:
		return nil, pathErr("open", name, fs.ErrNotExist)
	case !ok:
		n = &memNode{}
		d.children[base] = n
	case n.dir && f.writable:
		return nil, pathErr("open", name, syscall.EISDIR)
	}
	if flag&os.O_TRUNC != 0 && f.writable {
		n.data = nil
	}
	f.node = n
	return f, nil
}

func (m *Mem) Rename(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	od, ob, err := m.parentLocked("rename", oldname)
	if err != nil {
		return err
	}
	n, ok := od.children[ob]
	if !ok {
		return pathErr("rename", oldname, fs.ErrNotExist)
	}
	nd, nb, err := m.parentLocked("rename", newname)
	if err != nil {
		return err
	}
	// As os.Rename on Unix: an existing directory is never replaced (it
	// refuses with EEXIST before asking the kernel), not even by itself.
	t, exists := nd.children[nb]
	switch {
	case exists && t.dir:
		return pathErr("rename", newname, syscall.EEXIST)
	case od == nd && ob == nb:
		return nil
	case n.dir && isWithin(splitPath(newname), splitPath(oldname)):
		return pathErr("rename", newname, syscall.EINVAL)
	case exists && n.dir:
		return pathErr("rename", newname, syscall.ENOTDIR)
	}
	delete(od.children, ob)
	nd.children[nb] = n
	return nil
}

// isWithin reports whether p is q or below it.
func isWithin(p, q []string) bool {
	return len(p) >= len(q) && slices.Equal(p[:len(q)], q)
}

func (m *Mem) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, b, err := m.parentLocked("remove", name)
	if err != nil {
		return err
	}
	n, ok := d.children[b]
	switch {
	case !ok:
		return pathErr("remove", name, fs.ErrNotExist)
	case n.dir && len(n.children) > 0:
		return pathErr("remove", name, syscall.ENOTEMPTY)
	}
	delete(d.children, b)
	return nil
}

func (m *Mem) RemoveAll(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, b, err := m.parentLocked("removeall", name)
	if err != nil {
		if len(splitPath(name)) > 0 && errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	delete(d.children, b)
	return nil
}

func (m *Mem) MkdirAll(name string, perm fs.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.root
	for _, p := range splitPath(name) {
		c, ok := n.children[p]
		if !ok {
			c = newMemDir()
			n.children[p] = c
		} else if !c.dir {
			return pathErr("mkdir", name, syscall.ENOTDIR)
		}
		n = c
	}
	return nil
}

func (m *Mem) ReadDir(name string) ([]fs.DirEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.walkLocked("readdirent", name, splitPath(name))
	if err != nil {
		return nil, err
	}
	if !n.dir {
		return nil, pathErr("readdirent", name, syscall.ENOTDIR)
	}
	names := slices.Sorted(maps.Keys(n.children))
	out := make([]fs.DirEntry, len(names))
	for i, nm := range names {
		out[i] = fs.FileInfoToDirEntry(n.children[nm].infoLocked(nm))
	}
	return out, nil
}

func (m *Mem) Stat(name string) (fs.FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.walkLocked("stat", name, splitPath(name))
	if err != nil {
		return nil, err
	}
	return n.infoLocked(filepath.Base(name)), nil
}

func (m *Mem) SyncDir(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.walkLocked("sync", name, splitPath(name))
	if err != nil {
		return err
	}
	if !n.dir {
		return pathErr("sync", name, syscall.ENOTDIR)
	}
	n.syncLocked()
	return nil
}

// syncLocked makes n's current state durable.
func (n *memNode) syncLocked() {
	if n.dir {
		n.syncedChildren = maps.Clone(n.children)
		return
	}
	n.synced = append(n.synced[:0:0], n.data...)
}

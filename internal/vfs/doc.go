// Package vfs is the file-system seam. Storage code takes an FS instead of
// calling package os, so that tests can run it on an in-memory file system that
// loses what was not made durable (Mem, Mem.Crash) or that fails chosen
// operations (NewFaulty).
//
// # Durability model
//
// The model is POSIX's, as Mem enforces it and as real file systems may
// behave after a power loss:
//
//   - A file's bytes are durable up to its size at its last Sync or Datasync.
//     Bytes written (or a truncation done) after that may or may not survive.
//   - A directory entry (a create, rename or remove in the directory) is
//     durable only after SyncDir of that directory. Syncing a file does not
//     make its name durable, and syncing a directory does not make its own
//     entry in its parent durable.
//
// Hence the crash-safe file protocol of atomic.go: write temp → fsync →
// rename → fsync dir; delete by renaming to .deleted, fsync dir, unlink.
package vfs

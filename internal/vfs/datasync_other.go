//go:build !linux

package vfs

// Datasync falls back to fsync where fdatasync is not available.
func (f osFile) Datasync() error { return f.Sync() }

package log

import "errors"

var (
	// ErrOffsetOutOfRange: the offset is below Start() or above End().
	ErrOffsetOutOfRange = errors.New("log: offset out of range")
	// ErrNotBatchBoundary: TruncateTo was given an offset inside a batch.
	ErrNotBatchBoundary = errors.New("log: offset is not a batch boundary")
	// ErrInvalidBatch: Append was given bytes that are not whole valid v2 batches.
	ErrInvalidBatch = errors.New("log: invalid record batch")
	// ErrNotContiguous: Append was given a batch whose base offset is not the
	// next offset of the log (or of the previous batch).
	ErrNotContiguous = errors.New("log: batch offsets not contiguous")
	// ErrCorrupt: a file read back from disk broke an invariant.
	ErrCorrupt = errors.New("log: corrupt segment")
	// ErrClosed: the log was closed.
	ErrClosed = errors.New("log: closed")
)

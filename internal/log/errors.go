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
	// next offset of the log (or of the previous batch); AppendReplicated
	// and Replacement.Append, a batch that does not start past the
	// previous one (it overlaps it or goes back).
	ErrNotContiguous = errors.New("log: batch offsets not contiguous")
	// ErrCorrupt: a file read back from disk broke an invariant.
	ErrCorrupt = errors.New("log: corrupt segment")
	// ErrClosed: the log was closed.
	ErrClosed = errors.New("log: closed")
	// ErrReplacementStale: Replacement.Commit found that the segments it
	// was to replace changed since BeginReplacement (retention or
	// DeleteRecords deleted some, TruncateTo cut them, the log closed). The
	// copy was dropped and the log is unchanged; a later pass starts again.
	ErrReplacementStale = errors.New("log: replaced segments changed")
	// ErrReplacementInProgress: BeginReplacement was called while another
	// replacement of the same log was neither committed nor aborted.
	ErrReplacementInProgress = errors.New("log: a replacement is already in progress")
)

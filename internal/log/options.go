package log

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/vfs"
)

// Options configure one partition's local log. The zero value is invalid; start
// from DefaultOptions.
type Options struct {
	Dir string
	// SegmentBytes is segment.bytes: the active segment is rolled when the next
	// batch would make it larger. A single batch larger than this still goes into
	// an empty segment.
	SegmentBytes int64
	// SegmentMaxAge is segment.ms: the active segment is rolled when its first
	// append is older than this. Zero means never.
	SegmentMaxAge time.Duration
	// IndexIntervalBytes is index.interval.bytes: an offset (and maybe time) index
	// entry is added once more than this many bytes were appended since the last one.
	IndexIntervalBytes int
	// SegmentIndexBytes is segment.index.bytes: the active segment is rolled when
	// its offset or time index would hold more than this many bytes.
	SegmentIndexBytes int
	Clock             clock.Clock
	// FS is where the log's files live; nil means the real file system
	// (vfs.Default). Every file operation of the log goes through it.
	FS vfs.FS
	// ZeroFill runs a goroutine that keeps the active segment zero-filled
	// and synced ahead of its write position, so that an fdatasync after an
	// append writes the data without the file's metadata (zerofill.go),
	// while the log appends no faster than zeroFillMaxBytesPerSec. Fixed at
	// Open; SetOptions ignores it.
	ZeroFill bool
	// OnFail, if set, hears the I/O error that makes the log fail-stop
	// (from then on every call that would change it returns that error),
	// once. It runs under the log's lock and must not call the log. Fixed
	// at Open; SetOptions ignores it.
	OnFail func(error)
	// OnSync, if set, hears how long each fdatasync round took: the
	// fdatasyncs of the segments and index files it covered, with the
	// directory and recovery-point syncs when it had them (Kafka's
	// LogFlushRateAndTimeMs). A round that fails is not heard. It runs
	// without the log's lock, on the goroutine that led the round. Fixed
	// at Open; SetOptions ignores it.
	OnSync func(time.Duration)
}

// ErrInvalidOptions is wrapped by Options.Validate.
var ErrInvalidOptions = errors.New("log: invalid options")

// DefaultOptions returns Kafka's defaults for a log in dir.
func DefaultOptions(dir string, c clock.Clock) Options {
	return Options{
		Dir:                dir,
		SegmentBytes:       1 << 30,
		SegmentMaxAge:      7 * 24 * time.Hour,
		IndexIntervalBytes: 4096,
		SegmentIndexBytes:  10 << 20,
		Clock:              c,
	}
}

// Validate reports the first invalid field.
func (o Options) Validate() error {
	switch {
	case o.Dir == "":
		return fmt.Errorf("%w: Dir is empty", ErrInvalidOptions)
	// Positions are stored as uint32 in the offset index; MaxInt32 keeps them
	// clear of that even with one oversized batch in an empty segment.
	case o.SegmentBytes < record.HeaderSize || o.SegmentBytes > math.MaxInt32:
		return fmt.Errorf("%w: SegmentBytes %d not in [%d, %d]", ErrInvalidOptions, o.SegmentBytes, record.HeaderSize, math.MaxInt32)
	case o.SegmentMaxAge < 0:
		return fmt.Errorf("%w: SegmentMaxAge %v is negative", ErrInvalidOptions, o.SegmentMaxAge)
	case o.IndexIntervalBytes < 0:
		return fmt.Errorf("%w: IndexIntervalBytes %d is negative", ErrInvalidOptions, o.IndexIntervalBytes)
	case o.SegmentIndexBytes < timeEntrySize || o.SegmentIndexBytes > math.MaxInt32:
		return fmt.Errorf("%w: SegmentIndexBytes %d not in [%d, %d]", ErrInvalidOptions, o.SegmentIndexBytes, timeEntrySize, math.MaxInt32)
	case o.Clock == nil:
		return fmt.Errorf("%w: Clock is nil", ErrInvalidOptions)
	}
	return nil
}

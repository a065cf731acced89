// Package log is the local segmented log of one partition directory.
//
// # Layout
//
// A partition directory holds segments named by their 20-digit zero-padded
// base offset, as in Kafka:
//
//	00000000000000000000.log        record batches (magic v2), exactly as served in Fetch
//	00000000000000000000.index      sparse offset index, 8-byte entries {relOffset u32, position u32}
//	00000000000000000000.timeindex  sparse time index, 12-byte entries {timestamp i64, relOffset u32}
//	recovery-point                  where crash recovery starts scanning (see recovery_point.go)
//	.clean-shutdown                 present only while the log is closed cleanly
//	start-over                      a TruncateFullyAndStartAt in progress (truncate_fully.go)
//
// Files of operations in progress (all removed by Open, except a .log.swap,
// whose swap Open finishes first):
//
//	<base>.log.cleaned              a compacted copy being written (replace.go)
//	<base>.index.swap, .timeindex.swap  its index files, written at Commit
//	<base>.log.swap                 a copy past its commit point, being swapped in
//	*.deleted                       a segment file being deleted
//	*.tmp                           a small file being written whole
//
// All integers on disk are big-endian. Index files are written by appending
// whole entries, not preallocated (Kafka preallocates and trims on roll): a file's
// size is always a multiple of its entry size, so there is nothing to trim and
// a torn index is detected by its size alone. Every index is also held in memory;
// the files are its persistent copy. The active segment's index files are
// written when it is sealed (Roll) and at Close; after a crash they are rebuilt,
// because the active segment is always at or after the recovery point.
//
// # Invariants
//
//   - Segments tile the offsets: segs[i+1].base == segs[i].next, so a sealed
//     segment's range [base, next) ends at its successor's base. The last
//     segment is the active one and the only one appended to. Start() is the
//     first segment's base offset, End() the active segment's next offset;
//     [Start, End) is half-open.
//   - A segment's .log holds, below its size, whole valid v2 batches. The
//     active segment's offsets are contiguous from its base offset: Append
//     checks framing, CRC and contiguity before writing. A sealed segment
//     that compaction rewrote (replace.go) holds batches with strictly
//     ascending, non-overlapping offsets inside its range, with gaps where
//     records or whole batches were removed, possibly none at all; its data
//     may end (dataEnd) before its range does. Recovery keeps the longest
//     valid prefix.
//   - Every gap lies below the persisted recovery point rp: a batch that
//     does not start where the batch before it (or the segment) ends starts
//     at or below rp, and so does a segment whose predecessor's data ends
//     short of it. Above rp everything was appended, so recovery treats a jump
//     there as damage (the CRC does not cover a batch's base offset).
//     Replacement.Commit brings rp up to the end of the range it replaces
//     before the copy can be found; TruncateTo never lowers rp below what it
//     keeps of a segment with gaps. Without a valid rp, recovery accepts gaps
//     in every sealed segment and none in the last.
//   - Reads serve, for an offset o, the first batch whose last offset is at
//     or after o: the batch holding o, or in a gap the next batch, possibly
//     in a later segment (Kafka's fetch semantics). TruncateTo(o) cuts before
//     the first batch at or after o and leaves End() == o; what stays of a
//     segment with gaps stays sealed, and a new active segment starts at o.
//     With Options.ZeroFill the active segment's file may run on past its data
//     with zeros (zerofill.go); roll and Close cut it back, durably before the
//     recovery point or the clean-shutdown marker passes it, and recovery takes
//     an all-zero tail for the end of the data.
//   - Offset index entries have strictly increasing relative offsets and positions;
//     each points at the first byte of a batch whose base offset is base+rel.
//     There is no entry for position 0: a lookup below the first entry answers 0.
//   - A time index entry (T, O) means: T is the largest batch max timestamp among
//     the batches up to and including the batch at O, and O is the first batch that
//     reached T. Timestamps strictly increase between entries; an entry is added only
//     together with an offset index entry and only if the max timestamp grew.
//   - DurableEnd() <= End(). Data below DurableEnd survives a crash. The persisted
//     recovery point rp <= DurableEnd; every segment wholly below it (whose
//     successor starts at or below rp) has a durable .log and durable index files,
//     so recovery trusts it and scans only the rest. Sync advances rp to the
//     active segment's base after a roll; Open and Close set it to End().
//   - Whole small files (recovery-point, .clean-shutdown) are written temp → fsync →
//     rename → fsync dir. Segments are deleted by renaming to .deleted, syncing the
//     directory, then unlinking; the tail of the log newest first. Open removes
//     leftover .deleted/.tmp/.cleaned/.swap files, after finishing the swap of
//     every <B>.log.swap: the segment files whose base offset is in [B, L] (L
//     the last offset in the swap, B if it holds none) are deleted, and the
//     swap and its index files are renamed into place (indexes missing are
//     rebuilt by a scan). A compacted copy replaces consecutive sealed
//     segments in one crash-safe swap (replace.go): after a crash at any
//     point each offset range holds the old segments or the copy, never
//     both, never neither.
//     TruncateFullyAndStartAt(o) writes the start-over intent file (its
//     commit point), deletes every segment, creates an empty one at o,
//     persists o as the recovery point and removes the intent; Open
//     finishes an intent it finds, so after a crash the log is the old one
//     or the empty one at o.
//     Open creates a missing directory durably (it fsyncs the parent of each
//     directory it creates), so that the directory cannot vanish with its data.
//
// # File system
//
// Every file operation goes through Options.FS (the real file system when nil).
// The crash tests run the log on vfs.Mem, crash it before every operation that
// makes something durable (crash_test.go) and check that what Sync acknowledged
// survives; testdata/sync_order.golden pins the order of those operations.
//
// # Concurrency
//
// Two locks, always taken in this order: lifecycle (a RWMutex) then mu.
// Append and Roll take only mu. Read, OffsetForTimestamp and the fdatasync of Sync
// hold lifecycle shared while they do file I/O without mu, so reads never block
// appends. TruncateTo, TruncateFullyAndStartAt, DeleteSegmentsBefore and Close
// hold lifecycle exclusively, because they shrink or close files that a reader
// might be reading.
// A Replacement holds no lock while it is written (BeginReplacement,
// Append), so appends, reads and syncs go on; its Commit holds lifecycle
// exclusively from its check of the replaced segments to the end of the
// swap, and mu only to check and to swap the segment list. A log has at
// most one Replacement at a time.
//
// A failed write or fsync makes the log fail-stop: every later Append, Sync and
// Roll returns that error (after a failed fsync the page cache state is unknown).
package log

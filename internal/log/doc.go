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
//   - A segment's .log holds, below its size, whole valid v2 batches whose
//     offsets strictly ascend inside its range [base, next), each batch's
//     last offset within MaxUint32 of the base (the reach of the index's
//     relative offsets). There may be gaps, offsets that no batch holds:
//     between batches, before the first, after the last, or no batch at
//     all. Compaction leaves them in sealed segments (replace.go);
//     AppendReplicated, a follower appending its leader's batches, leaves
//     them anywhere, the active segment included (the leader's cleaner
//     removed those offsets, as Kafka's followers of compacted topics see).
//     Append, the leader's path, checks framing, magic, the CRC (in
//     invariants builds; the produce gateway checked it) and that each
//     batch starts exactly at End(), so a leader adds no gap;
//     AppendReplicated checks the same but that each starts at or after
//     End(). A segment's data may end (dataEnd) before its range does: a
//     compacted one, one sealed by a roll past the index's reach (below),
//     and the active one after TruncateTo(o) with o in a gap.
//   - An append rolls the active segment at End(): a gap before the batch
//     that rolled lies inside the new segment. Only a batch whose last
//     offset is past the reach of an index based at End() (a gap of more
//     than 2^32 offsets; it rolls even an empty segment) starts a segment
//     at its own base offset, as Kafka's maybeRoll does for every roll:
//     the sealed segment's range then ends there, past its data.
//   - Recovery, the scan of the segments at or after the persisted
//     recovery point rp, keeps in each segment the longest prefix of
//     batches that are each framed (a sane length within the file, magic
//     2), pass their CRC-32C, start at or after the end of the batch before
//     them (or the base offset), keep their last offset within the index's
//     reach and end at or below the successor's base. A gap before a batch
//     is accepted, as Kafka's LogSegment.recover accepts it. At the first
//     batch that fails, the segment is cut and every later one deleted.
//     This is safe because what a crash leaves of a file's unsynced tail is
//     a short file, zeros (zerofill.go; blocks reserved or never written
//     read as zeros) or a torn batch, and each fails framing or the CRC: a
//     torn batch is never served, and a batch that passes both was written
//     whole, so no acknowledged batch is cut. Contiguity checked one thing
//     more: the CRC covers neither the base offset nor the leader epoch (it
//     starts at the attributes). A base offset damaged downward, into the
//     batch before or below it, still cuts the log there; one damaged
//     upward now reads as a gap, so that batch is kept at wrong offsets and
//     the batch after it, which it overlaps, is cut (or, if it was the last,
//     End() moves up). Kafka has the same exposure; it takes damage to
//     those 8 bytes alone, which torn writes do not cause.
//   - A segment whose data ends short of its successor's base is kept with
//     that successor only if the base is at or below rp; otherwise the
//     successor and every later segment go. That is what a crash leaves
//     when it lost an unsynced tail of the segment but kept the directory
//     entry of its successor, and dropping the successor then loses nothing
//     acknowledged: a Sync round makes every segment durable before it
//     moves rp up to the active segment's base, so no segment above rp
//     holds synced data. Such gaps between segments come from compaction
//     (Replacement.Commit brings rp up to the end of the range it replaces
//     before the copy can be found), from TruncateTo into a sealed segment
//     with gaps (which lowers rp to o at most), from a roll past the
//     index's reach (kept once the next Sync covers it) and from Close
//     (which writes rp = End()). Without a valid rp, every successor is
//     kept.
//   - Reads serve, for an offset o, the first batch whose last offset is at
//     or after o: the batch holding o, or in a gap the next batch, possibly
//     in a later segment (Kafka's fetch semantics). TruncateTo(o) cuts before
//     the first batch at or after o and leaves End() == o. If o is in the
//     active segment, or in a sealed one whose kept batches run contiguously
//     up to o, that segment becomes the active one, its range ending at o
//     (past its data if o is in a gap); what stays of another sealed
//     segment stays sealed, ending at o, and a new active segment starts
//     at o. After a crash End() may come back lower than such an o, at the
//     end of the data (nothing lay between); Close rolls a new segment at
//     End() when End() is past the data, so a clean reopen keeps it.
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
//   - DurableEnd() <= End(). Data below DurableEnd survives a crash (End()
//     may come back lower only where no batch lay, see above). The persisted
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
// makes something durable (crash_test.go; gapWorkload for a follower's
// appends with gaps) and check that what Sync acknowledged survives;
// testdata/sync_order.golden pins the order of those operations.
//
// # Concurrency
//
// Two locks, always taken in this order: lifecycle (a RWMutex) then mu.
// Append, AppendReplicated and Roll take only mu. Read, OffsetForTimestamp and the fdatasync of Sync
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

// Package record reads, checks and rewrites Kafka RecordBatch v2 bytes: the
// format a segment's .log holds and a Fetch serves unchanged.
//
// Contract:
//   - Every function that takes bytes from outside (a produce request, a
//     segment read at recovery, a fetched replica) checks lengths against the
//     bytes present before reading or allocating; no length prefix is trusted.
//     Fuzz targets pin this: no input panics.
//   - Validate is the produce gateway: after it returns nil, the batch's header
//     is sane, its CRC matches, and, if uncompressed, every record parses and
//     carries offset delta == its index. Interior code relies on that.
//   - Errors meant for clients are *Error, carrying a Kafka error code.
//     Anything else (a codec that fails to initialise) is an operational error.
//   - Rewrites (SetBaseOffset, SetPartitionLeaderEpoch, SetLogAppendTime) work
//     in place and never allocate; the ones touching CRC-covered bytes
//     recompute the CRC.
//   - The only batch the broker builds itself is a transaction marker
//     (AppendEndTxnMarker, byte for byte Kafka's); ParseEndTxnMarker reads
//     one back. Validate refuses control batches from clients, and allows a
//     coordinator's batch (Limits.FromCoordinator) to carry no sequence.
//   - Compress, Decompress and Recompress append to a caller's dst, so callers
//     control buffer reuse; codec state is pooled, never built per call.
//   - Decompressed output is bounded (MaxDecompressedBytes) so a small
//     compressed batch cannot make the broker allocate without limit.
//
// Byte ranges are half-open: ValidPrefix returns n such that b[:n] holds
// whole, intact batches.
package record

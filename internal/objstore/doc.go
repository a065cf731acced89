// Package objstore is the object-storage seam of the remote tier: a Store
// holds immutable objects under '/'-separated keys. NewDir keeps them in a
// plain directory (the laptop default, ./strata-data/remote), NewS3 in an
// S3 bucket (AWS S3 or any S3-compatible server), NewMem in memory (for
// tests of other packages), and NewFaulty wraps any of them to inject
// failures, lost operations and latency (for tests of failed uploads and
// deletes: the DANGLING path of DESIGN.md §4).
//
// # Contract
//
// Every implementation passes the same contract tests (contract_test.go),
// S3 against a real S3-compatible server (versitygw):
//
//   - Put is atomic: a reader sees the whole old object or the whole new
//     one; a failed Put (a short body, a failing body, a cancelled context,
//     a crash) leaves no partial object. The body must hold exactly the
//     declared size (else ErrSizeMismatch).
//   - Get, GetRange and Head of a missing key fail with ErrNotFound.
//     GetRange reads the half-open range [off, off+n), cut at the end of
//     the object; n < 0 reads to the end.
//   - Delete of a missing key succeeds, so deletes can be retried.
//   - List visits the objects under a prefix in lexical (byte) order of
//     keys, paging underneath; fn's error stops it and is returned as is.
//   - Keys are checked at the gateway by the same rules in every store
//     (ValidateKey): nothing is sent to a disk or a bucket for an invalid
//     key, and the error wraps ErrInvalidKey.
//   - Errors are operational and classified with errors.Is (ErrNotFound,
//     ErrInvalidKey, ErrInvalidArgument, ErrInvalidRange, ErrSizeMismatch,
//     context.Canceled) and IsTransient (worth retrying later: throttling,
//     5xx, timeouts, broken connections). A missing object is never
//     transient, and an unreachable bucket is never ErrNotFound: a caller
//     that deletes what it believes gone must not be misled by an outage.
//   - All methods are safe for concurrent use; readers returned by Get and
//     GetRange must be closed.
//
// # Invariants of the implementations
//
// Dir: the object "a/b" is the file root/a/b. Put writes a temporary file
// (named with the reserved ".strata-" prefix) in the object's directory,
// fsyncs it, renames it over the object and fsyncs the directory; new
// directories are fsynced into their parents. List never shows temporary
// files and NewDir deletes them. A directory cannot hold both "a" and
// "a/b", and such a Put fails.
//
// S3: S3Options.Prefix is prepended to every key and stripped from List's
// keys; stores with different prefixes share a bucket without seeing each
// other. NewS3 checks the bucket with HeadBucket, so a wrong endpoint,
// bucket, region or credential fails at start with one line naming the
// bucket and the endpoint and saying what to check.
package objstore

// Package broker keeps the partitions hosted on this node in step with the
// metadata image: it opens a partition when the image assigns it here,
// applies topic config changes, and closes and deletes partitions whose
// topic is gone. It also runs the per-broker background loops (retention
// checks, time-based flushes) and hands out producer ids. Options.OnOpen
// and OnClose tell the composition root about each partition opened here and
// each about to close, which is how __consumer_offsets partitions start and
// resign their group coordinators without the broker knowing coordinators.
// The tier executors' per-partition counts follow the same opens and closes
// (tier_stats.go): a deleted topic's counts, and so its metrics, go with it.
//
// Invariants: a partition directory belongs to exactly one topic id (stored
// in its partition.metadata file); a directory whose topic id is not in the
// image is deleted, never reused.
package broker

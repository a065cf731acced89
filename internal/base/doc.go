// Package base is Strata's vocabulary: offsets, half-open offset ranges, leader
// epochs and their lineage (where each began, and Kafka's answer to
// OffsetForLeaderEpoch from it), producer ids and topic-partitions. It imports
// nothing of Strata's.
//
// Invariants: a Range is half-open, [Start, End), and valid only when
// Start <= End. A name ending in End or Next is exclusive.
package base

// Package offsets adapts a __consumer_offsets partition to the coordinator
// runtime: Adapter implements runtime.Log (replay from the log start) and
// runtime.Appender (one uncompressed v2 batch per append, acknowledged after
// fdatasync), and PartitionFor maps a group id to its partition as Kafka does.
//
// Contract:
//   - ReadFrom returns the records of non-control batches at offsets >= from
//     (from is raised to the log start), in log order, with keys and values
//     copied out of the read buffer; next is one past the last batch read.
//   - Append writes all records as ONE batch (base offset assigned by the
//     partition), with producer id -1 and CreateTime timestamps from the
//     injected clock; its wait returns once the batch is fdatasynced
//     (partition.AcksAll on a one-replica ISR).
//   - A closed partition, or one this broker now follows
//     (partition.ErrNotLeader), is reported as runtime.ErrNotLeader, so the
//     runtime answers NOT_COORDINATOR and the client looks up its
//     coordinator again.
//
// The topic is created with cleanup.policy=compact: the broker's log
// cleaner keeps the last record of each key, so ReadFrom may find offset
// gaps, and a replay sees each group's and offset's last state.
package offsets

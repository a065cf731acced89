// Package metrics is Strata's Prometheus metrics (DESIGN §8), with the
// names of Kafka's metrics where Kafka has one. It is a leaf: it imports
// base and the Prometheus client, nothing of the broker. The packages that
// count (tier, broker, server) keep plain counters and snapshots, and cmd
// hands them to the collectors here as functions, which are called when
// /metrics is scraped: no value is copied on a timer, and no package below
// cmd imports Prometheus.
//
// Naming. Every name starts with strata_ and is the Kafka metric's name in
// Prometheus form (snake case, unit last); each HELP text ends with the
// Kafka MBean it stands for, so a Kafka dashboard maps one to one:
//   - a Kafka meter XxxPerSec is the counter strata_xxx_total; its
//     rate() is Kafka's rate (RemoteCopyBytesPerSec is
//     rate(strata_remote_copy_bytes_total[1m]));
//   - a Kafka gauge keeps its name: RemoteCopyLagBytes is the gauge
//     strata_remote_copy_lag_bytes, except that a Count becomes the plural
//     of what is counted, as Prometheus reserves _count for histograms
//     (RemoteLogMetadataCount is strata_remote_log_metadata_entries,
//     PartitionCount is strata_partitions);
//   - Kafka's topic tag is the label topic; the tier's metrics also carry
//     partition, which Kafka computes but sums per topic
//     (sum by (topic) gives Kafka's value).
//
// A partition's series live while the broker hosts it, as Kafka removes a
// partition's metrics with it: once its topic is deleted (or the partition
// leaves this broker) they are gone from the next scrape, and a topic
// created again under the same name counts from zero, which rate() reads
// as a counter reset. The sources keep that promise (tier.Stats.Forget);
// the collectors export what the sources hold at each scrape, nothing more.
//
// Strata's own metrics, with no Kafka counterpart, follow the same form
// (strata_remote_dangling_segments).
package metrics

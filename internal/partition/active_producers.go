package partition

import "github.com/strata-broker/strata/internal/partition/producers"

// Producers returns the partition's producer state, one entry per active
// producer ordered by producer id (for DescribeProducers, as Kafka's
// UnifiedLog.activeProducers). It is taken under the partition's lock, so
// every entry and the open transactions among them are from the same
// moment: no append or marker lands halfway through. The entries are
// copies the caller may keep.
func (p *Partition) Producers() []producers.Entry {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.producers.Entries()
}

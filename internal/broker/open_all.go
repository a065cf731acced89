package broker

import (
	"sync"

	"github.com/strata-broker/strata/internal/metadata"
)

// openAll opens the partitions of as, b.opts.OpenWorkers at a time (at a
// start after a crash each may recover its log: a scan of its unflushed
// tail and a rebuild of its indexes, work that several cores and a deep
// disk queue do faster side by side). It returns the opened partitions in
// the order of as, and an error for each that failed. The caller holds
// b.hosting, not b.mu.
func (b *Broker) openAll(img *metadata.Image, as []assignment) ([]*hosted, []error) {
	results := make([]*hosted, len(as))
	errs := make([]error, len(as))
	openOne := func(i int) {
		a := as[i]
		results[i], errs[i] = b.open(a.tp, a.topic, a.part, configSources(img, b.opts.NodeID, a.topic))
	}
	if workers := min(b.opts.OpenWorkers, len(as)); workers <= 1 {
		for i := range as {
			openOne(i)
		}
	} else {
		next := make(chan int)
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for i := range next {
					openOne(i)
				}
			})
		}
		for i := range as {
			next <- i
		}
		close(next)
		wg.Wait()
	}
	opened := make([]*hosted, 0, len(as))
	var failed []error
	for i := range as {
		if errs[i] != nil {
			failed = append(failed, errs[i])
			continue
		}
		opened = append(opened, results[i])
	}
	return opened, failed
}

package broker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/vfs"
)

const (
	producerIDFile = "producer-id-block"
	// producerIDBlock ids are reserved on disk at a time, so handing out an
	// id costs an fsync only once per block.
	producerIDBlock = 1000
)

// producerIDs hands out producer ids that are never reused across restarts:
// the end of the reserved block is persisted before any id in it is used.
// In a cluster (this broker is registered) blocks come from the metadata
// quorum instead, so that no two brokers hand out the same id: a producer
// id shared by two producers would make one's batches look like the
// other's duplicates, and the broker would drop them.
type producerIDs struct {
	dir string
	// clusterBlock, when it returns ok, gives the first id of a block of
	// metadata.ProducerIDBlockSize ids from the quorum.
	clusterBlock func() (start int64, ok bool, err error)
	mu           struct {
		sync.Mutex
		next, reservedEnd base.ProducerID
		fromCluster       bool // the current block came from the quorum
	}
}

func openProducerIDs(dir string) (*producerIDs, error) {
	p := &producerIDs{dir: dir}
	data, err := os.ReadFile(filepath.Join(dir, producerIDFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return p, nil
	case err != nil:
		return nil, err
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil || v < 0 {
		return nil, fmt.Errorf("%s is corrupt (%q); it must hold the next free producer id", filepath.Join(dir, producerIDFile), data)
	}
	p.mu.next, p.mu.reservedEnd = base.ProducerID(v), base.ProducerID(v)
	return p, nil
}

func (p *producerIDs) next() (base.ProducerID, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.clusterBlock != nil && (p.mu.fromCluster || p.mu.next == p.mu.reservedEnd) {
		if p.mu.fromCluster && p.mu.next < p.mu.reservedEnd {
			id := p.mu.next
			p.mu.next++
			return id, nil
		}
		start, ok, err := p.clusterBlock()
		if err != nil {
			return 0, err
		}
		if ok {
			p.mu.next, p.mu.reservedEnd = base.ProducerID(start), base.ProducerID(start+metadata.ProducerIDBlockSize)
			p.mu.fromCluster = true
			id := p.mu.next
			p.mu.next++
			return id, nil
		}
	}
	if p.mu.next == p.mu.reservedEnd {
		end := p.mu.reservedEnd + producerIDBlock
		if err := vfs.WriteFileAtomic(p.dir, producerIDFile, []byte(strconv.FormatInt(int64(end), 10)+"\n")); err != nil {
			return 0, err
		}
		p.mu.reservedEnd = end
	}
	id := p.mu.next
	p.mu.next++
	return id, nil
}

// producerIDBlockTimeout bounds asking the quorum for a block.
const producerIDBlockTimeout = 10 * time.Second

// clusterProducerIDBlock asks the quorum for a block of producer ids when
// this broker is registered (a cluster); ok is false on a single node.
func (b *Broker) clusterProducerIDBlock() (int64, bool, error) {
	reg, ok := b.opts.Meta.Image().Brokers[b.opts.NodeID]
	if !ok {
		return 0, false, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), producerIDBlockTimeout)
	defer cancel()
	start, err := b.opts.Meta.AllocateProducerIDs(ctx, b.opts.NodeID, reg.Epoch)
	if err != nil {
		return 0, false, fmt.Errorf("allocating producer ids: %w", err)
	}
	return start, true, nil
}

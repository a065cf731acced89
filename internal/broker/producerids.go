package broker

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/strata-broker/strata/internal/base"
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
type producerIDs struct {
	dir string
	mu  struct {
		sync.Mutex
		next, reservedEnd base.ProducerID
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

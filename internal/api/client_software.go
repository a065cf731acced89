package api

import (
	"context"
	"sync"
)

// software is what a client said of itself in ApiVersions v3+ (KIP-511).
type software struct{ name, version string }

// connSoftware is what each connection's client said of itself, by
// connection id, from its ApiVersions until the connection closes: client
// metrics subscriptions match on it (KIP-714).
type connSoftware struct {
	mu sync.Mutex
	by map[uint64]software
}

func newConnSoftware() *connSoftware { return &connSoftware{by: map[uint64]software{}} }

// set records connection id's client software; connCtx ends with the
// connection, which forgets it.
func (c *connSoftware) set(connCtx context.Context, id uint64, s software) {
	if id == 0 {
		return
	}
	c.mu.Lock()
	_, known := c.by[id]
	c.by[id] = s
	c.mu.Unlock()
	if !known {
		context.AfterFunc(connCtx, func() {
			c.mu.Lock()
			delete(c.by, id)
			c.mu.Unlock()
		})
	}
}

func (c *connSoftware) get(id uint64) software {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.by[id]
}

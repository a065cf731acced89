package api

import (
	"context"
	"sync"

	"github.com/strata-broker/strata/internal/clientmetrics"
)

// clientInstanceConns ties each client metrics instance (KIP-714) to the
// connection it last asked or pushed on: when that connection closes, the
// instance is forgotten, its subscription state and its last push (Kafka's
// ClientConnectionDisconnectListener), so that a client gone without a
// terminating push does not linger on the metrics endpoint. An instance
// that moved to another connection is not forgotten when an earlier one
// closes.
type clientInstanceConns struct {
	mu     sync.Mutex
	connOf map[clientmetrics.InstanceID]uint64
}

func newClientInstanceConns() *clientInstanceConns {
	return &clientInstanceConns{connOf: map[clientmetrics.InstanceID]uint64{}}
}

// use records that instance id spoke on connection connID, whose context
// connCtx ends when it closes; then forget(id) runs unless id spoke on
// another connection since.
func (c *clientInstanceConns) use(connCtx context.Context, connID uint64, id clientmetrics.InstanceID, forget func(clientmetrics.InstanceID)) {
	if connID == 0 {
		return
	}
	c.mu.Lock()
	prev, known := c.connOf[id]
	c.connOf[id] = connID
	c.mu.Unlock()
	if known && prev == connID {
		return
	}
	context.AfterFunc(connCtx, func() {
		c.mu.Lock()
		last := c.connOf[id] == connID
		if last {
			delete(c.connOf, id)
		}
		c.mu.Unlock()
		if last {
			forget(id)
		}
	})
}

// forgetClientInstance drops instance id from the client metrics registry
// and the pushed metrics.
func (h *Handler) forgetClientInstance(id clientmetrics.InstanceID) {
	h.opts.ClientMetrics.Forget(id)
	h.opts.ClientMetricsPushed.Forget(id)
}

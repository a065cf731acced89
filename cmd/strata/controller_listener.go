package main

import (
	"log/slog"
	"net"
	"sync"

	"github.com/strata-broker/strata/internal/api"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/server"
)

// A cluster node's controller listener belongs to the metadata quorum,
// which routes each new connection by its opening bytes; those of Kafka
// clients (admin clients bootstrapped from the controllers, KIP-919) it
// sends on a connQueue's channel, which a server accepts from as from a
// listener, serving the controller's APIs.

// connQueue is a net.Listener whose connections are sent on conns. One
// sent after Close waits for its sender to give up (the metadata quorum
// closes it as it closes).
type connQueue struct {
	addr   net.Addr
	conns  chan net.Conn // unbuffered: a sender waits for Accept
	closed chan struct{}
	once   sync.Once
}

func newConnQueue(addr string) *connQueue {
	return &connQueue{addr: listenerAddr(addr), conns: make(chan net.Conn), closed: make(chan struct{})}
}

// Accept returns the next connection handed over (net.Listener).
func (q *connQueue) Accept() (net.Conn, error) {
	select {
	case c := <-q.conns:
		return c, nil
	case <-q.closed:
		return nil, net.ErrClosed
	}
}

// Close ends Accept (net.Listener). Idempotent.
func (q *connQueue) Close() error {
	q.once.Do(func() { close(q.closed) })
	return nil
}

// Addr is the controller listener's configured address (net.Listener).
func (q *connQueue) Addr() net.Addr { return q.addr }

// listenerAddr is a configured host:port as a net.Addr.
type listenerAddr string

func (a listenerAddr) Network() string { return "tcp" }
func (a listenerAddr) String() string  { return string(a) }

// serveControllerListener builds the server of the controller listener's
// Kafka clients, on the queue the metadata quorum hands them to: the
// controller's APIs of h (api.Handler.SupportedOnControllerListener), on
// a PLAINTEXT listener, its connections counted with the others.
func (n *node) serveControllerListener(cfg *config.Broker, h *api.Handler, logger *slog.Logger) error {
	handler := n.metrics.countRequests(handlerAdapter{h: h, controller: true})
	srv, err := server.New(n.serverOptions(cfg, cfg.ControllerListenerName, n.controllerConns, handler))
	if err != nil {
		return err
	}
	n.controllerServer = srv
	return nil
}

package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/strata-broker/strata/internal/metrics"
	"github.com/strata-broker/strata/internal/sasl"
)

// Defaults, Kafka's where Kafka has one.
const (
	// DefaultMaxRequestBytes is socket.request.max.bytes (100 MiB).
	DefaultMaxRequestBytes int32 = 100 << 20
	// DefaultMaxInFlightPerConn bounds the pending replies of one connection.
	DefaultMaxInFlightPerConn = 100
	// DefaultIdleTimeout is connections.max.idle.ms (10 minutes).
	DefaultIdleTimeout = 10 * time.Minute
	// DefaultDrainGrace is how long a connection is still read at Shutdown.
	DefaultDrainGrace = 250 * time.Millisecond
)

// Options configures a Server. Zero numeric fields and a nil Logger take
// the defaults above; Listener and Handler are required.
type Options struct {
	// Listener is injected (cmd creates it); the server closes it.
	Listener net.Listener
	// Handler handles every decoded request.
	Handler Handler
	// MaxRequestBytes is the largest frame accepted (socket.request.max.bytes).
	MaxRequestBytes int32
	// MaxInFlightPerConn bounds the queue of replies waiting to be written on
	// one connection; the reader stops reading while the queue is full.
	MaxInFlightPerConn int
	// Logger receives connection-level events. Nil discards them.
	Logger *slog.Logger
	// IdleTimeout closes a connection that has read nothing and has nothing
	// in flight for this long (connections.max.idle.ms); it also bounds a
	// single socket write.
	IdleTimeout time.Duration
	// DrainGrace is how long Shutdown still reads each connection: the
	// requests clients sent before they could see the shutdown are answered
	// (by a handler that knows it is stopping: NOT_LEADER_OR_FOLLOWER once
	// leaderships moved) rather than met with a close.
	DrainGrace time.Duration
	// RequestTimes, if set, receives where each request's time went
	// (Kafka's RequestMetrics phases). Nil reads no clock per request.
	RequestTimes RequestObserver
	// ListenerName names the listener (as in the listeners config, e.g.
	// SASL_SSL); handlers see it in ConnInfo to answer with that
	// listener's advertised address.
	ListenerName string
	// TLS, if set, serves TLS on every connection (SSL and SASL_SSL).
	TLS *tls.Config
	// SASL, if set, requires every connection to authenticate with one of
	// its mechanisms before any request but ApiVersions and SaslHandshake
	// (SASL_PLAINTEXT and SASL_SSL).
	SASL *sasl.Config
	// FailedAuthenticationDelay holds the answer to a failed SASL
	// authentication, and the close that follows, this long
	// (connection.failed.authentication.delay.ms, KIP-306).
	FailedAuthenticationDelay time.Duration
	// Authentications, if set, is told the outcome of every SASL
	// authentication.
	Authentications AuthObserver
	// MaxReauth, if positive, is the lifetime of a SASL session
	// (connections.max.reauth.ms, KIP-368): SaslAuthenticate v1+ tells the
	// client, which re-authenticates before it ends; a connection that
	// sends anything else after it is closed. SASL.Reauthenticate must be
	// set with it.
	MaxReauth time.Duration
	// MapCertificate, if set, turns a TLS client certificate's subject
	// (RFC 2253) into the principal's name (ssl.principal.mapping.rules);
	// ok false refuses the connection, as Kafka fails the authentication
	// when no rule applies. Nil keeps the subject.
	MapCertificate func(subject string) (name string, ok bool)
	// SendBufferBytes and ReceiveBufferBytes, if positive, size the
	// kernel's send and receive buffers of every accepted TCP connection
	// (socket.send.buffer.bytes, socket.receive.buffer.bytes); 0 or -1
	// (Kafka's value for it) leaves the OS default.
	SendBufferBytes    int
	ReceiveBufferBytes int
	// Limits, if set, counts this listener's connections with those of the
	// broker's other listeners and applies the connection limits
	// (max.connections, max.connections.per.ip and its overrides). Nil: no
	// limits.
	Limits *ConnLimits
	// InterBroker marks the inter-broker listener: its connections count
	// towards Limits but are never held back by the broker-wide limit
	// (Kafka lets them in even when max.connections is reached); the
	// per-address limits still apply.
	InterBroker bool
}

// AuthObserver receives the outcome of each SASL authentication;
// *metrics.Authentications is one. mechanism is "" when the handshake
// named a mechanism that is not enabled. Safe for concurrent use.
type AuthObserver interface {
	Observe(listener, mechanism string, ok bool)
}

// RequestObserver receives the timing of each request once its response
// is written or dropped; *metrics.RequestTimes is one. It must be safe for
// concurrent use.
type RequestObserver interface {
	Observe(metrics.RequestTiming)
}

// maxMaxInFlightPerConn keeps a typo from allocating a huge channel.
const maxMaxInFlightPerConn = 1 << 16

// Validate reports every invalid option, joined.
func (o Options) Validate() error {
	var errs []error
	if o.Listener == nil {
		errs = append(errs, errors.New("server: Options.Listener is required"))
	}
	if o.Handler == nil {
		errs = append(errs, errors.New("server: Options.Handler is required"))
	}
	if o.MaxRequestBytes < 0 {
		errs = append(errs, fmt.Errorf("server: Options.MaxRequestBytes %d is negative", o.MaxRequestBytes))
	}
	if o.MaxInFlightPerConn < 0 || o.MaxInFlightPerConn > maxMaxInFlightPerConn {
		errs = append(errs, fmt.Errorf("server: Options.MaxInFlightPerConn %d is outside [0, %d]", o.MaxInFlightPerConn, maxMaxInFlightPerConn))
	}
	if o.IdleTimeout < 0 {
		errs = append(errs, fmt.Errorf("server: Options.IdleTimeout %v is negative", o.IdleTimeout))
	}
	if o.DrainGrace < 0 {
		errs = append(errs, fmt.Errorf("server: Options.DrainGrace %v is negative", o.DrainGrace))
	}
	if o.FailedAuthenticationDelay < 0 || o.FailedAuthenticationDelay >= o.withDefaults().IdleTimeout {
		errs = append(errs, fmt.Errorf("server: Options.FailedAuthenticationDelay %v must be in [0, the idle timeout)", o.FailedAuthenticationDelay))
	}
	if o.SASL != nil {
		if err := o.SASL.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("server: Options.SASL: %w", err))
		}
	}
	if o.MaxReauth < 0 || (o.MaxReauth > 0 && (o.SASL == nil || !o.SASL.Reauthenticate)) {
		errs = append(errs, fmt.Errorf("server: Options.MaxReauth %v needs SASL with Reauthenticate", o.MaxReauth))
	}
	if o.SendBufferBytes < -1 {
		errs = append(errs, fmt.Errorf("server: Options.SendBufferBytes %d is below -1", o.SendBufferBytes))
	}
	if o.ReceiveBufferBytes < -1 {
		errs = append(errs, fmt.Errorf("server: Options.ReceiveBufferBytes %d is below -1", o.ReceiveBufferBytes))
	}
	return errors.Join(errs...)
}

// withDefaults fills zero fields with the defaults.
func (o Options) withDefaults() Options {
	if o.MaxRequestBytes == 0 {
		o.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if o.MaxInFlightPerConn == 0 {
		o.MaxInFlightPerConn = DefaultMaxInFlightPerConn
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.DrainGrace == 0 {
		o.DrainGrace = DefaultDrainGrace
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

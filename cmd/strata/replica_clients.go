package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
)

// replicaClients are this broker's connections to the other brokers for
// replica fetches: one franz-go client per leader and replica fetcher
// (num.replica.fetchers), dialed at the endpoint the leader registered for
// the inter-broker listener, and dialed again when that endpoint changes
// (the leader restarted elsewhere). The other requests between brokers
// (transaction verification and markers) share fetcher 0's.
type replicaClients struct {
	meta     *metadata.Store
	listener string
	opts     []kgo.Opt

	mu     sync.Mutex
	byKey  map[replicaClientKey]replicaClient
	closed bool
}

// replicaClientKey names one connection: the broker and the fetcher.
type replicaClientKey struct {
	broker  int32
	fetcher int
}

type replicaClient struct {
	addr string
	cl   *kgo.Client
}

// newReplicaClients builds the clients of cfg's inter-broker listener. Its
// protocol decides how they connect: TLS for SSL and SASL_SSL, trusting
// ssl.truststore and presenting the broker's keystore (as Kafka's brokers
// do); SASL for SASL_PLAINTEXT and SASL_SSL, with
// sasl.mechanism.inter.broker.protocol and the broker's own username and
// password from the listener's JAAS config.
//
// certs, when set, holds the inter-broker listener's keystore and
// truststore as they change at run time (listenerTLSSet): each new
// connection presents the current certificate and trusts the current CAs,
// so that a renewal keeps replication going.
func newReplicaClients(cfg *config.Broker, meta *metadata.Store, certs *listenerTLSSet) (*replicaClients, error) {
	l, ok := listenerNamed(cfg.Listeners, cfg.InterBrokerListener)
	if !ok {
		return nil, fmt.Errorf("inter.broker.listener.name %s is not one of listeners; name one of them", cfg.InterBrokerListener)
	}
	opts := []kgo.Opt{
		kgo.ClientID("strata-replica-" + strconv.Itoa(int(cfg.NodeID))),
		kgo.DisableClientMetrics(),
		kgo.DialTimeout(cfg.ReplicaFetch.SocketTimeout),
		kgo.RequestTimeoutOverhead(cfg.ReplicaFetch.SocketTimeout),
		// Replica fetches carry up to replica.fetch.response.max.bytes
		// and one batch over it, which franz-go wants below the most it
		// reads of one response. That batch is as large as some topic's
		// max.message.bytes (an override, or a dynamic message.max.bytes)
		// lets a producer write: at most a produce request.
		kgo.FetchMaxBytes(cfg.ReplicaFetch.ResponseMaxBytes),
		kgo.BrokerMaxReadBytes(replicaMaxReadBytes(cfg)),
	}
	if l.UsesTLS() {
		tc, err := replicaTLS(cfg.TLSFor(l.Name))
		if err != nil {
			return nil, fmt.Errorf("inter.broker.listener.name %s: %w", l.Name, err)
		}
		opts = append(opts, kgo.Dialer(dialReplicaTLS(cfg.ReplicaFetch.SocketTimeout, certs.clientConfig(l.Name, tc))))
	}
	if l.UsesSASL() {
		m, err := replicaSASL(cfg.InterBrokerSASL)
		if err != nil {
			return nil, fmt.Errorf("inter.broker.listener.name %s uses %s: %w", l.Name, l.Protocol, err)
		}
		opts = append(opts, kgo.SASL(m))
	}
	return &replicaClients{meta: meta, listener: l.Name, opts: opts, byKey: map[replicaClientKey]replicaClient{}}, nil
}

func listenerNamed(ls []config.Listener, name string) (config.Listener, bool) {
	for _, l := range ls {
		if l.Name == name {
			return l, true
		}
	}
	return config.Listener{}, false
}

// replicaTLS is the client side of an SSL inter-broker listener: the
// truststore's CAs (the system's when none is set) verify the leader, and
// the broker's own certificate answers a leader that asks for one.
func replicaTLS(c config.TLSConfig) (*tls.Config, error) {
	cert, err := loadKeystore(c)
	if err != nil {
		return nil, err
	}
	out, err := clientTLS(c)
	if err != nil {
		return nil, err
	}
	out.Certificates = []tls.Certificate{cert}
	return out, nil
}

// dialReplicaTLS dials each replica connection with the TLS configuration
// current returns then: the inter-broker listener's keystore and truststore
// as they are now (listenerTLSSet.clientConfig), so that a certificate or
// CA renewed at run time reaches replication without a restart. The
// server name is the dialed host, as franz-go's DialTLSConfig sets it.
func dialReplicaTLS(timeout time.Duration, current func() *tls.Config) func(ctx context.Context, network, host string) (net.Conn, error) {
	return func(ctx context.Context, network, host string) (net.Conn, error) {
		cfg := current().Clone()
		if cfg.ServerName == "" {
			name, _, err := net.SplitHostPort(host)
			if err != nil {
				name = host
			}
			cfg.ServerName = name
		}
		d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: timeout}, Config: cfg}
		return d.DialContext(ctx, network, host)
	}
}

// clientTLS is how the broker, as a TLS client, trusts a server: c's
// truststore when it has one (else the system's CAs), c's protocols, and
// the server's host name checked unless ssl.endpoint.identification.algorithm
// is empty. It presents no certificate.
func clientTLS(c config.TLSConfig) (*tls.Config, error) {
	out := &tls.Config{}
	var err error
	if out.MinVersion, out.MaxVersion, err = tlsVersions(c.Protocols); err != nil {
		return nil, err
	}
	if c.TruststoreLocation != "" || c.TruststoreCertificates != "" {
		if out.RootCAs, err = loadTruststore(c); err != nil {
			return nil, err
		}
	}
	if !c.VerifyHostname {
		// ssl.endpoint.identification.algorithm is empty: the chain is
		// verified as usual, but not the name the server's certificate
		// was issued for.
		roots := out.RootCAs
		out.InsecureSkipVerify = true
		out.VerifyConnection = func(cs tls.ConnectionState) error { return verifyChain(cs.PeerCertificates, roots) }
	}
	return out, nil
}

// verifyChain checks that certs (the peer's, leaf first) chain to roots
// (nil: the system's) for server authentication, whatever names the leaf
// holds.
func verifyChain(certs []*x509.Certificate, roots *x509.CertPool) error {
	if len(certs) == 0 {
		return errors.New("the server sent no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	_, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	return err
}

// replicaSASL is the client side of a SASL inter-broker listener: the
// broker's own credentials, with the mechanism the other brokers expect.
// config.LoadBroker requires them in a cluster; a single node's config may
// lack them, and builds no replica clients.
func replicaSASL(s config.InterBrokerSASL) (sasl.Mechanism, error) {
	switch s.Mechanism {
	case config.MechanismPlain:
		return plain.Auth{User: s.User, Pass: s.Password}.AsMechanism(), nil
	case config.MechanismScramSHA256:
		return scram.Auth{User: s.User, Pass: s.Password}.AsSha256Mechanism(), nil
	case config.MechanismScramSHA512:
		return scram.Auth{User: s.User, Pass: s.Password}.AsSha512Mechanism(), nil
	case "":
		return nil, fmt.Errorf("the broker has no credentials for it; set %s (one of sasl.enabled.mechanisms) and username=\"...\" password=\"...\" in that listener's listener.name.<listener>.<mechanism>.sasl.jaas.config",
			"sasl.mechanism.inter.broker.protocol")
	}
	panic("replica clients: unvalidated sasl.mechanism.inter.broker.protocol " + s.Mechanism)
}

// client returns the connection to broker id that requests other than
// replica fetches take.
func (c *replicaClients) client(id int32) (kmsg.Requestor, error) { return c.fetcherClient(id, 0) }

// fetcherClient returns replica fetcher number fetcher's connection to
// broker id, as replication.Fetchers asks for one before every request.
func (c *replicaClients) fetcherClient(id int32, fetcher int) (kmsg.Requestor, error) {
	addr, err := c.address(id)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, fmt.Errorf("replica clients are closed")
	}
	key := replicaClientKey{broker: id, fetcher: fetcher}
	rc, ok := c.byKey[key]
	if ok && rc.addr != addr {
		rc.cl.Close()
		ok = false
	}
	if !ok {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, c.opts...)...)
		if err != nil {
			return nil, fmt.Errorf("client for broker %d at %s: %w", id, addr, err)
		}
		rc = replicaClient{addr: addr, cl: cl}
		c.byKey[key] = rc
	}
	return rc.cl.SeedBrokers()[0], nil
}

// address is where broker id registered the inter-broker listener.
func (c *replicaClients) address(id int32) (string, error) {
	b, ok := c.meta.Image().Brokers[id]
	if !ok {
		return "", fmt.Errorf("broker %d is not registered", id)
	}
	e, ok := b.Endpoint(c.listener)
	if !ok {
		return "", fmt.Errorf("broker %d registered no %s listener (inter.broker.listener.name)", id, c.listener)
	}
	return net.JoinHostPort(e.Host, strconv.Itoa(int(e.Port))), nil
}

// close closes every client; client fails afterwards.
func (c *replicaClients) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for key, rc := range c.byKey {
		rc.cl.Close()
		delete(c.byKey, key)
	}
}

// replicaMaxReadBytes is the largest replica fetch response a follower
// reads: replica.fetch.response.max.bytes, the largest batch a produce
// request can carry (socket.request.max.bytes), and room for the headers.
func replicaMaxReadBytes(cfg *config.Broker) int32 {
	return int32(min(int64(cfg.ReplicaFetch.ResponseMaxBytes)+int64(cfg.SocketRequestMaxBytes)+1<<20, 1<<30))
}

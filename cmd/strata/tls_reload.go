package main

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/metrics"
)

// listenerTLSSet holds the TLS configuration that each TLS listener's new
// connections get, and replaces one when the listener's keystore or
// truststore changes at run time (Kafka's KIP-226: kafka-configs
// --entity-type brokers --entity-name <id> --alter --add-config
// listener.name.<listener>.ssl.keystore.location=...). A file is read again
// whenever a metadata change comes, and taken when its bytes changed: so
// setting the same path again reloads a file renewed in place, as in
// Kafka. Connections already open keep the certificate they shook hands
// with.
type listenerTLSSet struct {
	mu        sync.Mutex // serialises loads: checks and applies
	listeners map[string]*listenerTLS
	logger    *slog.Logger
}

// listenerTLS is one listener's current configuration.
type listenerTLS struct {
	name string
	// interBroker: the other brokers dial this listener and verify its
	// certificate against their truststore, which is this listener's.
	interBroker bool
	cur         atomic.Pointer[loadedTLS]
	failed      string // the last failure logged; "" after a success
	// refused are the settings (and file sums) that last failed to load,
	// nil after a success: a change of other configs that leaves them as
	// they are is not refused for them (check).
	refused *loadedTLS
}

// loadedTLS is a configuration built from settings and the files they
// named, whose contents had sums.
type loadedTLS struct {
	settings config.TLSConfig
	sums     [2][sha256.Size]byte // keystore, truststore file; zero when inline or unset
	config   *tls.Config
	// client is how this broker connects to the others over the listener
	// (replicaTLS); built for the inter-broker listener only.
	client *tls.Config
}

func newListenerTLSSet(logger *slog.Logger) *listenerTLSSet {
	return &listenerTLSSet{listeners: map[string]*listenerTLS{}, logger: logger}
}

// add loads listener name's configuration from t, its settings with this
// broker's dynamic configs, or, when that fails and they differ, from the
// static settings, logging why: a broker starts on a certificate it could
// read, and a later change can fix the dynamic one. It returns the
// configuration the listener's server uses, which looks up the current one
// at each handshake.
func (s *listenerTLSSet) add(name string, interBroker bool, t, static config.TLSConfig) (*tls.Config, error) {
	l := &listenerTLS{name: name, interBroker: interBroker}
	loaded, err := l.load(t)
	if err != nil && !reflect.DeepEqual(t, static) {
		s.logger.Error("the listener's dynamic keystore or truststore cannot be used; it starts with its static ones", "listener", name, "err", err)
		loaded, err = l.load(static)
	}
	if err != nil {
		return nil, err
	}
	if !reflect.DeepEqual(loaded.settings, t) {
		l.refused = &loadedTLS{settings: t, sums: sumTLSFiles(t)}
	}
	l.cur.Store(loaded)
	s.mu.Lock()
	s.listeners[name] = l
	s.mu.Unlock()
	return &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		return l.cur.Load().config, nil
	}}, nil
}

// clientConfig returns what the broker connects to another with over
// the inter-broker listener, as that listener's keystore and truststore
// are now; start until the listener is added (and when s is nil).
func (s *listenerTLSSet) clientConfig(listener string, start *tls.Config) func() *tls.Config {
	return func() *tls.Config {
		if s == nil {
			return start
		}
		s.mu.Lock()
		l := s.listeners[listener]
		s.mu.Unlock()
		if l == nil || l.cur.Load().client == nil {
			return start
		}
		return l.cur.Load().client
	}
}

// check loads what b's settings would give each listener and returns the
// first failure, as a *config.Error naming the key to fix; it changes
// nothing. The api layer calls it before a change of this broker's dynamic
// configs is made. Settings that already failed, with the same files, do
// not fail the check: the change does not touch them, and refusing it
// would block every other dynamic config of the broker (apply keeps
// logging them).
func (s *listenerTLSSet) check(b *config.Broker) error { return s.checkSettings(b.TLSFor) }

// checkSettings is check with each listener's settings given by tlsFor.
func (s *listenerTLSSet) checkSettings(tlsFor func(listener string) config.TLSConfig) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.sorted() {
		t := tlsFor(l.name)
		if r := l.refused; r != nil && reflect.DeepEqual(r.settings, t) && r.sums == sumTLSFiles(t) {
			continue
		}
		if _, err := l.next(t); err != nil {
			return err
		}
	}
	return nil
}

// watch applies the settings of each new image to the listeners until the
// watcher is closed.
func (s *listenerTLSSet) watch(cfg *config.Broker, meta *metadata.Store) *imageWatcher {
	return watchImages(meta, func(_ context.Context, img *metadata.Image) {
		cluster, own := img.DynamicConfigsOf(cfg.NodeID)
		s.apply(cfg.WithDynamic(config.Dynamic{Default: cluster, Node: own}).TLSFor)
	})
}

// apply gives each listener what its settings (tlsFor: Broker.TLSFor)
// load, when that changed; a failure is logged once and the listener
// keeps what it has.
func (s *listenerTLSSet) apply(tlsFor func(listener string) config.TLSConfig) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.sorted() {
		t := tlsFor(l.name)
		next, err := l.next(t)
		l.refused = nil
		switch {
		case err != nil:
			l.refused = &loadedTLS{settings: t, sums: sumTLSFiles(t)}
			if err.Error() != l.failed {
				l.failed = err.Error()
				s.logger.Error("listener's new keystore or truststore not taken; it keeps the one it has", "listener", l.name, "err", err)
			}
		case next != nil:
			l.cur.Store(next)
			l.failed = ""
			leaf := next.config.Certificates[0].Leaf
			s.logger.Info("listener's keystore or truststore reloaded; new connections use it", "listener", l.name,
				"keystore", keystoreName(next.settings), "subject", leaf.Subject.String(), "serial", leaf.SerialNumber.String(),
				"not_after", leaf.NotAfter)
		default:
			l.failed = ""
		}
	}
}

// certificates are the listeners' current certificates, for
// strata_listener_certificate_expiry_timestamp_seconds.
func (s *listenerTLSSet) certificates() []metrics.ListenerCertificate {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []metrics.ListenerCertificate
	for _, l := range s.sorted() {
		out = append(out, metrics.ListenerCertificate{Listener: l.name, NotAfter: l.cur.Load().config.Certificates[0].Leaf.NotAfter})
	}
	return out
}

func (s *listenerTLSSet) sorted() []*listenerTLS {
	out := make([]*listenerTLS, 0, len(s.listeners))
	for _, l := range s.listeners {
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b *listenerTLS) int { return strings.Compare(a.name, b.name) })
	return out
}

// next is what settings t load for l: nil when neither they nor the files
// they name changed, else the new configuration, its certificate checked
// against the one it replaces (compatibleCertificates).
func (l *listenerTLS) next(t config.TLSConfig) (*loadedTLS, error) {
	cur := l.cur.Load()
	if reflect.DeepEqual(cur.settings, t) && sumTLSFiles(t) == cur.sums {
		return nil, nil
	}
	keystoreErr := func(err error) error {
		key, value := listenerSSLKey(l.name, "ssl.keystore.location"), keystoreName(t)
		if t.KeystoreLocation == "" {
			key = listenerSSLKey(l.name, "ssl.keystore.key")
		}
		return &config.Error{Key: key, Value: value, Msg: err.Error()}
	}
	if _, err := loadKeystore(t); err != nil {
		return nil, keystoreErr(err)
	}
	next, err := l.load(t)
	if err != nil { // the keystore loaded: the truststore did not
		key, value := listenerSSLKey(l.name, "ssl.truststore.location"), t.TruststoreLocation
		if t.TruststoreLocation == "" {
			key, value = listenerSSLKey(l.name, "ssl.truststore.certificates"), "(inline PEM)"
		}
		return nil, &config.Error{Key: key, Value: value, Msg: err.Error()}
	}
	if err := compatibleCertificates(cur.config.Certificates[0].Leaf, next.config.Certificates[0].Leaf, t.AllowDNChanges, t.AllowSANChanges); err != nil {
		return nil, keystoreErr(err)
	}
	if l.interBroker && next.client.RootCAs != nil { // a truststore is set
		if err := chainsToTruststore(next.config.Certificates[0], next.client.RootCAs); err != nil {
			return nil, keystoreErr(err)
		}
	}
	return next, nil
}

// chainsToTruststore checks that cert, the inter-broker listener's new
// certificate, chains to roots, the listener's truststore, which the other
// brokers verify it against (Kafka validates such an update the same way).
func chainsToTruststore(cert tls.Certificate, roots *x509.CertPool) error {
	intermediates := x509.NewCertPool()
	for _, der := range cert.Certificate[1:] {
		if c, err := x509.ParseCertificate(der); err == nil {
			intermediates.AddCert(c)
		}
	}
	if _, err := cert.Leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: intermediates, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		return fmt.Errorf("holds a certificate the other brokers would refuse: it does not chain to the inter-broker listener's truststore (%v)", err)
	}
	return nil
}

// load is loadListenerTLS, with the client configuration of the
// inter-broker listener.
func (l *listenerTLS) load(t config.TLSConfig) (*loadedTLS, error) {
	loaded, err := loadListenerTLS(t)
	if err != nil || !l.interBroker {
		return loaded, err
	}
	if loaded.client, err = replicaTLS(t); err != nil {
		return nil, err
	}
	return loaded, nil
}

// loadListenerTLS builds the configuration of t and notes its files' sums.
// The sums are taken first: a file replaced meanwhile is loaded again at
// the next look.
func loadListenerTLS(t config.TLSConfig) (*loadedTLS, error) {
	sums := sumTLSFiles(t)
	c, err := tlsConfig(t)
	if err != nil {
		return nil, err
	}
	return &loadedTLS{settings: t, sums: sums, config: c}, nil
}

// sumTLSFiles hashes the keystore and truststore files t names; a file
// that cannot be read sums to zero (tlsConfig says why it cannot be used).
func sumTLSFiles(t config.TLSConfig) [2][sha256.Size]byte {
	var out [2][sha256.Size]byte
	for i, path := range []string{t.KeystoreLocation, t.TruststoreLocation} {
		if path == "" {
			continue
		}
		if data, err := os.ReadFile(path); err == nil {
			out[i] = sha256.Sum256(data)
		}
	}
	return out
}

// compatibleCertificates refuses a new listener certificate whose subject
// differs from the old one's (unless allowDN) or that lacks one of its
// subject alternative names (unless allowSAN): clients and brokers that
// check the name they dialed must keep accepting the broker, as Kafka's
// ssl.allow.dn.changes and ssl.allow.san.changes guard.
func compatibleCertificates(old, next *x509.Certificate, allowDN, allowSAN bool) error {
	if !allowDN && old.Subject.String() != next.Subject.String() {
		return fmt.Errorf("holds a certificate for %q where the listener's has %q; the subject must stay (or set ssl.allow.dn.changes=true)",
			next.Subject.String(), old.Subject.String())
	}
	if allowSAN {
		return nil
	}
	if missing := missingNames(subjectAltNames(old), subjectAltNames(next)); len(missing) > 0 {
		return fmt.Errorf("holds a certificate without the subject alternative names %s of the listener's; keep them (or set ssl.allow.san.changes=true)",
			strings.Join(missing, ", "))
	}
	return nil
}

// subjectAltNames lists c's alternative names, each with its kind.
func subjectAltNames(c *x509.Certificate) []string {
	var out []string
	for _, n := range c.DNSNames {
		out = append(out, "DNS:"+n)
	}
	for _, ip := range c.IPAddresses {
		out = append(out, "IP:"+ip.String())
	}
	for _, e := range c.EmailAddresses {
		out = append(out, "email:"+e)
	}
	for _, u := range c.URIs {
		out = append(out, "URI:"+u.String())
	}
	return out
}

// missingNames are the names of want that have is without.
func missingNames(want, have []string) []string {
	set := make(map[string]bool, len(have))
	for _, n := range have {
		set[n] = true
	}
	var out []string
	for _, n := range want {
		if !set[n] {
			out = append(out, n)
		}
	}
	return out
}

// listenerSSLKey is listener's own form of the TLS key key.
func listenerSSLKey(listener, key string) string {
	return "listener.name." + strings.ToLower(listener) + "." + key
}

// keystoreName is where t's keystore comes from, for messages.
func keystoreName(t config.TLSConfig) string {
	if t.KeystoreLocation != "" {
		return t.KeystoreLocation
	}
	return "(inline PEM)"
}

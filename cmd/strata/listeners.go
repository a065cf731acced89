package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-broker/strata/internal/api"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/sasl"
	"github.com/strata-broker/strata/internal/server"
)

// boundListener is one configured listener, listening.
type boundListener struct {
	cfg config.Listener
	ln  net.Listener
}

// listenAll listens on every configured listener; if one fails, those
// already open are closed.
func listenAll(cfg *config.Broker) ([]boundListener, error) {
	out := make([]boundListener, 0, len(cfg.Listeners))
	for _, l := range cfg.Listeners {
		ln, err := net.Listen("tcp", l.Addr())
		if err != nil {
			closeAll(out)
			return nil, fmt.Errorf("cannot listen on %s for listener %s (%v); choose another address in listeners (or with --listen)", l.Addr(), l.Name, err)
		}
		out = append(out, boundListener{cfg: l, ln: ln})
	}
	return out, nil
}

func closeAll(ls []boundListener) {
	for _, l := range ls {
		_ = l.ln.Close()
	}
}

// advertisedAddresses is, per listener, the address clients are told to
// connect to: its entry in advertised.listeners when that names it, else
// the bound address (so a listener on port 0 advertises its real port, and
// one on every interface advertises 127.0.0.1).
func advertisedAddresses(cfg *config.Broker, ls []boundListener) (map[string]api.Address, error) {
	_, set := cfg.Raw["advertised.listeners"]
	out := make(map[string]api.Address, len(ls))
	for _, l := range ls {
		if a, ok := cfg.Advertised(l.cfg.Name); ok && set && a.Port > 0 {
			out[l.cfg.Name] = api.Address{Host: a.Host, Port: int32(a.Port)}
			continue
		}
		host, portStr, err := net.SplitHostPort(l.ln.Addr().String())
		if err != nil {
			return nil, err
		}
		port, _ := strconv.Atoi(portStr)
		if host == "::" || host == "0.0.0.0" {
			host = "127.0.0.1"
		}
		out[l.cfg.Name] = api.Address{Host: host, Port: int32(port)}
	}
	return out, nil
}

// security is what a listener's protocol asks of its server: TLS for SSL
// and SASL_SSL, from tlsFor, and SASL for SASL_PLAINTEXT and SASL_SSL.
func security(cfg *config.Broker, l config.Listener, meta *metadata.Store, tokens sasl.TokenValidator, tlsFor func(config.Listener) (*tls.Config, error),
	plainUsers func(listener string) *atomic.Pointer[map[string]string]) (*tls.Config, *sasl.Config, error) {
	var (
		tc  *tls.Config
		sc  *sasl.Config
		err error
	)
	if l.UsesTLS() {
		if tc, err = tlsFor(l); err != nil {
			return nil, nil, err
		}
	}
	if l.UsesSASL() {
		sc = &sasl.Config{
			Mechanisms:     cfg.SASLMechanisms,
			Credentials:    credentials{plain: plainUsers(l.Name), meta: meta},
			Reauthenticate: cfg.MaxReauth > 0,
			Tokens:         tokens,
			// SCRAM's tokenauth (KIP-48).
			DelegationTokens: saslDelegationTokens(cfg, meta),
		}
		if err := sc.Validate(); err != nil {
			return nil, nil, fmt.Errorf("listener %s: %w", l.Name, err)
		}
	}
	return tc, sc, nil
}

// credentials are what SASL sessions check: PLAIN users from the
// listener's JAAS config (this broker's dynamic one first: plainUsersSet),
// SCRAM credentials from the metadata quorum (so an
// AlterUserScramCredentials applies to the next authentication).
type credentials struct {
	plain *atomic.Pointer[map[string]string]
	meta  *metadata.Store
}

func (c credentials) PlainPassword(user string) (string, bool) {
	pw, ok := (*c.plain.Load())[user]
	return pw, ok
}

func (c credentials) Scram(mechanism, user string) (sasl.ScramCredential, bool) {
	cred, ok := c.meta.Image().ScramCredential(mechanism, user)
	if !ok {
		return sasl.ScramCredential{}, false
	}
	return sasl.ScramCredential{Salt: cred.Salt, StoredKey: cred.StoredKey, ServerKey: cred.ServerKey, Iterations: cred.Iterations}, true
}

// listening is the ready line's list of addresses: the address alone for
// one listener (the line scripts and tests read), else each with its name.
func listening(servers []*server.Server, names []string) string {
	if len(servers) == 1 {
		return servers[0].Addr().String()
	}
	parts := make([]string, len(servers))
	for i, s := range servers {
		parts[i] = fmt.Sprintf("%s (%s)", s.Addr(), names[i])
	}
	return strings.Join(parts, ", ")
}

// shutdownServers shuts every listener's server down at once: each stops
// accepting and finishes its in-flight requests within ctx.
func shutdownServers(ctx context.Context, servers []*server.Server) error {
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, srv := range servers {
		wg.Go(func() { errs[i] = srv.Shutdown(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// checkSecurity loads what the TLS listeners need before anything starts,
// so that a missing or unusable keystore is one clear line at startup.
// A broker with metadata on disk may have replaced a listener's keystore
// at run time (a dynamic config, kept there) and the operator removed the
// static file: its listeners are checked as they start instead, dynamic
// keystore first (listenerTLSSet.add).
func checkSecurity(cfg *config.Broker) error {
	for _, l := range cfg.Listeners {
		if l.UsesTLS() {
			if _, err := tlsConfig(cfg.TLSFor(l.Name)); err != nil && !hasEntries(cfg.MetadataDir) {
				return err
			}
		}
	}
	return nil
}

// hasEntries reports whether dir exists and holds anything.
func hasEntries(dir string) bool {
	entries, err := os.ReadDir(dir)
	return err == nil && len(entries) > 0
}

// sessionLifetime is connections.max.reauth.ms for a SASL listener, 0 for
// the others (their connections have no SASL session).
func sessionLifetime(cfg *config.Broker, sc *sasl.Config) time.Duration {
	if sc == nil {
		return 0
	}
	return cfg.MaxReauth
}

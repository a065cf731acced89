package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/oauth"
	"github.com/strata-broker/strata/internal/sasl"
)

// tokenValidator is one listener's sasl.TokenValidator: unsecured tokens
// (keys nil), or tokens signed with a key of the JWKS keys holds.
type tokenValidator struct {
	opts oauth.Options
	keys *jwksSource
	now  func() time.Time
}

func newTokenValidator(v config.OAuthValidation, keys *jwksSource) *tokenValidator {
	return &tokenValidator{
		opts: oauth.Options{PrincipalClaim: v.PrincipalClaim, ScopeClaim: v.ScopeClaim, RequiredScopes: v.RequiredScopes,
			ExpectedAudience: v.ExpectedAudience, ExpectedIssuer: v.ExpectedIssuer, ClockSkew: v.ClockSkew,
			RequireIssuedAt: v.Secured},
		keys: keys,
		now:  time.Now,
	}
}

func (v *tokenValidator) ValidateToken(token string) (string, time.Time, error) {
	var t oauth.Token
	var err error
	if v.keys == nil {
		t, err = oauth.ValidateUnsecured(token, v.opts, v.now())
	} else {
		set, ok := v.keys.current()
		if !ok {
			return "", time.Time{}, &sasl.TokenRejection{Status: oauth.StatusInvalidToken,
				Message: "the key set at " + v.keys.url + " has not been fetched yet"}
		}
		t, err = oauth.ValidateSigned(token, set, v.opts, v.now())
	}
	var oe *oauth.Error
	if errors.As(err, &oe) {
		if oe.UnknownKey {
			v.keys.refreshSoon()
		}
		return "", time.Time{}, &sasl.TokenRejection{Status: oe.Status, Scope: oe.Scope, Message: oe.Message}
	}
	if err != nil {
		return "", time.Time{}, err
	}
	return t.Principal, t.Expires, nil
}

// tokenValidators are the OAUTHBEARER validators of a broker's listeners;
// listeners with the same key set settings share its source.
type tokenValidators struct {
	byListener map[string]*tokenValidator
	sources    map[jwksSettings]*jwksSource
}

// jwksSettings are what a key set source is made of.
type jwksSettings struct {
	url                            string
	refresh, backoff, backoffLimit time.Duration
	trust                          string // the TLS settings, as text
}

// startTokenValidators builds the validators cfg.OAuth asks for and, when
// a listener verifies signatures, starts fetching the key set: a key set
// in a file must load now (a bad path or document is the operator's to
// fix); one behind a URL that does not answer yet is fetched again in the
// background while its listeners refuse tokens.
func startTokenValidators(cfg *config.Broker, logger *slog.Logger) (*tokenValidators, error) {
	tv := &tokenValidators{byListener: make(map[string]*tokenValidator, len(cfg.OAuth)), sources: map[jwksSettings]*jwksSource{}}
	for _, name := range slices.Sorted(maps.Keys(cfg.OAuth)) {
		v := cfg.OAuth[name]
		var keys *jwksSource
		if v.Secured {
			settings := jwksSettings{url: v.JWKSURL, refresh: v.JWKSRefresh, backoff: v.RetryBackoff, backoffLimit: v.RetryBackoffMax,
				trust: fmt.Sprintf("%q %q %v %q", v.TLS.TruststoreLocation, v.TLS.TruststoreCertificates, v.TLS.VerifyHostname, v.TLS.Protocols)}
			if keys = tv.sources[settings]; keys == nil {
				var err error
				if keys, err = startJWKS(v, logger); err != nil {
					tv.close()
					return nil, fmt.Errorf("listener %s: %w", name, err)
				}
				tv.sources[settings] = keys
			}
		}
		if !v.Secured {
			logger.Warn("the listener takes unsecured OAUTHBEARER tokens (alg none), as Kafka's default validator does: anyone can name any principal; for development only. Verify signed tokens with "+
				"listener.name.<listener>.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler and sasl.oauthbearer.jwks.endpoint.url",
				"listener", name)
		}
		tv.byListener[name] = newTokenValidator(v, keys)
	}
	return tv, nil
}

// forListener is the listener's validator, nil (not sasl.TokenValidator
// holding a nil) when it has none.
func (tv *tokenValidators) forListener(name string) sasl.TokenValidator {
	if v, ok := tv.byListener[name]; ok {
		return v
	}
	return nil
}

func (tv *tokenValidators) close() {
	if tv == nil {
		return
	}
	for _, s := range tv.sources {
		s.close()
	}
}

// jwksMaxBytes bounds a key set document.
const jwksMaxBytes = 1 << 20

// jwksFetchTimeout bounds one fetch of the key set.
const jwksFetchTimeout = 10 * time.Second

// jwksKickInterval is the least time between two fetches a token with an
// unknown key id triggers.
const jwksKickInterval = time.Second

// jwksSource keeps a key set fetched from a URL, fetching it again every
// refresh interval, after a failure with a doubling backoff, and when a
// token names a key id it lacks.
type jwksSource struct {
	url                         string
	refresh, backoff, backoffMx time.Duration
	client                      *http.Client
	logger                      *slog.Logger
	kick                        chan struct{}
	cancel                      context.CancelFunc
	done                        chan struct{}

	mu     sync.Mutex
	set    oauth.KeySet
	loaded bool
}

func startJWKS(v config.OAuthValidation, logger *slog.Logger) (*jwksSource, error) {
	transport := &http.Transport{Proxy: http.ProxyFromEnvironment}
	if u, err := url.Parse(v.JWKSURL); err == nil && u.Scheme == "https" {
		if transport.TLSClientConfig, err = clientTLS(v.TLS); err != nil {
			return nil, fmt.Errorf("the TLS settings of the key set endpoint %s: %w", v.JWKSURL, err)
		}
	}
	s := &jwksSource{url: v.JWKSURL, refresh: v.JWKSRefresh, backoff: max(v.RetryBackoff, time.Millisecond),
		backoffMx: max(v.RetryBackoffMax, v.RetryBackoff, time.Millisecond), client: &http.Client{Timeout: jwksFetchTimeout, Transport: transport},
		logger: logger, kick: make(chan struct{}, 1), done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	err := s.fetch(ctx)
	if err != nil && isFileURL(s.url) {
		cancel()
		return nil, fmt.Errorf("sasl.oauthbearer.jwks.endpoint.url: %w; fix the file or the URL", err)
	}
	if err != nil {
		logger.Error("cannot fetch the OAUTHBEARER key set; tokens are refused until it is fetched", "url", s.url, "err", err)
	}
	go s.run(ctx, err == nil)
	return s, nil
}

func isFileURL(u string) bool {
	p, err := url.Parse(u)
	return err == nil && p.Scheme == "file"
}

// run fetches the set again, every refresh interval once it has it, with
// a backoff while it fails.
func (s *jwksSource) run(ctx context.Context, ok bool) {
	defer close(s.done)
	backoff := s.backoff
	last := time.Now()
	for {
		wait := s.refresh
		if !ok {
			wait = backoff
			backoff = min(2*backoff, s.backoffMx)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-s.kick:
			t.Stop()
			if d := jwksKickInterval - time.Since(last); d > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(d):
				}
			}
		}
		last = time.Now()
		err := s.fetch(ctx)
		if err != nil && ctx.Err() == nil {
			s.logger.Warn("cannot fetch the OAUTHBEARER key set; the keys fetched before stay", "url", s.url, "err", err)
		}
		if ok = err == nil; ok {
			backoff = s.backoff
		}
	}
}

// fetch reads and parses the set, keeping it when it parses.
func (s *jwksSource) fetch(ctx context.Context) error {
	data, err := s.read(ctx)
	if err != nil {
		return err
	}
	set, err := oauth.ParseKeySet(data)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.set, s.loaded = set, true
	s.mu.Unlock()
	return nil
}

func (s *jwksSource) read(ctx context.Context) ([]byte, error) {
	u, err := url.Parse(s.url)
	if err != nil {
		return nil, err
	}
	if u.Scheme == "file" {
		f, err := os.Open(u.Path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return io.ReadAll(io.LimitReader(f, jwksMaxBytes))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", s.url, resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, jwksMaxBytes))
}

// current is the set fetched last; ok is false before the first fetch.
func (s *jwksSource) current() (oauth.KeySet, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.set, s.loaded
}

// refreshSoon asks for a fetch now (at most one per jwksKickInterval).
func (s *jwksSource) refreshSoon() {
	if s == nil {
		return
	}
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *jwksSource) close() {
	s.cancel()
	<-s.done
}

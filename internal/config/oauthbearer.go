package config

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MechanismOAuthBearer is SASL/OAUTHBEARER (KIP-255, KIP-768).
const MechanismOAuthBearer = "OAUTHBEARER"

// The server callback handlers Kafka's OAUTHBEARER knows, by class name,
// as listener.name.<listener>.oauthbearer.sasl.server.callback.handler.class
// names them: unset or the unsecured one validates unsecured tokens (alg
// none; Kafka's default, for development), the validator (under its
// current and its Kafka 3.1 name) verifies signed tokens with the key set
// at sasl.oauthbearer.jwks.endpoint.url.
var (
	unsecuredValidatorClasses = []string{"org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredValidatorCallbackHandler"}
	securedValidatorClasses   = []string{
		"org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
		"org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerValidatorCallbackHandler",
	}
)

// oauthLoginModule is OAUTHBEARER's JAAS login module.
const oauthLoginModule = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"

// The JAAS options of the unsecured validator (Kafka's
// OAuthBearerUnsecuredValidatorCallbackHandler); the login options
// (unsecuredLogin*, the client credentials) configure the broker's own
// login, which Strata does not use (its brokers authenticate to each other
// with PLAIN or SCRAM), and are accepted as Kafka accepts them.
const (
	optPrincipalClaim = "unsecuredValidatorPrincipalClaimName"
	optScopeClaim     = "unsecuredValidatorScopeClaimName"
	optRequiredScope  = "unsecuredValidatorRequiredScope"
	optClockSkewMs    = "unsecuredValidatorAllowableClockSkewMs"
)

var oauthValidatorOptions = []string{optPrincipalClaim, optScopeClaim, optRequiredScope, optClockSkewMs}

var oauthLoginOptions = []string{"clientId", "clientSecret", "scope", "unsecuredLoginPrincipalClaimName",
	"unsecuredLoginLifetimeSeconds", "unsecuredLoginScopeClaimName"}

// oauthLoginOptionPrefixes are the login options named with a suffix.
var oauthLoginOptionPrefixes = []string{"unsecuredLoginStringClaim_", "unsecuredLoginNumberClaim_",
	"unsecuredLoginListClaim_", "unsecuredLoginExtension_"}

// isOAuthOption reports whether k is an option OAuthBearerLoginModule takes.
func isOAuthOption(k string) bool {
	return slices.Contains(oauthValidatorOptions, k) || slices.Contains(oauthLoginOptions, k) ||
		slices.ContainsFunc(oauthLoginOptionPrefixes, func(p string) bool { return strings.HasPrefix(k, p) && len(k) > len(p) })
}

// oauthDefs are Kafka's broker configs of the signed-token validator
// (KIP-768).
var oauthDefs = []Def{
	def("sasl.oauthbearer.jwks.endpoint.url", String, "", "", validJWKSURL,
		"URL of the JSON Web Key Set whose keys verify OAUTHBEARER tokens, on listeners whose oauthbearer.sasl.server.callback.handler.class is OAuthBearerValidatorCallbackHandler: https://, http:// or file:// (read again at each refresh)."),
	def("sasl.oauthbearer.jwks.endpoint.refresh.ms", Long, "3600000", "", atLeast(1),
		"How often the key set is fetched again; a token naming a key id the set lacks also triggers a fetch."),
	def("sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", Long, "100", "", atLeast(0),
		"First wait before a failed fetch of the key set is tried again; it doubles up to sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms."),
	def("sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms", Long, "10000", "", atLeast(0),
		"Longest wait between tries of a failing fetch of the key set."),
	def("sasl.oauthbearer.expected.audience", List, "", "", nil,
		"Audiences a signed token's aud claim must name one of; empty: not checked."),
	def("sasl.oauthbearer.expected.issuer", String, "", "", nil,
		"The iss claim a signed token must have; empty: not checked."),
	def("sasl.oauthbearer.sub.claim.name", String, "sub", "", nonEmpty,
		"Claim of a signed token whose value is the principal (User:<value>)."),
	def("sasl.oauthbearer.scope.claim.name", String, "scope", "", nonEmpty,
		"Claim of a signed token that lists its scopes."),
	def("sasl.oauthbearer.clock.skew.seconds", Int, "30", "", atLeast(0),
		"Leeway of the time checks of a signed token (exp, iat, nbf)."),
}

func validJWKSURL(v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	switch {
	case err != nil:
		return fmt.Errorf("is not a URL: %v", err)
	case u.Scheme == "https" || u.Scheme == "http":
		if u.Host == "" {
			return errors.New("names no host")
		}
	case u.Scheme == "file":
		if u.Path == "" {
			return errors.New("names no file; write file:///path/to/jwks.json")
		}
	default:
		return fmt.Errorf("has the scheme %q; use https://, http:// or file://", u.Scheme)
	}
	return nil
}

// OAuthValidation is how one listener validates OAUTHBEARER tokens.
type OAuthValidation struct {
	// Secured verifies signatures with the keys at JWKSURL (Kafka's
	// OAuthBearerValidatorCallbackHandler); else tokens are unsecured
	// (alg none), as with Kafka's default handler.
	Secured          bool
	JWKSURL          string
	JWKSRefresh      time.Duration
	RetryBackoff     time.Duration
	RetryBackoffMax  time.Duration
	PrincipalClaim   string
	ScopeClaim       string
	RequiredScopes   []string // unsecured only (unsecuredValidatorRequiredScope)
	ExpectedAudience []string // secured only
	ExpectedIssuer   string   // secured only
	ClockSkew        time.Duration
	// TLS is how an https key set endpoint is trusted: the listener's
	// ssl.* settings (its truststore, protocols, host name check), as
	// Kafka builds the key set client from the same configs.
	TLS TLSConfig
}

// OAUTHBEARER's listener-prefixed keys, as Kafka reads its callback
// handler's configs (valuesWithPrefixOverride of
// listener.name.<listener>.oauthbearer.): the handler class, and each
// sasl.oauthbearer.* key for one listener, over the broker-wide value.
const (
	oauthHandlerKey       = "sasl.server.callback.handler.class"
	oauthListenerInfix    = ".oauthbearer."
	oauthHandlerKeyForm   = jaasKeyPrefix + "<listener>" + oauthListenerInfix + oauthHandlerKey
	oauthListenerKeyForm  = jaasKeyPrefix + "<listener>" + oauthListenerInfix + "sasl.oauthbearer.<key>"
	oauthListenerEnvInfix = "_OAUTHBEARER_"
)

// oauthListenerKeys are the keys a listener may set for OAUTHBEARER alone.
var oauthListenerKeys = append([]string{oauthHandlerKey}, func() []string {
	var out []string
	for _, d := range oauthDefs {
		out = append(out, d.Name)
	}
	return out
}()...)

// parseOAuthListenerKey parses listener.name.<listener>.oauthbearer.<key>
// with a lower-case listener and a key of oauthListenerKeys.
func parseOAuthListenerKey(key string) (listener, k string, ok bool) {
	mid, ok := strings.CutPrefix(key, jaasKeyPrefix)
	if !ok {
		return "", "", false
	}
	for _, k := range oauthListenerKeys {
		listener, ok := strings.CutSuffix(mid, oauthListenerInfix+k)
		if ok && listener != "" && listener == strings.ToLower(listener) {
			return listener, k, true
		}
	}
	return "", "", false
}

// oauthListenerKey is listener's own key for k.
func oauthListenerKey(listener, k string) string {
	return jaasKeyPrefix + strings.ToLower(listener) + oauthListenerInfix + k
}

// oauthListenerDef is the Def of a listener-prefixed OAUTHBEARER key, for
// brokerPatterns: the handler class, or the broker-wide key's type and
// validation without its default (unset, the broker-wide value applies).
func oauthListenerDef(key string) (Def, bool) {
	listener, k, ok := parseOAuthListenerKey(key)
	if !ok {
		return Def{}, false
	}
	if k != oauthHandlerKey {
		d := brokerByName[k]
		d.Name, d.Default, d.HasDefault = key, "", false
		d.Doc = fmt.Sprintf("%s for listener %s only, overriding the broker-wide value. %s", k, strings.ToUpper(listener), d.Doc)
		return d, true
	}
	known := slices.Concat(unsecuredValidatorClasses, securedValidatorClasses)
	return nullDef(key, Class, "", func(v string) error {
		if slices.Contains(known, v) {
			return nil
		}
		return fmt.Errorf("Strata loads no Java classes; it has Kafka's two OAUTHBEARER validators: %s (signed tokens, keys at sasl.oauthbearer.jwks.endpoint.url) or %s (unsecured tokens, the default)",
			securedValidatorClasses[0], unsecuredValidatorClasses[0])
	}, "How listener "+strings.ToUpper(listener)+" validates OAUTHBEARER tokens: "+securedValidatorClasses[0]+
		" verifies signed tokens with the key set at sasl.oauthbearer.jwks.endpoint.url (KIP-768); unset, unsecured tokens (alg none) are taken as they are, Kafka's default, for development only."), true
}

// oauthListenerEnvKey maps STRATA_LISTENER_NAME_<LISTENER>_OAUTHBEARER_<KEY>
// (KEY as in EnvName: SASL_OAUTHBEARER_JWKS_ENDPOINT_URL) to its key. The
// listener name may contain '_', so the key is matched at the end.
func oauthListenerEnvKey(name string) (string, bool) {
	mid, ok := strings.CutPrefix(name, jaasEnvPrefix)
	if !ok {
		return "", false
	}
	for _, k := range oauthListenerKeys {
		listener, ok := strings.CutSuffix(mid, oauthListenerEnvInfix+strings.TrimPrefix(envForm(k), "STRATA_"))
		if ok && listener != "" {
			return oauthListenerKey(listener, k), true
		}
	}
	return "", false
}

// setOAuth fills b.OAuth for every SASL listener when OAUTHBEARER is
// enabled, after setSASL: its validator (the callback handler key), the
// unsecured validator's options from the listener's JAAS config, the
// secured one's from the sasl.oauthbearer.* keys (the listener's own
// first). A listener-prefixed key naming a listener that is not SASL, or
// set without OAUTHBEARER, is refused, and a secured listener needs the
// key set's URL.
func (b *Broker) setOAuth(g getter) error {
	enabled := slices.Contains(b.SASLMechanisms, MechanismOAuthBearer)
	for _, key := range sortedKeys(b.Raw) {
		listener, _, ok := parseOAuthListenerKey(key)
		if !ok {
			continue
		}
		if _, err := b.prefixedSASLListener(key, b.Raw[key], listener); err != nil {
			return err
		}
		if !enabled {
			return &Error{Key: key, Value: b.Raw[key], Msg: fmt.Sprintf("is for OAUTHBEARER, which sasl.enabled.mechanisms (%s) does not enable; add it there", g.str("sasl.enabled.mechanisms"))}
		}
	}
	if !enabled {
		return nil
	}
	for _, l := range b.Listeners {
		if !l.UsesSASL() {
			continue
		}
		v, err := b.oauthValidation(g, l)
		if err != nil {
			return err
		}
		if b.OAuth == nil {
			b.OAuth = make(map[string]OAuthValidation)
		}
		b.OAuth[l.Name] = v
	}
	return nil
}

// oauthValidation is listener l's OAUTHBEARER validation: its own
// listener-prefixed keys over the broker-wide ones.
func (b *Broker) oauthValidation(broker getter, l Listener) (OAuthValidation, error) {
	g := getter(func(key string) (string, bool) {
		if v, ok := b.Raw[oauthListenerKey(l.Name, key)]; ok {
			return v, true
		}
		return broker(key)
	})
	handler := b.Raw[oauthListenerKey(l.Name, oauthHandlerKey)] // Kafka has no broker-wide form of it
	if slices.Contains(securedValidatorClasses, handler) {
		v := OAuthValidation{
			Secured:          true,
			JWKSURL:          g.str("sasl.oauthbearer.jwks.endpoint.url"),
			JWKSRefresh:      msDuration(g.i64("sasl.oauthbearer.jwks.endpoint.refresh.ms")),
			RetryBackoff:     msDuration(g.i64("sasl.oauthbearer.jwks.endpoint.retry.backoff.ms")),
			RetryBackoffMax:  msDuration(g.i64("sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms")),
			PrincipalClaim:   g.str("sasl.oauthbearer.sub.claim.name"),
			ScopeClaim:       g.str("sasl.oauthbearer.scope.claim.name"),
			ExpectedAudience: splitList(g.str("sasl.oauthbearer.expected.audience")),
			ExpectedIssuer:   g.str("sasl.oauthbearer.expected.issuer"),
			ClockSkew:        time.Duration(g.i32("sasl.oauthbearer.clock.skew.seconds")) * time.Second,
			TLS:              b.TLSFor(l.Name),
		}
		if v.JWKSURL == "" {
			return OAuthValidation{}, &Error{Key: "sasl.oauthbearer.jwks.endpoint.url", Value: "",
				Msg: fmt.Sprintf("must give the key set that verifies tokens on listener %s, whose %s is %s (or set %s)",
					l.Name, oauthListenerKey(l.Name, oauthHandlerKey), handler, oauthListenerKey(l.Name, "sasl.oauthbearer.jwks.endpoint.url"))}
		}
		return v, nil
	}
	opts := map[string]string{}
	if raw, ok := b.Raw[jaasKey{listener: strings.ToLower(l.Name), mechanism: MechanismOAuthBearer}.String()]; ok {
		m, err := parseJAAS(raw)
		if err != nil {
			panic("config: unvalidated OAUTHBEARER JAAS config") // checked by jaasDef
		}
		opts = m.options
	}
	v := OAuthValidation{PrincipalClaim: cmp.Or(opts[optPrincipalClaim], "sub"), ScopeClaim: cmp.Or(opts[optScopeClaim], "scope")}
	if scopes := strings.Fields(opts[optRequiredScope]); len(scopes) > 0 {
		v.RequiredScopes = scopes
	}
	if ms := opts[optClockSkewMs]; ms != "" {
		n, _ := strconv.ParseInt(ms, 10, 64) // checked by jaasDef
		v.ClockSkew = time.Duration(n) * time.Millisecond
	}
	return v, nil
}

// checkOAuthOptions checks the options of an OAuthBearerLoginModule entry.
func checkOAuthOptions(m jaasModule) error {
	for _, k := range sortedKeys(m.options) {
		if !isOAuthOption(k) {
			return fmt.Errorf("option %s is not one %s takes: %s, or the login options %s", k, oauthLoginModule,
				strings.Join(oauthValidatorOptions, ", "), strings.Join(oauthLoginOptions, ", "))
		}
	}
	if ms, ok := m.options[optClockSkewMs]; ok {
		if n, err := strconv.ParseInt(ms, 10, 64); err != nil || n < 0 {
			return fmt.Errorf("option %s must be a whole number of milliseconds, at least 0", optClockSkewMs)
		}
	}
	for _, k := range []string{optPrincipalClaim, optScopeClaim} {
		if v, ok := m.options[k]; ok && strings.TrimSpace(v) == "" {
			return fmt.Errorf("option %s names no claim", k)
		}
	}
	return nil
}

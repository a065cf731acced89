package config

import (
	"fmt"
	"slices"
	"strings"
)

// Kafka's listener-prefixed TLS keys, listener.name.<listener>.ssl.<key>, with
// the listener name in lower case: each overrides the broker-wide ssl.<key>
// for that listener only.
const listenerSSLKeyForm = jaasKeyPrefix + "<listener>.ssl.<key>"

// listenerSSLKeys are the broker-wide keys a listener may override.
var listenerSSLKeys = []string{
	"ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.certificate.chain", "ssl.keystore.key",
	"ssl.keystore.password", "ssl.key.password",
	"ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.certificates", "ssl.truststore.password",
	"ssl.client.auth", "ssl.enabled.protocols", "ssl.cipher.suites", principalRulesKey, endpointIdentificationKey,
}

// listenerConnKeys are Kafka's listener-level connection limits (KIP-402,
// KIP-612), listener.name.<listener>.<key>: unlike the TLS keys they do not
// replace the broker-wide limit but add one for that listener alone.
var listenerConnKeys = []string{maxConnectionsKey, maxCreationRateKey}

// reloadableSSLKeys are the listener TLS keys that change at run time,
// Kafka's SslConfigs.RECONFIGURABLE_CONFIGS: a listener's keystore and
// truststore, as files (setting the same path again reloads the file, as
// Kafka's ReloadableFileConfigs) or inline PEM, with their types and
// passwords; set on one broker only (PerBrokerOnlyError), taken by new
// connections. The sensitive ones are kept in the metadata log in the
// clear, as Kafka's KRaft brokers keep them, and never described.
var reloadableSSLKeys = []string{
	"ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
	"ssl.keystore.certificate.chain", "ssl.keystore.key",
	"ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password", "ssl.truststore.certificates",
}

// listenerKeys are every key a listener-prefixed key may name.
var listenerKeys = slices.Concat(listenerSSLKeys, listenerConnKeys)

// endpointIdentificationKey is Kafka's ssl.endpoint.identification.algorithm.
const endpointIdentificationKey = "ssl.endpoint.identification.algorithm"

// A listener's keystore and truststore are each taken as a whole: setting any
// key of a group on the listener replaces every broker-wide key of the group,
// so a listener never mixes a file of one level with inline PEM of the other.
var (
	keystoreKeys   = []string{"ssl.keystore.location", "ssl.keystore.certificate.chain", "ssl.keystore.key"}
	truststoreKeys = []string{"ssl.truststore.location", "ssl.truststore.certificates"}
)

// The type and passwords of a store fall back to the broker-wide value key
// by key (TLSFor).
var (
	keystoreFallbackKeys   = []string{"ssl.keystore.type", "ssl.keystore.password", "ssl.key.password"}
	truststoreFallbackKeys = []string{"ssl.truststore.type", "ssl.truststore.password"}
)

// listenerSSLKey is a parsed listener-prefixed TLS key: the listener as the
// key has it (lower case) and the broker-wide key it overrides.
type listenerSSLKey struct {
	listener string
	key      string // one of listenerSSLKeys
}

func (k listenerSSLKey) String() string { return jaasKeyPrefix + k.listener + "." + k.key }

// parseListenerSSLKey parses listener.name.<listener>.ssl.<key> with a
// non-empty lower-case listener and a key of listenerSSLKeys.
func parseListenerSSLKey(key string) (listenerSSLKey, bool) {
	mid, ok := strings.CutPrefix(key, jaasKeyPrefix)
	if !ok {
		return listenerSSLKey{}, false
	}
	for _, k := range listenerKeys {
		listener, ok := strings.CutSuffix(mid, "."+k)
		if ok && listener != "" && listener == strings.ToLower(listener) {
			return listenerSSLKey{listener: listener, key: k}, true
		}
	}
	return listenerSSLKey{}, false
}

// listenerSSLDef is the Def of a listener-prefixed TLS key, for
// brokerPatterns: the type, sensitivity and validation of the key it
// overrides, without a default (unset, the broker-wide value applies).
func listenerSSLDef(key string) (Def, bool) {
	k, ok := parseListenerSSLKey(key)
	if !ok {
		return Def{}, false
	}
	d := brokerByName[k.key]
	d.Name, d.Default, d.HasDefault = key, "", false
	if slices.Contains(listenerConnKeys, k.key) {
		d.Doc = fmt.Sprintf("%s for listener %s alone, on top of the broker-wide limit (which spares the inter-broker listener; this one does not); dynamic. %s",
			k.key, strings.ToUpper(k.listener), d.Doc)
		return d, true
	}
	d.Doc = fmt.Sprintf("%s for listener %s only, overriding the broker-wide value. %s", k.key, strings.ToUpper(k.listener), d.Doc)
	if slices.Contains(reloadableSSLKeys, k.key) {
		d.Doc += " Dynamic on one broker's resource: new connections get the listener's keystore and truststore once they load and, for a keystore, hold a certificate with the same subject and subject alternative names (ssl.allow.dn.changes, ssl.allow.san.changes); setting a file's path again reloads a file renewed in place."
	}
	return d, true
}

// listenerSSLEnvKey maps STRATA_LISTENER_NAME_<LISTENER>_SSL_<KEY> (KEY as in
// EnvName: SSL_KEYSTORE_LOCATION) to its key. The listener name may contain
// '_', so the key is matched at the end.
func listenerSSLEnvKey(name string) (string, bool) {
	mid, ok := strings.CutPrefix(name, jaasEnvPrefix)
	if !ok {
		return "", false
	}
	for _, k := range listenerKeys {
		listener, ok := strings.CutSuffix(mid, strings.TrimPrefix(envForm(k), "STRATA")) // _SSL_KEYSTORE_LOCATION
		if ok && listener != "" {
			return listenerSSLKey{listener: strings.ToLower(listener), key: k}.String(), true
		}
	}
	return "", false
}

// sslOverrides are the listener-prefixed TLS keys set for one listener,
// dynamic values first (only reloadableSSLKeys and listenerConnKeys may be
// dynamic).
type sslOverrides struct {
	listener string // as the keys have it, lower case
	layers   layers
}

func overridesOf(b *Broker, l Listener) sslOverrides {
	return sslOverrides{listener: strings.ToLower(l.Name), layers: layersOf(b)}
}

// key is the listener's key overriding the broker-wide key k.
func (o sslOverrides) key(k string) string {
	return listenerSSLKey{listener: o.listener, key: k}.String()
}

func (o sslOverrides) get(k string) (string, bool) {
	v, _, ok := brokerValue(o.layers, o.key(k))
	return v, ok
}

func (o sslOverrides) str(k string) string {
	v, _ := o.get(k)
	return v
}

// anyOf reports whether the listener sets one of the keys.
func (o sslOverrides) anyOf(keys []string) bool {
	return slices.ContainsFunc(keys, func(k string) bool { _, ok := o.get(k); return ok })
}

// TLSFor is the TLS configuration of the named listener (as in listeners):
// the broker-wide ssl.* settings with the listener's
// listener.name.<listener>.ssl.* overrides applied. A listener that sets any
// of its keystore keys (location, certificate.chain, key) takes its keystore
// from them alone, and likewise its truststore (location, certificates): the
// broker-wide keystore or truststore is then not used, file or inline.
//
// ClientAuth is what the listener applies. As in Kafka (KIP-684), the
// broker-wide ssl.client.auth applies to SSL listeners only: a SASL_SSL
// listener asks for client certificates only when
// listener.name.<listener>.ssl.client.auth says so, and is "none" otherwise.
// Listeners without TLS get "none". For a TLS listener the result holds
// TLSConfig's invariants (LoadBroker checked them). It panics when listeners
// has no such name, a programmer error.
func (b *Broker) TLSFor(listener string) TLSConfig {
	l := b.listener(listener)
	t := b.TLS
	t.Protocols, t.CipherSuites = slices.Clone(t.Protocols), slices.Clone(t.CipherSuites)
	o := overridesOf(b, l)
	if o.anyOf(keystoreKeys) {
		t.KeystoreLocation, t.KeystoreChain, t.KeystoreKey =
			o.str("ssl.keystore.location"), o.str("ssl.keystore.certificate.chain"), o.str("ssl.keystore.key")
	}
	if o.anyOf(truststoreKeys) {
		t.TruststoreLocation, t.TruststoreCertificates = o.str("ssl.truststore.location"), o.str("ssl.truststore.certificates")
	}
	// The store types and passwords fall back key by key, as in Kafka: a
	// listener may name its own keystore file and keep the broker-wide
	// type and password.
	for key, field := range map[string]*string{
		"ssl.keystore.password": &t.KeystorePassword, "ssl.key.password": &t.KeyPassword, "ssl.truststore.password": &t.TruststorePassword,
	} {
		if v, ok := o.get(key); ok {
			*field = v
		}
	}
	// The types: the listener's own, else the broker-wide one, implied
	// from the passwords the listener ends with when neither is set
	// (storeType: a password under the default type is Kafka's JKS).
	for _, st := range []struct {
		key      string
		typ      *string
		password string
	}{
		{"ssl.keystore.type", &t.KeystoreType, t.KeystorePassword},
		{"ssl.truststore.type", &t.TruststoreType, t.TruststorePassword},
	} {
		v, own := o.get(st.key)
		if !own {
			v = b.value(st.key)
		}
		*st.typ = storeType(v, own || b.isSet(st.key), st.password)
	}
	if v, ok := o.get("ssl.client.auth"); ok {
		t.ClientAuth = v
	} else if l.Protocol != ProtocolSSL {
		t.ClientAuth = "none"
	}
	if v, ok := o.get("ssl.enabled.protocols"); ok {
		t.Protocols = splitList(v)
	}
	if v, ok := o.get("ssl.cipher.suites"); ok {
		t.CipherSuites = splitList(v)
	}
	if v, ok := o.get(endpointIdentificationKey); ok {
		t.VerifyHostname = v != ""
	}
	return t
}

// PrincipalRulesFor is how client certificate subjects become principal
// names on the named listener: its listener.name.<listener>.ssl.principal.mapping.rules,
// or the broker-wide ssl.principal.mapping.rules when it has none. It parses
// the rules, so call it once per listener. It panics when listeners has no
// such name, a programmer error.
func (b *Broker) PrincipalRulesFor(listener string) PrincipalRules {
	v, ok := overridesOf(b, b.listener(listener)).get(principalRulesKey)
	if !ok {
		return b.SSLPrincipalRules
	}
	rules, err := ParsePrincipalRules(v)
	if err != nil {
		panic("config: unvalidated listener " + principalRulesKey) // checked by its Def
	}
	return rules
}

// listener is the listener called name; it panics when there is none.
func (b *Broker) listener(name string) Listener {
	i := slices.IndexFunc(b.Listeners, func(l Listener) bool { return l.Name == name })
	if i < 0 {
		panic("config: no listener " + name)
	}
	return b.Listeners[i]
}

// checkListenerTLS checks the listener-prefixed TLS keys: each names a TLS
// listener of listeners, and every TLS listener's effective settings (see
// TLSFor) hold: one keystore, in a file or inline but not both; client
// authentication other than none with a truststore; a TLS 1.2 cipher suite
// when TLS 1.2 is enabled and suites are listed. Errors name the keys to fix.
func (b *Broker) checkListenerTLS() error {
	for _, key := range sortedKeys(b.Raw) {
		k, ok := parseListenerSSLKey(key)
		if !ok {
			continue
		}
		if err := b.checkListenerKey(key, b.Raw[key], k); err != nil {
			return err
		}
	}
	return b.checkTLSListeners()
}

// CheckDynamicTLS checks the listener keystore and truststore files set
// as dynamic configs (reloadableSSLKeys): each key names a TLS listener of
// b, and every TLS listener's settings with them hold together, as
// checkListenerTLS checks the static ones. It reads no file.
func (b *Broker) CheckDynamicTLS() error {
	if err := b.checkDynamicListenerKeys(reloadableSSLKeys); err != nil {
		return err
	}
	return b.checkTLSListeners()
}

// checkDynamicListenerKeys checks the dynamic listener-prefixed keys of b
// that override one of keys (checkListenerKey).
func (b *Broker) checkDynamicListenerKeys(keys []string) error {
	for _, m := range []map[string]string{b.dynamic.Node, b.dynamic.Default} {
		for _, key := range sortedKeys(m) {
			k, ok := parseListenerSSLKey(key)
			if !ok || !slices.Contains(keys, k.key) {
				continue
			}
			if err := b.checkListenerKey(key, m[key], k); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkListenerKey checks that listener-prefixed key, set to v, names a
// listener of b, and a TLS one unless it is a connection limit.
func (b *Broker) checkListenerKey(key, v string, k listenerSSLKey) error {
	if d, _ := LookupBroker(key); d.Sensitive {
		v = hiddenValue
	}
	l, err := b.prefixedListener(key, v, k.listener)
	switch {
	case err != nil:
		return err
	case slices.Contains(listenerConnKeys, k.key):
	case !l.UsesTLS():
		return &Error{Key: key, Value: v,
			Msg: fmt.Sprintf("names listener %s, whose protocol is %s, not SSL or SASL_SSL", l.Name, l.Protocol)}
	}
	return nil
}

// checkTLSListeners checks the effective TLS settings of every TLS
// listener (checkTLSOf).
func (b *Broker) checkTLSListeners() error {
	for _, l := range b.Listeners {
		if !l.UsesTLS() {
			continue
		}
		if err := b.checkTLSOf(l); err != nil {
			return err
		}
	}
	return nil
}

// checkTLSOf checks the effective TLS settings of TLS listener l. The
// broker-wide keys were checked by setTLS, so a conflict inside the keystore
// or the truststore here is between the listener's own keys.
func (b *Broker) checkTLSOf(l Listener) error {
	o := overridesOf(b, l)
	t := b.TLSFor(l.Name)
	name := func(k string, own bool) string { // the key that set k's value
		if own {
			return o.key(k)
		}
		return k
	}
	// A listener that sets anything of a store (its file or inline PEM, its
	// type or password) is where a disagreement in it is fixed.
	ownKeystore := o.anyOf(keystoreKeys) || o.anyOf(keystoreFallbackKeys)
	ownTruststore := o.anyOf(truststoreKeys) || o.anyOf(truststoreFallbackKeys)
	ks := func(k string) string { return name(k, ownKeystore) }
	ts := func(k string) string { return name(k, ownTruststore) }
	if err := storeError(t, ks, ts); err != nil {
		return err
	}
	switch {
	case t.KeystoreLocation == "" && t.KeystoreChain == "":
		return &Error{Key: "ssl.keystore.location", Value: "",
			Msg: fmt.Sprintf("must be set for listener %s (%s), or ssl.keystore.certificate.chain and ssl.keystore.key, or the listener's own %s",
				l.Name, l.Protocol, o.key("ssl.keystore.location"))}
	case t.ClientAuth != "none" && t.TruststoreLocation == "" && t.TruststoreCertificates == "":
		_, own := o.get("ssl.client.auth")
		return &Error{Key: name("ssl.client.auth", own), Value: t.ClientAuth,
			Msg: fmt.Sprintf("needs the CAs of client certificates of listener %s: set %s or %s (or the broker-wide ssl.truststore.*), or client auth none",
				l.Name, o.key("ssl.truststore.location"), o.key("ssl.truststore.certificates"))}
	}
	if len(t.CipherSuites) > 0 && slices.Contains(t.Protocols, "TLSv1.2") && !slices.ContainsFunc(t.CipherSuites, servesTLS12) {
		_, ownSuites := o.get("ssl.cipher.suites")
		_, ownProtocols := o.get("ssl.enabled.protocols")
		key := name("ssl.cipher.suites", ownSuites || !ownProtocols)
		return &Error{Key: key, Value: strings.Join(t.CipherSuites, ","),
			Msg: fmt.Sprintf("names no TLS 1.2 suite while %s of listener %s has TLSv1.2; add one, e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, or drop TLSv1.2",
				name("ssl.enabled.protocols", ownProtocols), l.Name)}
	}
	return nil
}

func listenersString(ls []Listener) string {
	s := make([]string, len(ls))
	for i, l := range ls {
		s[i] = l.String()
	}
	return strings.Join(s, ",")
}

package config

import (
	"cmp"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestListenerSSLKeys(t *testing.T) {
	for _, k := range listenerSSLKeys {
		key := "listener.name.internal." + k
		d, ok := LookupBroker(key)
		base := brokerByName[k]
		readOnly := !slices.Contains(reloadableSSLKeys, k) // the files change at run time
		if !ok || d.Name != key || d.Type != base.Type || d.Sensitive != base.Sensitive || d.ReadOnly != readOnly || d.HasDefault || d.Doc == "" {
			t.Errorf("%s: def %+v, ok %v; want the key's name, %v, sensitive %v, read-only %v, null default, a doc", key, d, ok, base.Type, base.Sensitive, readOnly)
		}
		env := EnvName(key)
		if got, ok := envKey(env); !ok || got != key {
			t.Errorf("envKey(%s) = %q, %v; want %s", env, got, ok, key)
		}
	}
	for key, want := range map[string]string{
		"listener.name.INTERNAL.ssl.keystore.location": "takes the listener in lower case: listener.name.internal.ssl.keystore.location",
		"listener.name.ssl.ssl.keystore.passwd":        "listener.name.<listener>.ssl.<key>, <key> one of",
		"listener.name..ssl.client.auth":               "the only per-listener configs",
	} {
		_, err := LoadBroker("", nil, map[string]string{key: "x"})
		checkLoadErr(t, err, key, want)
	}
	// Values are validated as the broker-wide key's.
	for key, want := range map[string]string{
		"listener.name.ssl.ssl.keystore.type":              "must be one of PEM, PKCS12, JKS",
		"listener.name.ssl.ssl.client.auth":                "required",
		"listener.name.ssl.ssl.enabled.protocols":          "TLSv1.1 is refused",
		"listener.name.ssl.ssl.keystore.key":               "traditional OpenSSL encrypted keys",
		"listener.name.ssl.ssl.principal.mapping.rules":    "RULE",
		"listener.name.ssl.ssl.truststore.certificates":    "inline PEM certificates",
		"listener.name.ssl.ssl.keystore.certificate.chain": "inline PEM certificates",
		"listener.name.ssl.ssl.cipher.suites":              "is not one",
		"listener.name.ssl.ssl.truststore.location":        "",
	} {
		v := map[string]string{"ssl.keystore.type": "JCEKS", "ssl.client.auth": "always", "ssl.enabled.protocols": "TLSv1.1",
			"ssl.keystore.key": "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nfake", "ssl.principal.mapping.rules": "RULE:fake",
			"ssl.truststore.certificates": "fake", "ssl.keystore.certificate.chain": "fake", "ssl.cipher.suites": "FAKE_SUITE",
			"ssl.truststore.location": ""}[strings.TrimPrefix(key, "listener.name.ssl.")]
		_, err := LoadBroker("", nil, map[string]string{"listeners": "SSL://:9093", "ssl.keystore.location": "/ks.pem", key: v})
		checkLoadErr(t, err, key, want)
		if d, _ := LookupBroker(key); d.Sensitive && strings.Contains(err.Error(), "fake") {
			t.Errorf("error %q quotes a sensitive value", err)
		}
	}
	// From the environment, over the file.
	file := writeFile(t, "listeners=SSL://:9093,INTERNAL_TLS://:9094\nlistener.security.protocol.map=SSL:SSL,INTERNAL_TLS:SSL\n"+
		"ssl.keystore.location=/ks.pem\nlistener.name.internal_tls.ssl.keystore.location=/file.pem\n")
	b := mustLoad(t, file, []string{"STRATA_LISTENER_NAME_INTERNAL_TLS_SSL_KEYSTORE_LOCATION=/env.pem"}, nil)
	if got := b.TLSFor("INTERNAL_TLS").KeystoreLocation; got != "/env.pem" {
		t.Errorf("keystore %q, want /env.pem", got)
	}
	if o := b.Origin["listener.name.internal_tls.ssl.keystore.location"]; o != "STRATA_LISTENER_NAME_INTERNAL_TLS_SSL_KEYSTORE_LOCATION" {
		t.Errorf("origin %q", o)
	}
}

func TestListenerTLSErrors(t *testing.T) {
	base := func(kv ...string) map[string]string {
		return withKeys(map[string]string{
			"listeners":                      "PLAINTEXT://:9092,SSL://:9093,SASL_SSL://:9094,INTERNAL://:9095",
			"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_SSL:SASL_SSL,INTERNAL:SSL",
		}, kv...)
	}
	const ks = "ssl.keystore.location"
	tests := []struct {
		name  string
		flags map[string]string
		key   string
		want  []string
	}{
		{"unknown listener", base(ks, "/ks.pem", "listener.name.clients.ssl.client.auth", "required"),
			"listener.name.clients.ssl.client.auth", []string{"names listener CLIENTS", "does not have"}},
		{"non-TLS listener", base(ks, "/ks.pem", "listener.name.plaintext.ssl.keystore.location", "/p.pem"),
			"listener.name.plaintext.ssl.keystore.location", []string{"listener PLAINTEXT", "protocol is PLAINTEXT, not SSL or SASL_SSL"}},
		{"non-TLS listener, sensitive", base(ks, "/ks.pem", "listener.name.plaintext.ssl.keystore.key", testKey),
			"listener.name.plaintext.ssl.keystore.key", []string{"[hidden]"}},
		{"one listener's keystore missing", base("listener.name.ssl.ssl.keystore.location", "/a.pem", "listener.name.sasl_ssl.ssl.keystore.location", "/b.pem"),
			ks, []string{"listener INTERNAL (SSL)", "listener.name.internal.ssl.keystore.location"}},
		{"listener file and inline", base(ks, "/ks.pem", "listener.name.internal.ssl.keystore.location", "/i.pem", "listener.name.internal.ssl.keystore.key", testKey),
			"listener.name.internal.ssl.keystore.location", []string{"listener.name.internal.ssl.keystore.key", "not both"}},
		{"listener chain without key, broker key ignored", base(ks, "/ks.pem", "listener.name.internal.ssl.keystore.certificate.chain", testCert),
			"listener.name.internal.ssl.keystore.certificate.chain", []string{"listener.name.internal.ssl.keystore.key is not"}},
		{"listener two truststores", base(ks, "/ks.pem", "listener.name.ssl.ssl.truststore.location", "/ca.pem", "listener.name.ssl.ssl.truststore.certificates", testCert),
			"listener.name.ssl.ssl.truststore.location", []string{"listener.name.ssl.ssl.truststore.certificates", "not both"}},
		{"SASL_SSL client auth without truststore", base(ks, "/ks.pem", "listener.name.sasl_ssl.ssl.client.auth", "required"),
			"listener.name.sasl_ssl.ssl.client.auth", []string{"listener SASL_SSL", "listener.name.sasl_ssl.ssl.truststore.location"}},
		{"listener protocols without a TLS 1.2 suite", base(ks, "/ks.pem", "ssl.cipher.suites", "TLS_AES_128_GCM_SHA256", "ssl.enabled.protocols", "TLSv1.3",
			"listener.name.ssl.ssl.enabled.protocols", "TLSv1.2"),
			"ssl.cipher.suites", []string{"listener.name.ssl.ssl.enabled.protocols of listener SSL"}},
		{"listener suites without a TLS 1.2 suite", base(ks, "/ks.pem", "listener.name.ssl.ssl.cipher.suites", "TLS_AES_128_GCM_SHA256"),
			"listener.name.ssl.ssl.cipher.suites", []string{"ssl.enabled.protocols of listener SSL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadBroker("", nil, tt.flags)
			checkLoadErr(t, err, tt.key, tt.want...)
			if strings.Contains(err.Error(), "fake") {
				t.Errorf("error %q quotes a sensitive value", err)
			}
		})
	}
}

func TestTLSFor(t *testing.T) {
	cert, key := strings.TrimSpace(testCert), strings.TrimSpace(testKey)
	listeners := map[string]string{
		"listeners":                      "PLAINTEXT://:9092,SSL://:9093,SASL_SSL://:9094,INTERNAL://:9095",
		"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_SSL:SASL_SSL,INTERNAL:SSL",
		"sasl.enabled.mechanisms":        "SCRAM-SHA-256",
	}
	tls12 := []string{"TLSv1.2", "TLSv1.3"}
	tests := []struct {
		name  string
		flags map[string]string
		want  map[string]TLSConfig // by listener
	}{
		{"KIP-684: broker-wide client auth is for SSL only", withKeys(listeners, "ssl.keystore.location", "/ks.pem",
			"ssl.truststore.location", "/ca.pem", "ssl.client.auth", "required"),
			map[string]TLSConfig{
				"SSL":       {KeystoreLocation: "/ks.pem", TruststoreLocation: "/ca.pem", ClientAuth: "required", Protocols: tls12, VerifyHostname: true},
				"INTERNAL":  {KeystoreLocation: "/ks.pem", TruststoreLocation: "/ca.pem", ClientAuth: "required", Protocols: tls12, VerifyHostname: true},
				"SASL_SSL":  {KeystoreLocation: "/ks.pem", TruststoreLocation: "/ca.pem", ClientAuth: "none", Protocols: tls12, VerifyHostname: true},
				"PLAINTEXT": {KeystoreLocation: "/ks.pem", TruststoreLocation: "/ca.pem", ClientAuth: "none", Protocols: tls12, VerifyHostname: true},
			}},
		{"KIP-684: the listener's client auth applies to SASL_SSL", withKeys(listeners, "ssl.keystore.location", "/ks.pem",
			"ssl.truststore.location", "/ca.pem", "listener.name.sasl_ssl.ssl.client.auth", "required",
			"listener.name.ssl.ssl.client.auth", "requested"),
			map[string]TLSConfig{
				"SSL":      {KeystoreLocation: "/ks.pem", TruststoreLocation: "/ca.pem", ClientAuth: "requested", Protocols: tls12, VerifyHostname: true},
				"INTERNAL": {KeystoreLocation: "/ks.pem", TruststoreLocation: "/ca.pem", ClientAuth: "none", Protocols: tls12, VerifyHostname: true},
				"SASL_SSL": {KeystoreLocation: "/ks.pem", TruststoreLocation: "/ca.pem", ClientAuth: "required", Protocols: tls12, VerifyHostname: true},
			}},
		{"file and inline across levels", withKeys(listeners, "ssl.keystore.certificate.chain", testCert, "ssl.keystore.key", testKey,
			"ssl.truststore.location", "/ca.pem",
			"listener.name.internal.ssl.keystore.location", "/internal.pem", "listener.name.internal.ssl.truststore.certificates", testCert,
			"listener.name.internal.ssl.client.auth", "required", "listener.name.internal.ssl.endpoint.identification.algorithm", "",
			"listener.name.ssl.ssl.enabled.protocols", "TLSv1.3", "listener.name.ssl.ssl.cipher.suites", "TLS_AES_128_GCM_SHA256"),
			map[string]TLSConfig{
				"SSL": {KeystoreChain: cert, KeystoreKey: key, TruststoreLocation: "/ca.pem", ClientAuth: "none",
					Protocols: []string{"TLSv1.3"}, CipherSuites: []string{"TLS_AES_128_GCM_SHA256"}, VerifyHostname: true},
				"INTERNAL": {KeystoreLocation: "/internal.pem", TruststoreCertificates: cert, ClientAuth: "required", Protocols: tls12},
				"SASL_SSL": {KeystoreChain: cert, KeystoreKey: key, TruststoreLocation: "/ca.pem", ClientAuth: "none", Protocols: tls12, VerifyHostname: true},
			}},
		{"inline listener keystore over a broker-wide file, no broker keystore needed elsewhere", withKeys(listeners,
			"listener.name.ssl.ssl.keystore.certificate.chain", testCert, "listener.name.ssl.ssl.keystore.key", testKey,
			"listener.name.internal.ssl.keystore.location", "/i.pem", "listener.name.sasl_ssl.ssl.keystore.location", "/s.pem"),
			map[string]TLSConfig{
				"SSL":      {KeystoreChain: cert, KeystoreKey: key, ClientAuth: "none", Protocols: tls12, VerifyHostname: true},
				"SASL_SSL": {KeystoreLocation: "/s.pem", ClientAuth: "none", Protocols: tls12, VerifyHostname: true},
			}},
		{"store types and passwords fall back key by key", withKeys(listeners,
			"ssl.keystore.type", "pkcs12", "ssl.keystore.location", "/ks.p12", "ssl.keystore.password", "ks-pass",
			"ssl.truststore.type", "JKS", "ssl.truststore.location", "/ts.jks", "ssl.truststore.password", "ts-pass",
			"listener.name.internal.ssl.keystore.location", "/internal.jks", "listener.name.internal.ssl.keystore.type", "jks",
			"listener.name.internal.ssl.key.password", "key-pass",
			"listener.name.sasl_ssl.ssl.truststore.type", "PEM", "listener.name.sasl_ssl.ssl.truststore.location", "/ca.pem",
			"listener.name.sasl_ssl.ssl.truststore.password", ""),
			map[string]TLSConfig{
				"SSL": {KeystoreType: StorePKCS12, KeystoreLocation: "/ks.p12", KeystorePassword: "ks-pass",
					TruststoreType: StoreJKS, TruststoreLocation: "/ts.jks", TruststorePassword: "ts-pass", ClientAuth: "none", Protocols: tls12, VerifyHostname: true},
				"INTERNAL": {KeystoreType: StoreJKS, KeystoreLocation: "/internal.jks", KeystorePassword: "ks-pass", KeyPassword: "key-pass",
					TruststoreType: StoreJKS, TruststoreLocation: "/ts.jks", TruststorePassword: "ts-pass", ClientAuth: "none", Protocols: tls12, VerifyHostname: true},
				"SASL_SSL": {KeystoreType: StorePKCS12, KeystoreLocation: "/ks.p12", KeystorePassword: "ks-pass",
					TruststoreType: StorePEM, TruststoreLocation: "/ca.pem", ClientAuth: "none", Protocols: tls12, VerifyHostname: true},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := mustLoad(t, "", nil, tt.flags)
			for l, want := range tt.want {
				want.KeystoreType, want.TruststoreType = cmp.Or(want.KeystoreType, StorePEM), cmp.Or(want.TruststoreType, StorePEM)
				if got := b.TLSFor(l); !reflect.DeepEqual(got, want) {
					t.Errorf("TLSFor(%s) = %+v, want %+v", l, got, want)
				}
			}
		})
	}

	// The result does not alias the broker's lists.
	b := mustLoad(t, "", nil, withKeys(listeners, "ssl.keystore.location", "/ks.pem"))
	b.TLSFor("SSL").Protocols[0] = "x"
	if b.TLS.Protocols[0] != "TLSv1.2" {
		t.Errorf("TLSFor aliases b.TLS.Protocols")
	}
	defer func() {
		if recover() == nil {
			t.Errorf("TLSFor of an unknown listener did not panic")
		}
	}()
	b.TLSFor("NOPE")
}

func TestPrincipalRulesFor(t *testing.T) {
	b := mustLoad(t, "", nil, map[string]string{
		"listeners":                                          "SSL://:9093,INTERNAL://:9095",
		"listener.security.protocol.map":                     "SSL:SSL,INTERNAL:SSL",
		"ssl.keystore.location":                              "/ks.pem",
		"ssl.principal.mapping.rules":                        "RULE:^CN=([^,]+),.*$/$1/,DEFAULT",
		"listener.name.internal.ssl.principal.mapping.rules": "RULE:^CN=([^,]+),.*$/$1/U",
	})
	tests := []struct {
		listener, dn, want string
		ok                 bool
	}{
		{"SSL", "CN=app,O=Example", "app", true},
		{"SSL", "O=Example", "O=Example", true},
		{"INTERNAL", "CN=app,O=Example", "APP", true},
		{"INTERNAL", "O=Example", "", false},
	}
	for _, tt := range tests {
		got, ok := b.PrincipalRulesFor(tt.listener).Map(tt.dn)
		if got != tt.want || ok != tt.ok {
			t.Errorf("PrincipalRulesFor(%s).Map(%s) = %q, %v; want %q, %v", tt.listener, tt.dn, got, ok, tt.want, tt.ok)
		}
	}
}

func TestDescribeBrokerListenerSSL(t *testing.T) {
	b := mustLoad(t, "", nil, map[string]string{
		"listeners":                                          "SASL_SSL://:9094",
		"ssl.keystore.location":                              "/ks.pem",
		"listener.name.sasl_ssl.ssl.client.auth":             "required",
		"listener.name.sasl_ssl.ssl.truststore.certificates": testCert,
	})
	entries := DescribeBroker(b)
	if len(entries) != len(brokerDefs)+2 {
		t.Fatalf("%d entries, want %d (every def and the two set listener keys)", len(entries), len(brokerDefs)+2)
	}
	e := find(t, entries, "listener.name.sasl_ssl.ssl.client.auth")
	if e.Value != "required" || e.IsNull || e.Sensitive || e.Type != String || e.Source != StaticBroker || !e.ReadOnly ||
		len(e.Synonyms) != 1 || e.Synonyms[0].Value != "required" {
		t.Errorf("client auth entry %+v", e)
	}
	e = find(t, entries, "listener.name.sasl_ssl.ssl.truststore.certificates")
	if e.Value != "" || !e.IsNull || !e.Sensitive || e.Type != Password || e.Source != StaticBroker ||
		len(e.Synonyms) != 1 || !e.Synonyms[0].IsNull || e.Synonyms[0].Value != "" {
		t.Errorf("truststore entry %+v leaks or is wrong", e)
	}
	if _, ok := LookupBroker("listener.name.sasl_ssl.ssl.keystore.location"); !ok {
		t.Fatal("no def")
	}
	for _, e := range entries {
		if e.Name == "listener.name.sasl_ssl.ssl.keystore.location" {
			t.Errorf("unset listener key described: %+v", e)
		}
	}
}

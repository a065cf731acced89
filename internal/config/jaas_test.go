package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

const (
	plainJAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";`
	scramJAAS = `org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="admin-secret";`
	plainKey  = "listener.name.sasl_ssl.plain.sasl.jaas.config"
)

func TestParseJAAS(t *testing.T) {
	tests := []struct {
		name string
		in   string
		flag string
		opts map[string]string
	}{
		{"kafka's example", plainJAAS, "required",
			map[string]string{"username": "admin", "password": "admin-secret", "user_admin": "admin-secret", "user_alice": "alice-secret"}},
		{"no options", "a.B required;", "required", map[string]string{}},
		{"flag in any case", "a.B Sufficient;", "Sufficient", map[string]string{}},
		{"requisite", "a.B requisite;", "requisite", map[string]string{}},
		{"optional", "a.B optional;", "optional", map[string]string{}},
		{"bare values", "a.B required k=v x=1.5-y;", "required", map[string]string{"k": "v", "x": "1.5-y"}},
		{"bare value before ;", "a.B required k=v;", "required", map[string]string{"k": "v"}},
		{"spaces around =", "a.B required k = \"v w\" ;", "required", map[string]string{"k": "v w"}},
		{"escapes", `a.B required k="say \"hi\" \\o/";`, "required", map[string]string{"k": `say "hi" \o/`}},
		{"empty quoted value", `a.B required k="";`, "required", map[string]string{"k": ""}},
		{"quoted ; and =", `a.B required k="a;b=c";`, "required", map[string]string{"k": "a;b=c"}},
		{"newlines and tabs", "\n\ta.B\n  required\n\tk=\"v\"\n;\n", "required", map[string]string{"k": "v"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := parseJAAS(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if m.flag != tt.flag || !reflect.DeepEqual(m.options, tt.opts) {
				t.Fatalf("got flag %q options %v, want %q %v", m.flag, m.options, tt.flag, tt.opts)
			}
		})
	}
}

func TestJAASErrors(t *testing.T) {
	const plain = "org.apache.kafka.common.security.plain.PlainLoginModule"
	tests := []struct {
		name string
		mech string
		in   string
		want string
	}{
		{"empty", "PLAIN", "", "must be a JAAS login module entry"},
		{"only ;", "PLAIN", ";", "must be a JAAS login module entry"},
		{"missing ;", "PLAIN", plain + ` required user_a="pw1"`, "must end with ';'"},
		{"missing ; after bare value", "PLAIN", plain + ` required user_a=pw1`, "must end with ';'"},
		{"no flag", "PLAIN", plain + ` user_a="pw1";`, "followed by a flag"},
		{"bad flag", "PLAIN", plain + ` mandatory user_a="pw1";`, `not "mandatory"`},
		{"wrong class", "PLAIN", `org.apache.kafka.common.security.scram.ScramLoginModule required;`, "must be " + plain},
		{"wrong class for scram", "SCRAM-SHA-256", plain + ` required;`, "must be org.apache.kafka.common.security.scram.ScramLoginModule"},
		{"unquoted value with spaces", "PLAIN", plain + ` required user_a=pw1 pw2;`, "double-quote values with spaces"},
		{"unquoted value with spaces before an option", "PLAIN", plain + ` required user_a=pw1 pw2 user_b="pw3";`, "double-quote values with spaces"},
		{"text after a quoted value", "PLAIN", plain + ` required user_a="pw1" pw2;`, "expected key=value or ';' after option user_a"},
		{"text after the flag", "PLAIN", plain + ` required pw1;`, "after the flag required"},
		{"no value", "PLAIN", plain + ` required user_a=;`, "option user_a: has no value"},
		{"unterminated quote", "PLAIN", plain + ` required user_a="pw1;`, `no closing "`},
		{"bad escape", "PLAIN", plain + ` required user_a="pw\1";`, `may only escape`},
		{"two modules", "PLAIN", plain + ` required user_a="pw1"; ` + plain + ` required;`, "one login module"},
		{"duplicate option", "PLAIN", plain + ` required user_a="pw1" user_a="pw2";`, "option user_a is given twice"},
		{"unknown plain option", "PLAIN", plain + ` required users_a="pw1";`, "option users_a is not one"},
		{"unknown scram option", "SCRAM-SHA-512", `org.apache.kafka.common.security.scram.ScramLoginModule required user_a="pw1";`, "option user_a is not one"},
		{"user_ without a name", "PLAIN", plain + ` required user_="pw1";`, "names no user"},
		{"empty password", "PLAIN", plain + ` required user_a="";`, "empty password"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := jaasUsers(tt.mech, tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "pw") {
				t.Errorf("error %q quotes a password", err)
			}
			// Through the key's Check, the error is an *Error with the value hidden.
			key := jaasKey{listener: "sasl_ssl", mechanism: tt.mech}.String()
			d, ok := LookupBroker(key)
			if !ok {
				t.Fatalf("no def for %s", key)
			}
			err = d.Check(tt.in)
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != key || ce.Value != hiddenValue || strings.Contains(err.Error(), "pw") {
				t.Fatalf("Check = %v, want an *Error for %s with the value hidden", err, key)
			}
		})
	}
}

func TestJAASUsers(t *testing.T) {
	users, err := jaasUsers(MechanismPlain, plainJAAS)
	if want := map[string]string{"admin": "admin-secret", "alice": "alice-secret"}; err != nil || !reflect.DeepEqual(users, want) {
		t.Fatalf("users = %v, %v; want %v", users, err, want)
	}
	users, err = jaasUsers(MechanismScramSHA256, scramJAAS+"\n")
	if err != nil || len(users) != 0 {
		t.Fatalf("scram users = %v, %v; want none", users, err)
	}
}

func TestJAASKeys(t *testing.T) {
	tests := []struct {
		key  string
		ok   bool
		want string // for !ok: a fragment of LoadBroker's error
	}{
		{"listener.name.sasl_ssl.plain.sasl.jaas.config", true, ""},
		{"listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config", true, ""},
		{"listener.name.my.internal.scram-sha-512.sasl.jaas.config", true, ""},
		{"listener.name.sasl_ssl.oauthbearer.sasl.jaas.config", true, ""},
		{"listener.name.sasl_ssl.gssapi.sasl.jaas.config", false, "GSSAPI is not supported by Strata; use PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER"},
		{"listener.name.sasl_ssl.digest-md5.sasl.jaas.config", false, "must be plain, scram-sha-256, scram-sha-512 or oauthbearer, not digest-md5"},
		{"listener.name.SASL_SSL.plain.sasl.jaas.config", false, "in lower case: listener.name.sasl_ssl.plain.sasl.jaas.config"},
		{"listener.name.sasl_ssl.PLAIN.sasl.jaas.config", false, "in lower case: listener.name.sasl_ssl.plain.sasl.jaas.config"},
		{"listener.name.plain.sasl.jaas.config", false, "the only per-listener configs are listener.name.<listener>.<mechanism>.sasl.jaas.config"},
		{"listener.name..plain.sasl.jaas.config", false, "the only per-listener configs"},
		{"listener.name.ssl.ssl.keystore.passwd", false, "the only per-listener configs"},
		{"name.sasl_ssl.plain.sasl.jaas.config", false, unknownBroker},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			d, ok := LookupBroker(tt.key)
			if ok != tt.ok {
				t.Fatalf("LookupBroker ok = %v, want %v", ok, tt.ok)
			}
			if ok {
				// A listener's PLAIN users change at run time; the other
				// mechanisms' options (the broker's own credentials) do not.
				readOnly := !strings.Contains(tt.key, ".plain.")
				if d.Name != tt.key || d.Type != Password || !d.Sensitive || d.ReadOnly != readOnly || d.HasDefault || d.Doc == "" {
					t.Fatalf("def %+v: want the key's name, PASSWORD, sensitive, read-only %v, null default, a doc", d, readOnly)
				}
				return
			}
			_, err := LoadBroker("", nil, map[string]string{tt.key: plainJAAS})
			checkLoadErr(t, err, tt.key, tt.want)
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error %q quotes the value", err)
			}
		})
	}
}

func TestJAASEnv(t *testing.T) {
	tests := []struct {
		env string
		key string // "" = no key
	}{
		{"STRATA_LISTENER_NAME_SASL_SSL_PLAIN_SASL_JAAS_CONFIG", "listener.name.sasl_ssl.plain.sasl.jaas.config"},
		{"STRATA_LISTENER_NAME_SASL_PLAINTEXT_SCRAM_SHA_256_SASL_JAAS_CONFIG", "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config"},
		{"STRATA_LISTENER_NAME_CLIENTS_SCRAM_SHA_512_SASL_JAAS_CONFIG", "listener.name.clients.scram-sha-512.sasl.jaas.config"},
		{"STRATA_LISTENER_NAME_MY_PLAIN_LISTENER_PLAIN_SASL_JAAS_CONFIG", "listener.name.my_plain_listener.plain.sasl.jaas.config"},
		{"STRATA_LISTENER_NAME_PLAIN_SASL_JAAS_CONFIG", ""},
		{"STRATA_LISTENER_NAME_SASL_SSL_GSSAPI_SASL_JAAS_CONFIG", ""},
		{"STRATA_LISTENER_NAME_SASL_SSL_PLAIN", ""},
		{"STRATA_SASL_SSL_PLAIN_SASL_JAAS_CONFIG", ""},
	}
	for _, tt := range tests {
		key, ok := envKey(tt.env)
		if key != tt.key || ok != (tt.key != "") {
			t.Errorf("envKey(%s) = %q, %v; want %q", tt.env, key, ok, tt.key)
		}
		if ok && EnvName(key) != tt.env {
			t.Errorf("EnvName(%s) = %s, want %s", key, EnvName(key), tt.env)
		}
	}

	// Loaded from the environment, overriding the file, with the variable as
	// its origin.
	file := writeFile(t, "listeners=SASL_PLAINTEXT://:9092\nsasl.enabled.mechanisms=PLAIN\n"+
		"listener.name.sasl_plaintext.plain.sasl.jaas.config="+plainJAAS+"\n")
	env := []string{"STRATA_LISTENER_NAME_SASL_PLAINTEXT_PLAIN_SASL_JAAS_CONFIG=" +
		`org.apache.kafka.common.security.plain.PlainLoginModule required user_bob="bob-secret";`}
	b := mustLoad(t, file, env, nil)
	const key = "listener.name.sasl_plaintext.plain.sasl.jaas.config"
	if want := map[string]map[string]string{"SASL_PLAINTEXT": {"bob": "bob-secret"}}; !reflect.DeepEqual(b.PlainUsers, want) {
		t.Errorf("PlainUsers = %v, want %v", b.PlainUsers, want)
	}
	if b.Origin[key] != "STRATA_LISTENER_NAME_SASL_PLAINTEXT_PLAIN_SASL_JAAS_CONFIG" {
		t.Errorf("origin %q", b.Origin[key])
	}
	// Without the environment, the file's users.
	b = mustLoad(t, file, nil, nil)
	if want := map[string]string{"admin": "admin-secret", "alice": "alice-secret"}; !reflect.DeepEqual(b.PlainUsers["SASL_PLAINTEXT"], want) {
		t.Errorf("PlainUsers = %v, want %v", b.PlainUsers, want)
	}

	// Unknown per-listener variables are refused, without their values.
	for _, name := range []string{"STRATA_LISTENER_NAME_SASL_SSL_GSSAPI_SASL_JAAS_CONFIG", "STRATA_LISTENER_NAME_SASL_SSL_SSL_KEY_PASSWD"} {
		_, err := LoadBroker("", []string{name + "=" + plainJAAS}, nil)
		checkLoadErr(t, err, name, "STRATA_LISTENER_NAME_<LISTENER>_<MECH>_SASL_JAAS_CONFIG", "PLAIN, SCRAM_SHA_256, SCRAM_SHA_512")
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("error %q quotes the value", err)
		}
	}
}

func TestSASLCrossKey(t *testing.T) {
	const (
		saslSSL   = "SASL_SSL://:9093"
		keystore  = "/ks.pem"
		scramKey  = "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config"
		noUsers   = `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret";`
		plainMech = "PLAIN,SCRAM-SHA-256"
	)
	base := func(kv ...string) map[string]string {
		return withKeys(map[string]string{"listeners": "PLAINTEXT://:9092," + saslSSL, "ssl.keystore.location": keystore}, kv...)
	}
	tests := []struct {
		name  string
		flags map[string]string
		key   string
		want  []string
	}{
		{"unknown listener", base("sasl.enabled.mechanisms", plainMech, "listener.name.clients.plain.sasl.jaas.config", plainJAAS),
			"listener.name.clients.plain.sasl.jaas.config", []string{"names listener CLIENTS", "listeners (PLAINTEXT://:9092,SASL_SSL://:9093) does not have"}},
		{"non-SASL listener", base("sasl.enabled.mechanisms", plainMech, "listener.name.plaintext.plain.sasl.jaas.config", plainJAAS),
			"listener.name.plaintext.plain.sasl.jaas.config", []string{"listener PLAINTEXT", "protocol is PLAINTEXT, not SASL_PLAINTEXT or SASL_SSL"}},
		{"mechanism not enabled", base(plainKey, plainJAAS),
			plainKey, []string{"PLAIN", "sasl.enabled.mechanisms (SCRAM-SHA-256,SCRAM-SHA-512) does not enable"}},
		{"scram mechanism not enabled", base("sasl.enabled.mechanisms", "PLAIN", plainKey, plainJAAS, scramKey, scramJAAS),
			scramKey, []string{"SCRAM-SHA-256", "does not enable"}},
		{"plain without a key", base("sasl.enabled.mechanisms", plainMech),
			plainKey, []string{"must define PLAIN users of listener SASL_SSL", `user_<name>="<password>"`}},
		{"plain key without users", base("sasl.enabled.mechanisms", plainMech, plainKey, noUsers),
			plainKey, []string{"must define PLAIN users of listener SASL_SSL", "[hidden]"}},
		{"plain on one of two SASL listeners", map[string]string{
			"listeners": "SASL_PLAINTEXT://:9092," + saslSSL, "ssl.keystore.location": keystore,
			"sasl.enabled.mechanisms": "PLAIN", plainKey: plainJAAS},
			"listener.name.sasl_plaintext.plain.sasl.jaas.config", []string{"listener SASL_PLAINTEXT"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadBroker("", nil, tt.flags)
			checkLoadErr(t, err, tt.key, tt.want...)
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error %q quotes a password", err)
			}
		})
	}

	// Consistent settings load, and PlainUsers is keyed by the listener name
	// as in listeners.
	b := mustLoad(t, "", nil, map[string]string{
		"listeners":                      "PLAINTEXT://:9092," + saslSSL + ",INTERNAL://:9094",
		"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,INTERNAL:SASL_PLAINTEXT",
		"ssl.keystore.location":          keystore,
		"sasl.enabled.mechanisms":        "SCRAM-SHA-256, PLAIN",
		plainKey:                         plainJAAS,
		"listener.name.internal.plain.sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required user_broker=b-pw;`,
		scramKey: scramJAAS,
	})
	want := map[string]map[string]string{
		"SASL_SSL": {"admin": "admin-secret", "alice": "alice-secret"},
		"INTERNAL": {"broker": "b-pw"},
	}
	if !reflect.DeepEqual(b.PlainUsers, want) {
		t.Errorf("PlainUsers = %v, want %v", b.PlainUsers, want)
	}
	if want := []string{"SCRAM-SHA-256", "PLAIN"}; !reflect.DeepEqual(b.SASLMechanisms, want) {
		t.Errorf("SASLMechanisms = %v, want %v", b.SASLMechanisms, want)
	}
	// SCRAM alone needs no JAAS key: its users are in the metadata.
	b = mustLoad(t, "", nil, map[string]string{"listeners": "SASL_PLAINTEXT://:9092"})
	if b.PlainUsers != nil || b.Listeners[0].Protocol != ProtocolSASLPlaintext {
		t.Errorf("PlainUsers = %v, listener %+v", b.PlainUsers, b.Listeners[0])
	}
}

func TestDescribeBrokerJAASIsSensitive(t *testing.T) {
	b := mustLoad(t, "", nil, map[string]string{
		"listeners": "SASL_PLAINTEXT://:9092", "sasl.enabled.mechanisms": "PLAIN",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config": plainJAAS,
		"ssl.keystore.certificate.chain":                      testCert,
		"ssl.keystore.key":                                    testKey,
	})
	entries := DescribeBroker(b)
	if len(entries) != len(brokerDefs)+1 {
		t.Fatalf("%d entries, want %d (every def and the set JAAS key)", len(entries), len(brokerDefs)+1)
	}
	for i := 1; i < len(entries); i++ {
		if entries[i-1].Name >= entries[i].Name {
			t.Fatalf("entries not sorted: %s before %s", entries[i-1].Name, entries[i].Name)
		}
	}
	for _, name := range []string{"listener.name.sasl_plaintext.plain.sasl.jaas.config", "ssl.keystore.certificate.chain", "ssl.keystore.key"} {
		e := find(t, entries, name)
		readOnly := !strings.Contains(name, "jaas") // a listener's PLAIN users are dynamic
		if !e.Sensitive || !e.IsNull || e.Value != "" || e.Type != Password || e.Source != StaticBroker || e.ReadOnly != readOnly {
			t.Errorf("%s: %+v; want sensitive, null, PASSWORD, static, read-only %v", name, e, readOnly)
		}
		if len(e.Synonyms) != 1 || e.Synonyms[0].Value != "" || !e.Synonyms[0].IsNull || e.Synonyms[0].Source != StaticBroker {
			t.Errorf("%s: synonyms %+v leak or are missing", name, e.Synonyms)
		}
	}
	for _, e := range entries {
		for _, s := range append([]Synonym{{Value: e.Value}}, e.Synonyms...) {
			if strings.Contains(s.Value, "secret") || strings.Contains(s.Value, "fake") {
				t.Errorf("%s leaks a secret: %+v", e.Name, e)
			}
		}
	}
}

package config

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

const (
	ibPlainKey  = "listener.name.sasl_plaintext.plain.sasl.jaas.config"
	ibScramKey  = "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config"
	ibSecret    = "broker-secret-pw"
	ibPlainJAAS = plainLoginModule + ` required username="broker" password="` + ibSecret + `" user_broker="` + ibSecret + `" user_alice="alice-pw";`
	ibScramJAAS = scramLoginModule + ` required username="broker" password="` + ibSecret + `";`
)

// saslClusterFlags are the keys of node 1 of the three-voter cluster with
// one SASL_PLAINTEXT listener for clients and brokers, with extra added (a
// "" value deletes the key).
func saslClusterFlags(extra map[string]string) map[string]string {
	base := map[string]string{
		"listeners":            "SASL_PLAINTEXT://0.0.0.0:9092,CONTROLLER://0.0.0.0:9093",
		"advertised.listeners": "SASL_PLAINTEXT://broker-1:9092",
	}
	for k, v := range extra {
		base[k] = v
	}
	return clusterFlags("1", base)
}

func TestInterBrokerSASL(t *testing.T) {
	tests := []struct {
		name  string
		flags map[string]string
		want  InterBrokerSASL
	}{
		{"PLAIN by default", saslClusterFlags(map[string]string{
			"sasl.enabled.mechanisms": "PLAIN", ibPlainKey: ibPlainJAAS}),
			InterBrokerSASL{Mechanism: MechanismPlain, User: "broker", Password: ibSecret}},
		{"SCRAM-SHA-256", saslClusterFlags(map[string]string{
			interBrokerMechanismKey: MechanismScramSHA256, ibScramKey: ibScramJAAS}),
			InterBrokerSASL{Mechanism: MechanismScramSHA256, User: "broker", Password: ibSecret}},
		{"SCRAM-SHA-512 on SASL_SSL", clusterFlags("1", map[string]string{
			"listeners":             "SASL_SSL://0.0.0.0:9092,CONTROLLER://0.0.0.0:9093",
			"advertised.listeners":  "SASL_SSL://broker-1:9092",
			"ssl.keystore.location": "/etc/strata/broker.pem",
			interBrokerMechanismKey: MechanismScramSHA512,
			"listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": scramLoginModule + ` required username=broker password="a \"quoted\" pw";`}),
			InterBrokerSASL{Mechanism: MechanismScramSHA512, User: "broker", Password: `a "quoted" pw`}},
		{"the named SASL listener among others", clusterFlags("1", map[string]string{
			"listeners":                                     "PLAINTEXT://0.0.0.0:9092,INTERNAL://0.0.0.0:9094,CONTROLLER://0.0.0.0:9093",
			"advertised.listeners":                          "PLAINTEXT://broker-1:9092,INTERNAL://broker-1:9094",
			"listener.security.protocol.map":                "PLAINTEXT:PLAINTEXT,INTERNAL:SASL_PLAINTEXT",
			"inter.broker.listener.name":                    "INTERNAL",
			"sasl.enabled.mechanisms":                       "PLAIN,SCRAM-SHA-256",
			"listener.name.internal.plain.sasl.jaas.config": ibPlainJAAS}),
			InterBrokerSASL{Mechanism: MechanismPlain, User: "broker", Password: ibSecret}},
		{"a PLAINTEXT inter-broker listener needs none", clusterFlags("1", map[string]string{
			"listeners":                      "PLAINTEXT://0.0.0.0:9092,SASL_PLAINTEXT://0.0.0.0:9094,CONTROLLER://0.0.0.0:9093",
			"advertised.listeners":           "PLAINTEXT://broker-1:9092,SASL_PLAINTEXT://broker-1:9094",
			"inter.broker.listener.name":     "PLAINTEXT",
			interBrokerMechanismKey:          MechanismScramSHA512, // not enabled, and ignored
			"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT"}),
			InterBrokerSASL{}},
		{"a single node needs none", map[string]string{"listeners": "SASL_PLAINTEXT://127.0.0.1:9092"},
			InterBrokerSASL{}},
		{"a single node reads them when given", map[string]string{
			"listeners": "SASL_PLAINTEXT://127.0.0.1:9092", "sasl.enabled.mechanisms": "PLAIN", ibPlainKey: ibPlainJAAS},
			InterBrokerSASL{Mechanism: MechanismPlain, User: "broker", Password: ibSecret}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := mustLoad(t, "", nil, tt.flags)
			if b.InterBrokerSASL != tt.want {
				t.Fatalf("InterBrokerSASL = %#v (password %q), want %#v (password %q)",
					b.InterBrokerSASL, b.InterBrokerSASL.Password, tt.want, tt.want.Password)
			}
		})
	}
}

// The broker's own username and password do not disturb the PLAIN users
// of the same JAAS value.
func TestInterBrokerSASLKeepsPlainUsers(t *testing.T) {
	b := mustLoad(t, "", nil, saslClusterFlags(map[string]string{"sasl.enabled.mechanisms": "PLAIN", ibPlainKey: ibPlainJAAS}))
	want := map[string]map[string]string{"SASL_PLAINTEXT": {"broker": ibSecret, "alice": "alice-pw"}}
	if !reflect.DeepEqual(b.PlainUsers, want) {
		t.Fatalf("PlainUsers = %v, want %v", b.PlainUsers, want)
	}
}

func TestInterBrokerSASLErrors(t *testing.T) {
	withoutOption := func(opt string) string {
		return strings.Replace(ibPlainJAAS, opt, "", 1)
	}
	tests := []struct {
		name  string
		flags map[string]string
		key   string
		frags []string
	}{
		{"mechanism not enabled", saslClusterFlags(nil), // enabled: SCRAM-SHA-256,SCRAM-SHA-512
			interBrokerMechanismKey, []string{"PLAIN", "sasl.enabled.mechanisms (SCRAM-SHA-256,SCRAM-SHA-512)", "SASL_PLAINTEXT (inter.broker.listener.name)", "add PLAIN to sasl.enabled.mechanisms"}},
		{"SCRAM mechanism not enabled", saslClusterFlags(map[string]string{
			"sasl.enabled.mechanisms": "PLAIN", ibPlainKey: ibPlainJAAS, interBrokerMechanismKey: MechanismScramSHA512}),
			interBrokerMechanismKey, []string{"SCRAM-SHA-512", "sasl.enabled.mechanisms (PLAIN)"}},
		{"no JAAS for the mechanism", saslClusterFlags(map[string]string{interBrokerMechanismKey: MechanismScramSHA256}),
			ibScramKey, []string{"must be set", scramLoginModule + ` required username="<broker>" password="<password>";`, "SCRAM-SHA-256 (sasl.mechanism.inter.broker.protocol)"}},
		{"no username", saslClusterFlags(map[string]string{
			"sasl.enabled.mechanisms": "PLAIN", ibPlainKey: withoutOption(`username="broker"`)}),
			ibPlainKey, []string{`add username="<broker>"`, "[hidden]"}},
		{"no password", saslClusterFlags(map[string]string{
			"sasl.enabled.mechanisms": "PLAIN", ibPlainKey: withoutOption(`password="` + ibSecret + `"`)}),
			ibPlainKey, []string{`add password="<password>"`}},
		{"neither", saslClusterFlags(map[string]string{
			interBrokerMechanismKey: MechanismScramSHA256, ibScramKey: scramLoginModule + " required;"}),
			ibScramKey, []string{`add username="<broker>" password="<password>"`}},
		{"an empty username", saslClusterFlags(map[string]string{
			"sasl.enabled.mechanisms": "PLAIN", ibPlainKey: strings.Replace(ibPlainJAAS, `username="broker"`, `username=""`, 1)}),
			ibPlainKey, []string{`add username="<broker>"`}},
		{"GSSAPI", saslClusterFlags(map[string]string{interBrokerMechanismKey: "GSSAPI"}),
			interBrokerMechanismKey, []string{"GSSAPI is not supported by Strata"}},
		{"lower case", saslClusterFlags(map[string]string{interBrokerMechanismKey: "plain"}),
			interBrokerMechanismKey, []string{"must be one of: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512"}},
		// Checked even when the inter-broker listener is not SASL, as every
		// key's value is.
		{"unknown mechanism on a single node", map[string]string{interBrokerMechanismKey: "SCRAM-SHA-1"},
			interBrokerMechanismKey, []string{"must be one of"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadBroker("", nil, tt.flags)
			checkLoadErr(t, err, tt.key, tt.frags...)
			if strings.Contains(err.Error(), ibSecret) {
				t.Errorf("error %q quotes the password", err)
			}
		})
	}
}

func TestInterBrokerMechanismDef(t *testing.T) {
	d, ok := LookupBroker(interBrokerMechanismKey)
	if !ok {
		t.Fatal("no def")
	}
	if d.Default != MechanismPlain || !d.HasDefault || d.Type != String || d.Sensitive || !d.ReadOnly {
		t.Fatalf("def %+v: want default PLAIN, String, not sensitive, read-only", d)
	}
	if got, ok := envKey("STRATA_SASL_MECHANISM_INTER_BROKER_PROTOCOL"); !ok || got != interBrokerMechanismKey {
		t.Fatalf("envKey = %q, %v", got, ok)
	}
}

// The password is described nowhere: the JAAS value is sensitive (null in
// DescribeBroker), and a printed Broker hides it.
func TestInterBrokerPasswordIsSecret(t *testing.T) {
	b := mustLoad(t, "", nil, saslClusterFlags(map[string]string{"sasl.enabled.mechanisms": "PLAIN", ibPlainKey: ibPlainJAAS}))
	if b.InterBrokerSASL.Password != ibSecret {
		t.Fatalf("InterBrokerSASL = %#v", b.InterBrokerSASL)
	}
	found := false
	for _, e := range DescribeBroker(b) {
		if strings.Contains(e.Value, ibSecret) {
			t.Errorf("DescribeBroker shows the password in %s", e.Name)
		}
		for _, s := range e.Synonyms {
			if strings.Contains(s.Value, ibSecret) {
				t.Errorf("DescribeBroker shows the password in a synonym of %s", e.Name)
			}
		}
		if e.Name == ibPlainKey {
			found = true
			if !e.Sensitive || !e.IsNull {
				t.Errorf("%s: sensitive %v, null %v; want both", e.Name, e.Sensitive, e.IsNull)
			}
		}
		if e.Name == interBrokerMechanismKey && (e.Value != MechanismPlain || e.Sensitive) {
			t.Errorf("%s = %q, sensitive %v", e.Name, e.Value, e.Sensitive)
		}
	}
	if !found {
		t.Errorf("DescribeBroker has no %s", ibPlainKey)
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		if s := fmt.Sprintf(verb, b.InterBrokerSASL); strings.Contains(s, ibSecret) || !strings.Contains(s, "broker") {
			t.Errorf("%s of InterBrokerSASL = %q, want the user and not the password", verb, s)
		}
	}
	if s := fmt.Sprintf("%+v", *b); strings.Contains(s, "{PLAIN broker "+ibSecret) {
		t.Errorf("a printed Broker shows the inter-broker password")
	}
}

func TestParseJAASLogin(t *testing.T) {
	tests := []struct {
		name string
		mech string
		in   string
		want jaasLogin
	}{
		{"plain with users", MechanismPlain, ibPlainJAAS,
			jaasLogin{users: map[string]string{"broker": ibSecret, "alice": "alice-pw"}, username: "broker", password: ibSecret}},
		{"plain users only", MechanismPlain, plainLoginModule + ` required user_a="x";`,
			jaasLogin{users: map[string]string{"a": "x"}}},
		{"plain credentials only", MechanismPlain, plainLoginModule + ` required username=b password=p;`,
			jaasLogin{users: map[string]string{}, username: "b", password: "p"}},
		{"scram", MechanismScramSHA256, ibScramJAAS,
			jaasLogin{users: map[string]string{}, username: "broker", password: ibSecret}},
		{"scram with tokenauth", MechanismScramSHA512, scramLoginModule + ` required username="b" password="p" tokenauth="false";`,
			jaasLogin{users: map[string]string{}, username: "b", password: "p"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseJAASLogin(tt.mech, tt.in)
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("parseJAASLogin = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

package e2e

import (
	"crypto/tls"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestListenerKeystoreRotation: an operator renews the SSL listener's
// certificate with kafka-configs on the broker's own resource (KIP-226),
// without a restart. New connections get the renewed certificate; setting
// the same path again reloads a file renewed in place; a certificate for
// another subject, a file that is no keystore and the cluster-wide resource
// are refused and change nothing; the keystore becomes a JKS one with its
// type and password (refused with a wrong one; the password never
// described or logged); clients keep producing and consuming over TLS; and
// a restart starts with the dynamic keystore (kept in the quorum).
func TestListenerKeystoreRotation(t *testing.T) {
	t.Parallel()
	b, pki := startSecureBroker(t, t.TempDir(), "strata.metrics.listener=127.0.0.1:0")
	adm := newAdmin(t, b.Listeners["PLAINTEXT"])
	node := brokerNodeID(t, adm)
	dir := t.TempDir()
	const key = "listener.name.ssl.ssl.keystore.location"
	served := func() string {
		t.Helper()
		c, err := tls.Dial("tcp", b.Listeners["SSL"], pki.clientTLS(false))
		if err != nil {
			t.Fatalf("TLS dial: %v", err)
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].SerialNumber.String()
	}
	issue := func(name, file string) string {
		t.Helper()
		pem, err := pki.IssueServer(name)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, file)
		writeFile(t, path, pem)
		return path
	}
	set := func(path string, brokers ...int32) error {
		return alterBrokerConfigs(t, adm, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: key, Value: kadm.StringPtr(path)}}, brokers...)
	}
	waitServed := func(not string) string {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			if got := served(); got != not {
				return got
			}
			if time.Now().After(deadline) {
				t.Fatalf("still serving certificate %s 10 s after the change", not)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	expiry := scrape(t, metricsBase(t, b)+"/metrics")[`strata_listener_certificate_expiry_timestamp_seconds{listener="SSL"}`]
	if in := time.Until(time.Unix(int64(expiry), 0)); in < 23*time.Hour || in > 25*time.Hour {
		t.Errorf("the SSL listener's certificate expires in %v by the gauge, want about a day (testpki)", in)
	}
	first := served()
	renewed := issue("127.0.0.1", "renewed.pem")
	if err := set(renewed, node); err != nil {
		t.Fatalf("setting a renewed keystore: %v", err)
	}
	second := waitServed(first)
	described, err := adm.DescribeBrokerConfigs(testContext(t, clientDeliveryTimeout), node)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := described.On(strconv.Itoa(int(node)), nil); err != nil {
		t.Fatal(err)
	} else if v, ok := configValue(c, key); !ok || v.MaybeValue() != renewed || v.Source != kmsg.ConfigSourceDynamicBrokerConfig {
		t.Errorf("described %s: %+v (found %v), want %s from DYNAMIC_BROKER_CONFIG", key, v, ok, renewed)
	}

	issue("127.0.0.1", "renewed.pem") // renewed again, in place
	if err := set(renewed, node); err != nil {
		t.Fatalf("setting the same path again: %v", err)
	}
	third := waitServed(second)

	for _, tc := range []struct {
		name, path string
		brokers    []int32
		want       error
	}{
		{"another subject", issue("10.1.2.3", "other.pem"), []int32{node}, kerr.InvalidConfig},
		{"not a keystore", writeTemp(t, dir, "junk.pem", "junk"), []int32{node}, kerr.InvalidConfig},
		{"cluster-wide", renewed, nil, kerr.InvalidRequest},
	} {
		if err := set(tc.path, tc.brokers...); !errors.Is(err, tc.want) {
			t.Errorf("%s: err %v, want %v", tc.name, err, tc.want)
		}
	}
	time.Sleep(200 * time.Millisecond)
	if got := served(); got != third {
		t.Fatalf("serving %s after refused changes, want %s", got, third)
	}

	// The keystore becomes a JKS one, its type and password set with it
	// (Kafka's whole RECONFIGURABLE_CONFIGS set is dynamic): a wrong
	// password is refused, the right one taken; the password is never
	// described or logged.
	stores, err := pki.WriteStores(dir, "changeit")
	if err != nil {
		t.Fatal(err)
	}
	toJKS := func(password string) error {
		return alterBrokerConfigs(t, adm, []kadm.AlterConfig{
			{Op: kadm.SetConfig, Name: "listener.name.ssl.ssl.keystore.type", Value: kadm.StringPtr("JKS")},
			{Op: kadm.SetConfig, Name: key, Value: kadm.StringPtr(stores.ServerJKS)},
			{Op: kadm.SetConfig, Name: "listener.name.ssl.ssl.keystore.password", Value: kadm.StringPtr(password)},
		}, node)
	}
	if err := toJKS("not-it"); !errors.Is(err, kerr.InvalidConfig) {
		t.Fatalf("a JKS keystore with a wrong password: %v, want INVALID_CONFIG", err)
	}
	if err := toJKS(stores.Password); err != nil {
		t.Fatalf("switching to a JKS keystore: %v", err)
	}
	if got := waitServed(third); got != first {
		t.Fatalf("serving %s after the switch to the JKS keystore, want its certificate %s", got, first)
	}
	described, err = adm.DescribeBrokerConfigs(testContext(t, clientDeliveryTimeout), node)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := described.On(strconv.Itoa(int(node)), nil); err != nil {
		t.Fatal(err)
	} else if v, ok := configValue(c, "listener.name.ssl.ssl.keystore.password"); !ok || v.Value != nil || !v.Sensitive || v.Source != kmsg.ConfigSourceDynamicBrokerConfig {
		t.Errorf("described the keystore password as %+v (found %v), want a sensitive DYNAMIC_BROKER_CONFIG without its value", v, ok)
	}
	if strings.Contains(b.output.String(), stores.Password) || strings.Contains(b.output.String(), "not-it") {
		t.Errorf("the broker logged a keystore password:\n%s", b.output.String())
	}

	createTopic(t, adm, "after-rotation", 1, nil)
	roundTrip(t, b.Listeners["SSL"], "after-rotation", 20, tlsOpt(pki.clientTLS(false)))

	// The SASL_SSL listener renewed too, the operator deletes the static
	// keystore: the broker starts on the dynamic ones all the same.
	if err := alterBrokerConfigs(t, adm, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "listener.name.sasl_ssl.ssl.keystore.location", Value: kadm.StringPtr(renewed)}}, node); err != nil {
		t.Fatalf("renewing the SASL_SSL listener: %v", err)
	}
	b.Stop()
	if err := os.Remove(pki.KeystoreFile); err != nil {
		t.Fatal(err)
	}
	b.Restart()
	if got := served(); got != first {
		t.Fatalf("after a restart serving %s, want the dynamic JKS keystore's %s", got, first)
	}
}

func writeTemp(t *testing.T, dir, name, data string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	writeFile(t, path, []byte(data))
	return path
}

// configValue finds the config called name among a resource's described
// configs.
func configValue(c kadm.ResourceConfig, name string) (kadm.Config, bool) {
	for _, v := range c.Configs {
		if v.Key == name {
			return v, true
		}
	}
	return kadm.Config{}, false
}

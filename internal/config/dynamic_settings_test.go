package config

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestCleanerSettingsAreDynamic(t *testing.T) {
	b := mustLoad(t, "", nil, map[string]string{"log.cleaner.threads": "2", "log.cleaner.io.buffer.size": "1048576"})
	if got, want := b.Cleaner(), (CleanerSettings{Threads: 2, DedupeBytes: 134217728, Backoff: 15 * time.Second, IOBytesPerSecond: math.MaxFloat64}); got != want {
		t.Fatalf("static Cleaner() = %+v, want %+v", got, want)
	}
	dyn := b.WithDynamic(Dynamic{
		Default: map[string]string{"log.cleaner.threads": "3", cleanerIORateKey: "1048576", "log.cleaner.backoff.ms": "100"},
		Node:    map[string]string{"log.cleaner.threads": "4", "log.cleaner.dedupe.buffer.size": "4096"},
	})
	if got, want := dyn.Cleaner(), (CleanerSettings{Threads: 4, DedupeBytes: 4096, Backoff: 100 * time.Millisecond, IOBytesPerSecond: 1 << 20}); got != want {
		t.Fatalf("dynamic Cleaner() = %+v, want %+v", got, want)
	}
	if _, err := ValidateDynamic(map[string]string{"log.cleaner.threads": "2", "log.cleaner.dedupe.buffer.size": "8192",
		"log.cleaner.backoff.ms": "10", cleanerIORateKey: "5e6"}); err != nil {
		t.Fatalf("the cleaner's dynamic keys: %v", err)
	}
	var nd *NotDynamicError
	if _, err := ValidateDynamic(map[string]string{"log.cleaner.enable": "false", "log.cleaner.io.buffer.size": "1"}); !errors.As(err, &nd) {
		t.Fatalf("log.cleaner.enable and the no-effect buffer size changed at run time: %v", err)
	}
	for _, v := range []string{"0", "-1", "fast"} {
		_, err := ValidateDynamic(map[string]string{cleanerIORateKey: v})
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != cleanerIORateKey || !(strings.Contains(err.Error(), "positive number") || strings.Contains(err.Error(), "finite number")) {
			t.Errorf("%s=%s: %v", cleanerIORateKey, v, err)
		}
	}
}

func TestCheckCleanerChange(t *testing.T) {
	at := func(n int32) CleanerSettings { return CleanerSettings{Threads: n} }
	tests := []struct {
		enabled       bool
		running, next int32
		want          string // in the error; "" for none
	}{
		{true, 2, 2, ""},
		{true, 2, 4, ""},
		{true, 2, 1, ""},
		{true, 4, 2, ""},
		{true, 3, 1, ""}, // 3/2 is 1, as Kafka's integer division
		{true, 2, 5, "cannot be increased to more than double the current value 2"},
		{true, 5, 1, "cannot be reduced to less than half the current value 5"},
		{true, 2, 0, "must be at least 1 at run time"},
		{true, 0, 1, "more than double the current value 0"},
		{false, 1, 8, ""}, // no cleaner runs: the value waits for a restart
	}
	for _, tt := range tests {
		err := CheckCleanerChange(tt.enabled, at(tt.running), at(tt.next))
		var ce *Error
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("enabled %v, %d -> %d: %v", tt.enabled, tt.running, tt.next, err)
		case tt.want != "" && (!errors.As(err, &ce) || ce.Key != "log.cleaner.threads" || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("enabled %v, %d -> %d: %v, want %q", tt.enabled, tt.running, tt.next, err, tt.want)
		}
	}
}

func TestRemoteSettingsAreDynamic(t *testing.T) {
	b := mustLoad(t, "", nil, map[string]string{"remote.log.manager.copy.max.bytes.per.second": "1000"})
	want := RemoteSettings{CopyBytesPerSec: 1000, FetchBytesPerSec: math.MaxInt64, FetchMaxWait: 500 * time.Millisecond,
		ListOffsetsTimeout: 30 * time.Second, IndexCacheBytes: 1 << 30}
	if got := b.RemoteSettings(); got != want {
		t.Fatalf("static RemoteSettings() = %+v, want %+v", got, want)
	}
	in := map[string]string{"remote.log.manager.fetch.max.bytes.per.second": "2000", "remote.fetch.max.wait.ms": "100",
		"remote.list.offsets.request.timeout.ms": "5000", "remote.log.index.file.cache.total.size.bytes": "1048576"}
	if _, err := ValidateDynamic(in); err != nil {
		t.Fatal(err)
	}
	dyn := b.WithDynamic(Dynamic{Default: in, Node: map[string]string{"remote.log.manager.copy.max.bytes.per.second": "3000"}})
	want = RemoteSettings{CopyBytesPerSec: 3000, FetchBytesPerSec: 2000, FetchMaxWait: 100 * time.Millisecond,
		ListOffsetsTimeout: 5 * time.Second, IndexCacheBytes: 1 << 20}
	if got := dyn.RemoteSettings(); got != want {
		t.Fatalf("dynamic RemoteSettings() = %+v, want %+v", got, want)
	}
	if _, err := ValidateDynamic(map[string]string{"remote.log.manager.copy.max.bytes.per.second": "0"}); err == nil {
		t.Fatal("a zero copy quota was taken")
	}
}

func TestProducerStateSettingsAreDynamic(t *testing.T) {
	b := mustLoad(t, "", nil, nil)
	if b.ProducerIDExpirationNow() != 24*time.Hour || !b.TxnPartitionVerificationNow() {
		t.Fatalf("defaults: %v, %v", b.ProducerIDExpirationNow(), b.TxnPartitionVerificationNow())
	}
	in := map[string]string{"producer.id.expiration.ms": "60000", "transaction.partition.verification.enable": "false"}
	if _, err := ValidateDynamic(in); err != nil {
		t.Fatal(err)
	}
	dyn := b.WithDynamic(Dynamic{Default: in})
	if dyn.ProducerIDExpirationNow() != time.Minute || dyn.TxnPartitionVerificationNow() {
		t.Fatalf("dynamic: %v, %v", dyn.ProducerIDExpirationNow(), dyn.TxnPartitionVerificationNow())
	}
}

// A listener's whole keystore and truststore set is dynamic on one
// broker, passwords and inline PEM too (Kafka's RECONFIGURABLE_CONFIGS),
// and never logged in the clear.
func TestListenerStoresAreDynamic(t *testing.T) {
	in := map[string]string{
		"listener.name.ssl.ssl.keystore.type":       "JKS",
		"listener.name.ssl.ssl.keystore.location":   "/ks.jks",
		"listener.name.ssl.ssl.keystore.password":   "s3cret",
		"listener.name.ssl.ssl.key.password":        "s3cret",
		"listener.name.ssl.ssl.truststore.type":     "PKCS12",
		"listener.name.ssl.ssl.truststore.password": "s3cret",
	}
	if _, err := ValidateDynamic(in); err != nil {
		t.Fatalf("a listener's stores: %v", err)
	}
	var pb *PerBrokerOnlyError
	if err := CheckClusterWide(in); !errors.As(err, &pb) || len(pb.Keys) != len(in) {
		t.Fatalf("cluster-wide: %v, want all %d refused", err, len(in))
	}
	var nd *NotDynamicError
	if _, err := ValidateDynamic(map[string]string{"ssl.keystore.password": "s3cret"}); !errors.As(err, &nd) {
		t.Fatalf("the broker-wide keystore password at run time: %v, want not dynamic (listener keys only, as Kafka)", err)
	}
	if _, err := ValidateDynamic(map[string]string{"listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config": "x"}); !errors.As(err, &nd) {
		t.Fatalf("a listener's SCRAM JAAS config (the broker's own credentials) at run time: %v, want not dynamic", err)
	}
	red := Redacted(in)
	for k, v := range red {
		if strings.Contains(v, "s3cret") {
			t.Errorf("Redacted kept %s=%s", k, v)
		}
	}
	if red["listener.name.ssl.ssl.keystore.location"] != "/ks.jks" {
		t.Errorf("Redacted hid a value that is no secret: %v", red)
	}
}

// Refusing a static key at run time says how to set it; refusing one of
// Kafka's keys that change nothing here says so instead.
func TestNotDynamicErrorSaysWhy(t *testing.T) {
	_, err := ValidateDynamic(map[string]string{"num.partitions": "3", "num.io.threads": "16"})
	var nd *NotDynamicError
	if !errors.As(err, &nd) {
		t.Fatalf("err %v", err)
	}
	for _, want := range []string{"[num.io.threads, num.partitions]", "Strata applies [num.partitions] at start only",
		"[num.io.threads] change nothing in Strata"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestReplicaFetchersAreDynamic(t *testing.T) {
	b := mustLoad(t, "", nil, map[string]string{"num.replica.fetchers": "2"})
	if b.ReplicaFetchersNow() != 2 {
		t.Fatalf("static: %d", b.ReplicaFetchersNow())
	}
	if _, err := ValidateDynamic(map[string]string{"num.replica.fetchers": "4"}); err != nil {
		t.Fatal(err)
	}
	if got := b.WithDynamic(Dynamic{Node: map[string]string{"num.replica.fetchers": "4"}}).ReplicaFetchersNow(); got != 4 {
		t.Fatalf("dynamic: %d", got)
	}
	for _, tt := range []struct {
		running, next int32
		want          string
	}{
		{2, 4, ""}, {2, 1, ""}, {2, 5, "more than double the current value 2"}, {4, 1, "less than half the current value 4"},
		{1, 0, "must be at least 1"},
	} {
		err := CheckReplicaFetchersChange(tt.running, tt.next)
		if (tt.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%d -> %d: %v, want %q", tt.running, tt.next, err, tt.want)
		}
	}
}

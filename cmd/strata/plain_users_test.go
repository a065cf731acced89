package main

import (
	"log/slog"
	"maps"
	"testing"

	"github.com/strata-broker/strata/internal/config"
)

// A listener's sessions read the users the latest apply gave it: the
// broker's dynamic PLAIN JAAS config, else the static one.
func TestPlainUsersSetApplies(t *testing.T) {
	const key = "listener.name.sasl_plaintext.plain.sasl.jaas.config"
	cfg, err := config.LoadBroker("", nil, map[string]string{
		"listeners": "SASL_PLAINTEXT://127.0.0.1:9092", "sasl.enabled.mechanisms": "PLAIN",
		key: `org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="a";`,
	})
	if err != nil {
		t.Fatal(err)
	}
	set := newPlainUsersSet(slog.New(slog.DiscardHandler))
	users := set.add("SASL_PLAINTEXT", cfg)
	creds := credentials{plain: users}
	if pw, ok := creds.PlainPassword("alice"); !ok || pw != "a" {
		t.Fatalf("alice with the static users: %q, %v", pw, ok)
	}
	set.apply(cfg.WithDynamic(config.Dynamic{Node: map[string]string{key: `org.apache.kafka.common.security.plain.PlainLoginModule required user_bob="b";`}}))
	if _, ok := creds.PlainPassword("alice"); ok {
		t.Fatal("alice is still a user after the dynamic change")
	}
	if pw, ok := creds.PlainPassword("bob"); !ok || pw != "b" {
		t.Fatalf("bob after the dynamic change: %q, %v", pw, ok)
	}
	set.apply(cfg)
	if got := *users.Load(); !maps.Equal(got, map[string]string{"alice": "a"}) {
		t.Fatalf("with the dynamic config deleted: %v, want the static users", got)
	}
}

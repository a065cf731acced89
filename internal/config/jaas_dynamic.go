package config

import (
	"fmt"
	"slices"
	"strings"
)

// A listener's PLAIN users (listener.name.<listener>.plain.sasl.jaas.config)
// change at run time, per broker, as Kafka's dynamic sasl.jaas.config
// (KIP-226): each authentication on the listener from then on checks the
// users of the broker's dynamic value, else of its static one; sessions
// already authenticated stay (until connections.max.reauth.ms asks them
// again). The broker's own credentials (the username and password
// options), which it presents to the other brokers, are read at start.

// isDynamicJAASKey reports whether key is a listener's PLAIN JAAS config.
func isDynamicJAASKey(key string) bool {
	k, ok := parseJAASKey(key)
	return ok && k.mechanism == MechanismPlain
}

// PlainUsersOf are the PLAIN users of SASL listener name: those of this
// broker's dynamic PLAIN JAAS config of the listener when it has one, else
// the static ones (Broker.PlainUsers).
func (b *Broker) PlainUsersOf(listener string) map[string]string {
	key := jaasKey{listener: strings.ToLower(listener), mechanism: MechanismPlain}.String()
	if v, ok := b.dynamic.Node[key]; ok {
		if users, err := jaasUsers(MechanismPlain, v); err == nil && len(users) > 0 {
			return users
		}
	}
	return b.PlainUsers[listener]
}

// CheckDynamicSASL checks this broker's dynamic PLAIN JAAS configs: each
// names a SASL listener of this broker, with PLAIN enabled; each defines
// at least one user; and that of the inter-broker listener, when the
// brokers authenticate to each other with PLAIN there, keeps the broker's
// own user with its password, which the other brokers present too.
func (b *Broker) CheckDynamicSASL() error {
	for _, key := range sortedKeys(b.dynamic.Node) {
		k, ok := parseJAASKey(key)
		if !ok || k.mechanism != MechanismPlain {
			continue
		}
		l, err := b.prefixedSASLListener(key, hiddenValue, k.listener)
		switch {
		case err != nil:
			return err
		case !slices.Contains(b.SASLMechanisms, MechanismPlain):
			return &Error{Key: key, Value: hiddenValue,
				Msg: "is for PLAIN, which sasl.enabled.mechanisms does not enable on this broker"}
		}
		users, err := jaasUsers(MechanismPlain, b.dynamic.Node[key])
		if err != nil {
			return &Error{Key: key, Value: hiddenValue, Msg: err.Error()}
		}
		if len(users) == 0 {
			return &Error{Key: key, Value: hiddenValue,
				Msg: fmt.Sprintf(`defines no PLAIN user, which would let nobody in on listener %s: %s required user_<name>="<password>" ...;`, l.Name, plainLoginModule)}
		}
		own := b.InterBrokerSASL
		if l.Name == b.InterBrokerListener && own.Mechanism == MechanismPlain && users[own.User] != own.Password {
			return &Error{Key: key, Value: hiddenValue,
				Msg: fmt.Sprintf("drops or changes the password of user %s, with which the brokers authenticate to each other on %s (the inter-broker listener); keep user_%s as it is", own.User, l.Name, own.User)}
		}
	}
	return nil
}

package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// interBrokerMechanismKey is Kafka's sasl.mechanism.inter.broker.protocol.
const interBrokerMechanismKey = "sasl.mechanism.inter.broker.protocol"

// InterBrokerSASL are the credentials a broker presents to the other
// brokers when its inter-broker listener is SASL_PLAINTEXT or SASL_SSL:
// the mechanism of sasl.mechanism.inter.broker.protocol, and the username
// and password options of that listener's JAAS config for the mechanism
// (listener.name.<listener>.<mechanism>.sasl.jaas.config), as in Kafka.
// Either all three are set or none is: the zero value means the broker
// makes no SASL connections to other brokers. Password is a secret: String
// and GoString hide it, so a logged or printed Broker does not show it.
type InterBrokerSASL struct {
	Mechanism string // PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512; one of Broker.SASLMechanisms
	User      string
	Password  string
}

// String shows the mechanism and the user, never the password.
func (s InterBrokerSASL) String() string {
	if s.Mechanism == "" {
		return "{}"
	}
	return fmt.Sprintf("{%s %s %s}", s.Mechanism, s.User, hiddenValue)
}

// GoString is String for %#v.
func (s InterBrokerSASL) GoString() string { return "config.InterBrokerSASL" + s.String() }

// validInterBrokerMechanism allows one supported SASL mechanism, explaining
// why Kafka's others are refused.
func validInterBrokerMechanism(v string) error {
	switch v {
	case "GSSAPI":
		return fmt.Errorf("%s is %s", v, unsupportedMechanism)
	case MechanismOAuthBearer:
		return errors.New("OAUTHBEARER is not supported between Strata brokers (a broker would need its own token); use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	}
	return oneOf(mechanismNames...)(v)
}

// setInterBrokerSASL fills b.InterBrokerSASL when the inter-broker listener
// uses SASL, after setSASL. In a cluster the mechanism must be enabled and
// the listener's JAAS config for it must give username and password. A
// single node dials no other broker, so there a config without them is
// accepted (as it was before replication over SASL) and the field stays
// zero.
func (b *Broker) setInterBrokerSASL(g getter) error {
	i := slices.IndexFunc(b.Listeners, func(l Listener) bool { return l.Name == b.InterBrokerListener })
	if i < 0 {
		panic("config: inter.broker.listener.name " + b.InterBrokerListener + " is not a listener") // setInterBrokerListener
	}
	l := b.Listeners[i]
	if !l.UsesSASL() {
		return nil
	}
	s, err := b.interBrokerSASL(g, l)
	if err != nil {
		if b.Clustered() {
			return err
		}
		return nil
	}
	b.InterBrokerSASL = s
	return nil
}

// interBrokerSASL reads the credentials of the SASL inter-broker listener l.
func (b *Broker) interBrokerSASL(g getter, l Listener) (InterBrokerSASL, error) {
	mech := g.str(interBrokerMechanismKey)
	if !slices.Contains(b.SASLMechanisms, mech) {
		return InterBrokerSASL{}, &Error{Key: interBrokerMechanismKey, Value: mech,
			Msg: fmt.Sprintf("is not in sasl.enabled.mechanisms (%s), but the inter-broker listener %s (inter.broker.listener.name) uses %s, so brokers authenticate to each other with this mechanism; add %s to sasl.enabled.mechanisms or set %s to one of them",
				g.str("sasl.enabled.mechanisms"), l.Name, l.Protocol, mech, interBrokerMechanismKey)}
	}
	key := jaasKey{listener: strings.ToLower(l.Name), mechanism: mech}.String()
	v, set := b.Raw[key]
	module := scramLoginModule
	if mech == MechanismPlain {
		module = plainLoginModule
	}
	why := fmt.Sprintf("this broker presents them to the other brokers on the inter-broker listener %s (inter.broker.listener.name) with %s (%s)",
		l.Name, mech, interBrokerMechanismKey)
	if !set {
		return InterBrokerSASL{}, &Error{Key: key, Value: "",
			Msg: fmt.Sprintf(`must be set with the broker's own username and password: %s; add %s required username="<broker>" password="<password>";`, why, module)}
	}
	login, err := parseJAASLogin(mech, v)
	if err != nil {
		panic("config: unvalidated " + key) // jaasDef
	}
	var missing []string
	if login.username == "" {
		missing = append(missing, `username="<broker>"`)
	}
	if login.password == "" {
		missing = append(missing, `password="<password>"`)
	}
	if len(missing) > 0 {
		return InterBrokerSASL{}, &Error{Key: key, Value: hiddenValue,
			Msg: fmt.Sprintf("must give the broker's own username and password: %s; add %s", why, strings.Join(missing, " "))}
	}
	return InterBrokerSASL{Mechanism: mech, User: login.username, Password: login.password}, nil
}

package config

import (
	"errors"
	"strings"
	"time"
)

// authorizerNames are the authorizer.class.name values: none, or one of
// Kafka's two ACL authorizers, which Strata's authorizer stands in for.
var authorizerNames = []string{"", "org.apache.kafka.metadata.authorizer.StandardAuthorizer", "kafka.security.authorizer.AclAuthorizer"}

// splitSuperUsers splits super.users: semicolon-separated principals.
func splitSuperUsers(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ";") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// validSuperUsers checks that each principal is Type:name, as Kafka's
// KafkaPrincipal.fromString requires.
func validSuperUsers(v string) error {
	for _, p := range splitSuperUsers(v) {
		if kind, name, ok := strings.Cut(p, ":"); !ok || kind == "" || name == "" {
			return errors.New("must be principals separated by ';', each Type:name, e.g. User:admin;User:alice")
		}
	}
	return nil
}

// setAuthorizer fills the authorizer fields, the failed-authentication
// delay and the SASL session lifetime.
func (b *Broker) setAuthorizer(g getter) {
	b.Authorizer = g.str("authorizer.class.name") != ""
	b.SuperUsers = splitSuperUsers(g.str("super.users"))
	b.AllowEveryoneIfNoACL = g.flag("allow.everyone.if.no.acl.found")
	b.FailedAuthenticationDelay = time.Duration(g.i64("connection.failed.authentication.delay.ms")) * time.Millisecond
	b.MaxReauth = time.Duration(g.i64("connections.max.reauth.ms")) * time.Millisecond
}

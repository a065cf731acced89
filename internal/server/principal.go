package server

import "crypto/x509"

// Anonymous is the principal of a connection that did not authenticate,
// Kafka's KafkaPrincipal.ANONYMOUS.
const Anonymous = "User:ANONYMOUS"

// Principal is the connection's Kafka principal, as Kafka's
// DefaultKafkaPrincipalBuilder names it: the SASL user once authenticated
// ("User:alice"), else the subject of the TLS client certificate
// ("User:CN=alice,O=example", RFC 2253), else User:ANONYMOUS. On a SASL
// connection that has not authenticated it is "". Call it only from
// Handle (the reader goroutine): it caches its answer.
func (ci *ConnInfo) Principal() string {
	if ci.principal != "" {
		return ci.principal
	}
	switch {
	case ci.SASL != nil:
		if !ci.SASL.Authenticated() {
			return ""
		}
		ci.principal = ci.SASL.Principal()
	case ci.tlsPrincipal != "":
		ci.principal = ci.tlsPrincipal
	default:
		ci.principal = Anonymous
	}
	return ci.principal
}

// certificatePrincipal is the principal of a verified client certificate
// chain, "" when the client sent none; ok is false when mapCert refuses
// the subject.
func certificatePrincipal(chain []*x509.Certificate, mapCert func(string) (string, bool)) (principal string, ok bool) {
	if len(chain) == 0 {
		return "", true
	}
	name := chain[0].Subject.String()
	if mapCert != nil {
		if name, ok = mapCert(name); !ok {
			return "", false
		}
	}
	return "User:" + name, true
}

package config

import (
	"fmt"
	"strings"
)

// storeError is the first disagreement among the keystore and truststore
// settings of t: a store in a file or inline but not both; inline stores
// are PEM; store passwords only for the PKCS12 and JKS stores that need
// them, a key password for their keys and encrypted PEM keys.
// ks and ts name the key that set a keystore or truststore value (the
// broker-wide key, or a listener's own).
func storeError(t TLSConfig, ks, ts func(string) string) error {
	inlineKeystore := t.KeystoreChain != "" || t.KeystoreKey != ""
	switch {
	case t.KeystoreLocation != "" && inlineKeystore:
		return &Error{Key: ks("ssl.keystore.location"), Value: t.KeystoreLocation,
			Msg: fmt.Sprintf("is set together with %s or %s; set the file or the inline PEM, not both",
				ks("ssl.keystore.certificate.chain"), ks("ssl.keystore.key"))}
	case t.KeystoreChain != "" && t.KeystoreKey == "":
		return &Error{Key: ks("ssl.keystore.certificate.chain"), Value: hiddenValue,
			Msg: fmt.Sprintf("is set but %s is not; set both, or %s instead", ks("ssl.keystore.key"), ks("ssl.keystore.location"))}
	case t.KeystoreKey != "" && t.KeystoreChain == "":
		return &Error{Key: ks("ssl.keystore.key"), Value: hiddenValue,
			Msg: fmt.Sprintf("is set but %s is not; set both, or %s instead", ks("ssl.keystore.certificate.chain"), ks("ssl.keystore.location"))}
	case t.KeystoreType != StorePEM && inlineKeystore:
		return &Error{Key: ks("ssl.keystore.type"), Value: t.KeystoreType,
			Msg: fmt.Sprintf("reads %s; the inline %s and %s are PEM: set %s=PEM",
				ks("ssl.keystore.location"), ks("ssl.keystore.certificate.chain"), ks("ssl.keystore.key"), ks("ssl.keystore.type"))}
	case t.KeystoreType == StorePEM && t.KeystorePassword != "":
		return &Error{Key: ks("ssl.keystore.password"), Value: hiddenValue,
			Msg: fmt.Sprintf("is for a PKCS12 or JKS keystore (%s); a PEM keystore has no password: unset it", ks("ssl.keystore.type"))}
	case t.KeystoreKey != "" && strings.Contains(t.KeystoreKey, encryptedKeyPEM) && t.KeyPassword == "":
		return &Error{Key: ks("ssl.key.password"), Value: "",
			Msg: fmt.Sprintf("must be set: %s is an encrypted private key", ks("ssl.keystore.key"))}
	case t.KeystoreKey != "" && !strings.Contains(t.KeystoreKey, encryptedKeyPEM) && t.KeyPassword != "":
		return &Error{Key: ks("ssl.key.password"), Value: hiddenValue,
			Msg: fmt.Sprintf("is set but %s is not encrypted: unset it", ks("ssl.keystore.key"))}
	case t.KeystoreType == StorePKCS12 && t.KeyPassword != "" && t.KeyPassword != t.KeystorePassword:
		return &Error{Key: ks("ssl.key.password"), Value: hiddenValue,
			Msg: fmt.Sprintf("differs from %s, but a PKCS12 keystore has one password (keytool ignores -keypass for PKCS12): unset it", ks("ssl.keystore.password"))}
	case t.KeystoreType != StorePEM && t.KeystoreLocation != "" && t.KeystorePassword == "":
		return &Error{Key: ks("ssl.keystore.password"), Value: "",
			Msg: fmt.Sprintf("must be set: the %s keystore %s is read with it", t.KeystoreType, t.KeystoreLocation)}
	case t.TruststoreLocation != "" && t.TruststoreCertificates != "":
		return &Error{Key: ts("ssl.truststore.location"), Value: t.TruststoreLocation,
			Msg: fmt.Sprintf("is set together with %s; set the file or the inline PEM, not both", ts("ssl.truststore.certificates"))}
	case t.TruststoreType != StorePEM && t.TruststoreCertificates != "":
		return &Error{Key: ts("ssl.truststore.type"), Value: t.TruststoreType,
			Msg: fmt.Sprintf("reads %s; the inline %s are PEM: set %s=PEM",
				ts("ssl.truststore.location"), ts("ssl.truststore.certificates"), ts("ssl.truststore.type"))}
	case t.TruststoreType == StorePEM && t.TruststorePassword != "":
		return &Error{Key: ts("ssl.truststore.password"), Value: hiddenValue,
			Msg: fmt.Sprintf("is for a PKCS12 or JKS truststore (%s); a PEM truststore has no password: unset it", ts("ssl.truststore.type"))}
	case t.TruststoreType == StoreJKS && t.TruststoreLocation != "" && t.TruststorePassword == "":
		return &Error{Key: ts("ssl.truststore.password"), Value: "",
			Msg: fmt.Sprintf("must be set: the JKS truststore %s is checked with it (Strata does not read a JKS store unchecked; a PKCS12 truststore may have no password)",
				t.TruststoreLocation)}
	}
	return nil
}

// storeType is a store's type (upper case, as TLSConfig has it): the one
// set, else Strata's default PEM, unless the store has a password, which
// only Kafka's default type takes (a PEM store has none): then JKS, as a
// server.properties written for Kafka means it. A JKS store is read as
// PKCS12 when its file is one, as Java's JKS keystores do
// (keystore.type.compat).
func storeType(typ string, set bool, password string) string {
	if !set && password != "" {
		return StoreJKS
	}
	return strings.ToUpper(typ)
}

// isSet reports whether static config key was given (in the file, the
// environment or a flag), rather than left to its default.
func (b *Broker) isSet(key string) bool {
	_, ok := b.Raw[key]
	return ok
}

// impliedDefault is how a broker config left to its default v is
// described: ssl.keystore.type and ssl.truststore.type as the store's
// password makes them (storeType: JKS, Kafka's default), so that what is
// described is what is read.
func (b *Broker) impliedDefault(key, v string) string {
	switch key {
	case "ssl.keystore.type":
		return storeType(v, false, b.value("ssl.keystore.password"))
	case "ssl.truststore.type":
		return storeType(v, false, b.value("ssl.truststore.password"))
	}
	return v
}

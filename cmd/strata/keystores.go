package main

import (
	"bytes"
	"cmp"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"

	"github.com/strata-broker/strata/internal/config"
)

// decodeKeystore reads a PKCS12 or JKS keystore (Kafka's ssl.keystore.type):
// its one private key and that key's certificate chain, leaf first. The
// errors say what is wrong with the store, not where it is: the caller
// names the file and the key.
func decodeKeystore(typ string, data []byte, storePassword, keyPassword string) (tls.Certificate, error) {
	switch storeFormat(typ, data) {
	case config.StorePKCS12:
		key, leaf, others, err := pkcs12.DecodeChain(data, storePassword)
		if err != nil {
			return tls.Certificate{}, pkcs12Error(err)
		}
		return keyPair(key, append([]*x509.Certificate{leaf}, others...))
	case config.StoreJKS:
		ks, err := loadJKS(data, storePassword)
		if err != nil {
			return tls.Certificate{}, err
		}
		var aliases []string
		for _, a := range ks.Aliases() {
			if ks.IsPrivateKeyEntry(a) {
				aliases = append(aliases, a)
			}
		}
		switch len(aliases) {
		case 0:
			return tls.Certificate{}, errors.New("holds no private key entry")
		case 1:
		default:
			return tls.Certificate{}, fmt.Errorf("holds %d private keys (aliases %s); keep one (keytool -delete -alias)", len(aliases), strings.Join(aliases, ", "))
		}
		entry, err := ks.GetPrivateKeyEntry(aliases[0], []byte(cmp.Or(keyPassword, storePassword)))
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("private key %q cannot be recovered with ssl.key.password (or ssl.keystore.password when it is unset): %v", aliases[0], err)
		}
		key, err := x509.ParsePKCS8PrivateKey(entry.PrivateKey)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("private key %q is not a PKCS#8 key Go reads: %v", aliases[0], err)
		}
		chain := make([]*x509.Certificate, 0, len(entry.CertificateChain))
		for _, c := range entry.CertificateChain {
			cert, err := x509.ParseCertificate(c.Content)
			if err != nil {
				return tls.Certificate{}, fmt.Errorf("certificate chain of %q: %v", aliases[0], err)
			}
			chain = append(chain, cert)
		}
		return keyPair(key, chain)
	}
	return tls.Certificate{}, errNotAStore
}

// decodeTruststore reads the trusted certificates of a PKCS12 or JKS
// truststore (keytool -importcert entries).
func decodeTruststore(typ string, data []byte, password string) ([]*x509.Certificate, error) {
	switch storeFormat(typ, data) {
	case config.StorePKCS12:
		certs, err := pkcs12.DecodeTrustStore(data, password)
		if err != nil {
			if _, _, _, keyErr := pkcs12.DecodeChain(data, password); keyErr == nil {
				return nil, errors.New("holds a private key: it is a keystore; a truststore holds only trusted certificates (keytool -importcert)")
			}
			return nil, pkcs12Error(err)
		}
		if len(certs) == 0 {
			return nil, errors.New("holds no trusted certificate")
		}
		return certs, nil
	case config.StoreJKS:
		ks, err := loadJKS(data, password)
		if err != nil {
			return nil, err
		}
		var certs []*x509.Certificate
		for _, a := range ks.Aliases() {
			entry, err := ks.GetTrustedCertificateEntry(a)
			if err != nil { // a private key entry: not a trust anchor
				continue
			}
			cert, err := x509.ParseCertificate(entry.Certificate.Content)
			if err != nil {
				return nil, fmt.Errorf("trusted certificate %q: %v", a, err)
			}
			certs = append(certs, cert)
		}
		if len(certs) == 0 {
			return nil, errors.New("holds no trusted certificate entry (keytool -importcert adds one)")
		}
		return certs, nil
	}
	return nil, errNotAStore
}

// jksMagic begins every JKS store.
var jksMagic = []byte{0xfe, 0xed, 0xfe, 0xed}

// storeFormat is how a store of type typ is read: JKS and PKCS12 each
// read the other's files too, as Java's keystores do
// (keystore.type.compat), so a keytool-made store works whichever of the
// two types names it (keytool writes PKCS12 since Java 9).
// It is "" for a file that is neither.
func storeFormat(typ string, data []byte) string {
	switch {
	case typ != config.StoreJKS && typ != config.StorePKCS12:
		return typ
	case bytes.HasPrefix(data, jksMagic):
		return config.StoreJKS
	case len(data) > 0 && data[0] == 0x30: // a DER SEQUENCE: PKCS#12's PFX
		return config.StorePKCS12
	}
	return ""
}

// errNotAStore is a file of type JKS or PKCS12 that is neither.
var errNotAStore = errors.New("is neither a JKS nor a PKCS12 store (a PEM file takes type PEM)")

// loadJKS parses a JKS store and checks its integrity with password.
func loadJKS(data []byte, password string) (keystore.KeyStore, error) {
	ks := keystore.New(keystore.WithOrderedAliases())
	if err := ks.Load(bytes.NewReader(data), []byte(password)); err != nil {
		if strings.Contains(err.Error(), "invalid digest") {
			return ks, errors.New("fails its integrity check: the password is wrong, or the file is damaged")
		}
		return ks, fmt.Errorf("is not a JKS store (%v)", err)
	}
	return ks, nil
}

func pkcs12Error(err error) error {
	switch {
	case errors.Is(err, pkcs12.ErrIncorrectPassword):
		return errors.New("cannot be opened with its password: the password is wrong")
	case strings.Contains(err.Error(), "not marked as trusted"):
		return errors.New("holds a certificate not marked as trusted: make the truststore with keytool -importcert, or use PEM")
	}
	return fmt.Errorf("is not a PKCS12 store Strata reads (%v)", err)
}

// keyPair is the certificate of key: the certificate whose public key is
// key's goes first, followed by its issuers among certs, each after the
// certificate it signed; certificates outside that chain (a CA imported
// into the keystore as a trusted entry) are left out.
func keyPair(key any, certs []*x509.Certificate) (tls.Certificate, error) {
	signer, ok := key.(crypto.Signer)
	if !ok {
		return tls.Certificate{}, fmt.Errorf("private key of type %T cannot sign", key)
	}
	at := slices.IndexFunc(certs, func(c *x509.Certificate) bool {
		pub, ok := c.PublicKey.(interface{ Equal(crypto.PublicKey) bool })
		return ok && pub.Equal(signer.Public())
	})
	if at < 0 {
		return tls.Certificate{}, errors.New("holds no certificate for its private key")
	}
	leaf := certs[at]
	out := tls.Certificate{PrivateKey: key, Leaf: leaf, Certificate: [][]byte{leaf.Raw}}
	rest := slices.Delete(slices.Clone(certs), at, at+1)
	for last := leaf; !bytes.Equal(last.RawIssuer, last.RawSubject); {
		i := slices.IndexFunc(rest, func(c *x509.Certificate) bool { return last.CheckSignatureFrom(c) == nil })
		if i < 0 {
			break
		}
		last = rest[i]
		out.Certificate = append(out.Certificate, last.Raw)
		rest = slices.Delete(rest, i, i+1)
	}
	return out, nil
}

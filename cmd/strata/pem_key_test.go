package main

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/testpki"
)

// TestEncryptedPEMKeys: encrypted PKCS#8 keys, written by Go and by
// OpenSSL with each cipher and PRF Kafka's PEM keystores take, decrypt
// with ssl.key.password to the server's key; a wrong password says so.
func TestEncryptedPEMKeys(t *testing.T) {
	pki, err := testpki.New()
	if err != nil {
		t.Fatal(err)
	}
	const password = "k3y-pass"
	keys := map[string][]byte{}
	if keys["Go, AES-256, HMAC-SHA256"], err = pki.EncryptedServerKeyPEM(password); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("openssl"); err == nil {
		dir := t.TempDir()
		plain := filepath.Join(dir, "key.pem")
		if err := os.WriteFile(plain, pki.ServerKeyPEM, 0o600); err != nil {
			t.Fatal(err)
		}
		for name, args := range map[string][]string{
			"openssl, AES-256":            {"-v2", "aes-256-cbc"},
			"openssl, AES-128, HMAC-SHA1": {"-v2", "aes-128-cbc", "-v2prf", "hmacWithSHA1"},
			"openssl, 3DES, HMAC-SHA512":  {"-v2", "des3", "-v2prf", "hmacWithSHA512"},
		} {
			out, err := exec.Command("openssl", append([]string{"pkcs8", "-topk8", "-in", plain, "-passout", "pass:" + password}, args...)...).CombinedOutput()
			if err != nil {
				t.Fatalf("openssl pkcs8 %v: %v\n%s", args, err, out)
			}
			keys[name] = out
		}
	} else {
		t.Log("openssl is not installed: only the Go-written key is tried")
	}
	want := pki.Server.PrivateKey.(interface{ Equal(crypto.PrivateKey) bool })
	for name, pemKey := range keys {
		t.Run(name, func(t *testing.T) {
			cert, err := pemKeyPair(pki.ServerCertPEM, pemKey, password)
			if err != nil {
				t.Fatal(err)
			}
			if !want.Equal(cert.PrivateKey) {
				t.Fatal("decrypted another key")
			}
			if _, err := pemKeyPair(pki.ServerCertPEM, pemKey, "wrong"); !errors.Is(err, errWrongKeyPassword) && !strings.Contains(err.Error(), "password is wrong") {
				t.Fatalf("a wrong password: %v", err)
			}
		})
	}
}

// TestEncryptedPEMKeystoreServesTLS: a PEM keystore file with an encrypted
// key serves TLS with ssl.key.password; without it, or with a password for
// a key in the clear, the error says what to set.
func TestEncryptedPEMKeystoreServesTLS(t *testing.T) {
	pki, err := testpki.New()
	if err != nil {
		t.Fatal(err)
	}
	encrypted, err := pki.EncryptedServerKeyPEM("pw")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	keystore := filepath.Join(dir, "keystore.pem")
	if err := os.WriteFile(keystore, append(append([]byte{}, pki.ServerCertPEM...), encrypted...), 0o600); err != nil {
		t.Fatal(err)
	}
	clear := filepath.Join(dir, "clear.pem")
	if err := os.WriteFile(clear, append(append([]byte{}, pki.ServerCertPEM...), pki.ServerKeyPEM...), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := func(path, password string) config.TLSConfig {
		return config.TLSConfig{KeystoreType: config.StorePEM, KeystoreLocation: path, KeyPassword: password, ClientAuth: "none", Protocols: []string{"TLSv1.3"}}
	}
	server, err := tlsConfig(cfg(keystore, "pw"))
	if err != nil {
		t.Fatal(err)
	}
	chain := handshake(t, server, &tls.Config{RootCAs: pki.Pool, ServerName: "127.0.0.1"})
	if len(chain) == 0 || !bytes.Equal(chain[0].Raw, pki.Server.Certificate[0]) {
		t.Fatal("the server did not present its certificate")
	}
	for _, tt := range []struct {
		cfg  config.TLSConfig
		want string
	}{
		{cfg(keystore, ""), "the private key is encrypted: set ssl.key.password"},
		{cfg(keystore, "nope"), "password is wrong"},
		{cfg(clear, "pw"), "ssl.key.password is set but the private key is not encrypted"},
	} {
		_, err := tlsConfig(tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "ssl.keystore.location "+tt.cfg.KeystoreLocation) {
			t.Errorf("%s with password %q: %v, want %q", filepath.Base(tt.cfg.KeystoreLocation), tt.cfg.KeyPassword, err, tt.want)
		}
	}
}

package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// benchSecurity is how `strata bench` connects to a cluster that requires
// TLS or SASL: the flags --tls, --tls-ca, --tls-cert, --tls-key,
// --sasl-mechanism, --sasl-user and --sasl-password.
type benchSecurity struct {
	tls       bool
	ca        string
	cert, key string
	mechanism string
	user      string
	password  string
}

func (s *benchSecurity) register(fl *pflag.FlagSet) {
	fl.BoolVar(&s.tls, "tls", false, "connect with TLS (implied by --tls-ca and --tls-cert)")
	fl.StringVar(&s.ca, "tls-ca", "", "PEM file of the CA certificates to trust (default: the system's)")
	fl.StringVar(&s.cert, "tls-cert", "", "PEM client certificate, for brokers with ssl.client.auth (with --tls-key)")
	fl.StringVar(&s.key, "tls-key", "", "PEM private key of --tls-cert")
	fl.StringVar(&s.mechanism, "sasl-mechanism", "", "PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512; \"\" for no SASL")
	fl.StringVar(&s.user, "sasl-user", "", "SASL user name")
	fl.StringVar(&s.password, "sasl-password", "", "SASL password")
}

// validate checks the flags agree, without reading files.
func (s benchSecurity) validate() error {
	switch {
	case (s.cert == "") != (s.key == ""):
		return errors.New("--tls-cert and --tls-key go together: give both or neither")
	case s.mechanism == "" && (s.user != "" || s.password != ""):
		return errors.New("--sasl-user and --sasl-password need --sasl-mechanism (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512)")
	case s.mechanism != "" && s.user == "":
		return fmt.Errorf("--sasl-mechanism %s needs --sasl-user (and --sasl-password)", s.mechanism)
	}
	if _, err := s.saslMechanism(); err != nil {
		return err
	}
	return nil
}

// opts are the client options of the flags: a TLS dialer, a SASL
// mechanism, both or neither. Each error names the flag to fix.
func (s benchSecurity) opts() ([]kgo.Opt, error) {
	var out []kgo.Opt
	if s.tls || s.ca != "" || s.cert != "" {
		cfg, err := s.tlsConfig()
		if err != nil {
			return nil, err
		}
		dialer := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 10 * time.Second}, Config: cfg}
		out = append(out, kgo.Dialer(dialer.DialContext))
	}
	m, err := s.saslMechanism()
	if err != nil {
		return nil, err
	}
	if m != nil {
		out = append(out, kgo.SASL(m))
	}
	return out, nil
}

func (s benchSecurity) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if s.ca != "" {
		pem, err := os.ReadFile(s.ca)
		if err != nil {
			return nil, fmt.Errorf("--tls-ca %s: %v", s.ca, unwrapPath(err))
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca %s holds no PEM certificate", s.ca)
		}
	}
	if s.cert != "" {
		pair, err := tls.LoadX509KeyPair(s.cert, s.key)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert %s / --tls-key %s: %v", s.cert, s.key, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

func (s benchSecurity) saslMechanism() (sasl.Mechanism, error) {
	switch s.mechanism {
	case "":
		return nil, nil
	case "PLAIN":
		return plain.Auth{User: s.user, Pass: s.password}.AsMechanism(), nil
	case "SCRAM-SHA-256":
		return scram.Auth{User: s.user, Pass: s.password}.AsSha256Mechanism(), nil
	case "SCRAM-SHA-512":
		return scram.Auth{User: s.user, Pass: s.password}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("--sasl-mechanism %q: use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", s.mechanism)
}

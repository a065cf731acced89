// Command scramuser sets SCRAM-SHA-256 and SCRAM-SHA-512 credentials of one
// user through a broker's AlterUserScramCredentials, as kafka-configs
// --alter --add-config 'SCRAM-SHA-256=[password=...]' does. test/compat
// uses it to give a client library's suite the users it expects.
//
//	scramuser -bootstrap 127.0.0.1:9092 -user adminscram -sha256 pw256 -sha512 pw512
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	bootstrap := flag.String("bootstrap", "127.0.0.1:9092", "a PLAINTEXT listener of the broker")
	user := flag.String("user", "", "the user whose credentials to set (required)")
	sha256 := flag.String("sha256", "", "the SCRAM-SHA-256 password; empty: not set")
	sha512 := flag.String("sha512", "", "the SCRAM-SHA-512 password; empty: not set")
	flag.Parse()
	if err := run(*bootstrap, *user, *sha256, *sha512); err != nil {
		fmt.Fprintln(os.Stderr, "scramuser:", err)
		os.Exit(1)
	}
}

func run(bootstrap, user, sha256, sha512 string) error {
	if user == "" || (sha256 == "" && sha512 == "") {
		return fmt.Errorf("-user and at least one of -sha256 and -sha512 are required")
	}
	var upserts []kadm.UpsertSCRAM
	for mechanism, password := range map[kadm.ScramMechanism]string{kadm.ScramSha256: sha256, kadm.ScramSha512: sha512} {
		if password != "" {
			upserts = append(upserts, kadm.UpsertSCRAM{User: user, Mechanism: mechanism, Iterations: 8192, Password: password})
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	results, err := kadm.NewClient(cl).AlterUserSCRAMs(ctx, nil, upserts)
	if err != nil {
		return fmt.Errorf("AlterUserScramCredentials at %s: %w", bootstrap, err)
	}
	for name, r := range results {
		if r.Err != nil {
			return fmt.Errorf("user %s: %w", name, r.Err)
		}
	}
	return nil
}

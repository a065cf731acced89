// Command admin does, through a broker's admin APIs, what a client
// library's suite does to its Kafka cluster with Kafka's own tools;
// test/compat/run.sh and test/compat/docker run it.
//
//	admin -bootstrap 127.0.0.1:9092 scram-user USER SHA256_PASSWORD SHA512_PASSWORD
//	    sets both SCRAM credentials of USER (AlterUserScramCredentials), as
//	    kafka-configs --alter --add-config 'SCRAM-SHA-256=[password=...]' does;
//	    an empty password leaves that mechanism unset
//	admin -bootstrap 127.0.0.1:9092 partitions TOPIC COUNT
//	    grows TOPIC to COUNT partitions (CreatePartitions), as kafka-topics
//	    --alter --topic TOPIC --partitions COUNT does
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	bootstrap := flag.String("bootstrap", "127.0.0.1:9092", "a PLAINTEXT listener of the broker")
	flag.Parse()
	if err := run(*bootstrap, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "admin:", err)
		os.Exit(1)
	}
}

func run(bootstrap string, args []string) error {
	var do func(context.Context, *kadm.Client) error
	switch {
	case len(args) == 4 && args[0] == "scram-user":
		do = func(ctx context.Context, adm *kadm.Client) error {
			return setSCRAM(ctx, adm, args[1], args[2], args[3])
		}
	case len(args) == 3 && args[0] == "partitions":
		count, err := strconv.Atoi(args[2])
		if err != nil || count <= 0 {
			return fmt.Errorf("partitions %s %s: the count must be a positive number", args[1], args[2])
		}
		do = func(ctx context.Context, adm *kadm.Client) error { return growTopic(ctx, adm, args[1], count) }
	default:
		return fmt.Errorf("want 'scram-user USER SHA256_PASSWORD SHA512_PASSWORD' or 'partitions TOPIC COUNT', not %q", args)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := do(ctx, kadm.NewClient(cl)); err != nil {
		return fmt.Errorf("at %s: %w", bootstrap, err)
	}
	return nil
}

// setSCRAM sets user's credentials for each mechanism given a password.
func setSCRAM(ctx context.Context, adm *kadm.Client, user, sha256, sha512 string) error {
	if user == "" || (sha256 == "" && sha512 == "") {
		return fmt.Errorf("scram-user needs a user and at least one password")
	}
	var upserts []kadm.UpsertSCRAM
	for mechanism, password := range map[kadm.ScramMechanism]string{kadm.ScramSha256: sha256, kadm.ScramSha512: sha512} {
		if password != "" {
			upserts = append(upserts, kadm.UpsertSCRAM{User: user, Mechanism: mechanism, Iterations: 8192, Password: password})
		}
	}
	results, err := adm.AlterUserSCRAMs(ctx, nil, upserts)
	if err != nil {
		return fmt.Errorf("AlterUserScramCredentials: %w", err)
	}
	for name, r := range results {
		if r.Err != nil {
			return fmt.Errorf("user %s: %w", name, r.Err)
		}
	}
	return nil
}

// growTopic sets topic's partition count to count.
func growTopic(ctx context.Context, adm *kadm.Client, topic string, count int) error {
	results, err := adm.UpdatePartitions(ctx, count, topic)
	if err != nil {
		return fmt.Errorf("CreatePartitions: %w", err)
	}
	for name, r := range results {
		if r.Err != nil {
			return fmt.Errorf("topic %s: %w", name, r.Err)
		}
	}
	return nil
}

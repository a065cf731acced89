// Command kfakeserver runs franz-go's fake Kafka cluster (kfake) as a
// one-broker server on a loopback port, as a baseline for bench/compare.sh.
// It prints "kfakeserver: listening on HOST:PORT" once it accepts
// connections and shuts down cleanly (persisting its state when --dir is
// set) on SIGINT or SIGTERM.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "kfakeserver:", err)
		os.Exit(1)
	}
}

func run() error {
	port := flag.Int("port", 9092, "loopback port to listen on (0 = any free port)")
	dir := flag.String("dir", "", "data directory; empty keeps everything in memory")
	sync := flag.Bool("sync", false, "fsync every produced batch (needs --dir)")
	partitions := flag.Int("partitions", 6, "partitions of topics created with the default count or auto-created")
	flag.Parse()
	switch {
	case flag.NArg() > 0:
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	case *port < 0 || *port > 65535:
		return fmt.Errorf("--port %d: use 0..65535", *port)
	case *partitions < 1:
		return fmt.Errorf("--partitions %d: use 1 or more", *partitions)
	case *sync && *dir == "":
		return errors.New("--sync writes to disk: give --dir too")
	}

	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.Ports(*port),
		kfake.DefaultNumPartitions(*partitions),
		kfake.AllowAutoTopicCreation(),
	}
	if *dir != "" {
		opts = append(opts, kfake.DataDir(*dir))
	}
	if *sync {
		opts = append(opts, kfake.SyncWrites())
	}
	// Catch signals before listening so that a stop sent right after the
	// ready line still shuts down cleanly.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)

	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return err
	}
	fmt.Printf("kfakeserver: listening on %s, data in %s, sync %v\n", c.ListenAddrs()[0], dataDesc(*dir), *sync)
	<-sigs
	c.Close()
	return nil
}

func dataDesc(dir string) string {
	if dir == "" {
		return "memory"
	}
	return dir
}

// Command disklatency measures the floor that a disk sets under durable
// produce latency: one small write followed by fdatasync, into blocks
// already written (what Strata's zero-filled active segment gives an
// append), timed from the write to the sync's return. bench/compare.sh
// runs it on the data dir's file system before its rounds, so that every
// comparison says what its machine's disk could do.
//
// It runs at three paces, because a virtual disk's latency depends on how
// long it sat idle before each write, not only on the write: back to back,
// and with 100 µs and 1 ms between syncs (one append per sync at 10,000
// and 1,000 records/s). It prints one JSON line:
//
//	{"write_bytes":1024,"back_to_back_ms":{"p50":..,"p99":..},"gap_100us_ms":{..},"gap_1ms_ms":{..}}
//
//	disklatency --dir DIR [--syncs 1000] [--write-bytes 1024]
//
// It writes one file in DIR, of --syncs × --write-bytes plus 1 MiB, and
// removes it. Bounded: each pace stops after --syncs syncs or 20 s.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/strata-broker/strata/bench/internal/diskfile"
	"github.com/strata-broker/strata/internal/vfs"
)

// paceLimit bounds one pace, whatever the disk does.
const paceLimit = 20 * time.Second

type quantiles struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
}

type report struct {
	WriteBytes  int       `json:"write_bytes"`
	BackToBack  quantiles `json:"back_to_back_ms"`
	Gap100us    quantiles `json:"gap_100us_ms"`
	Gap1ms      quantiles `json:"gap_1ms_ms"`
	SyncsPerRun int       `json:"syncs"`
}

func main() {
	dir := flag.String("dir", "", "directory on the file system to measure (required)")
	syncs := flag.Int("syncs", 1000, "syncs per pace")
	writeBytes := flag.Int("write-bytes", 1024, "bytes written before each sync")
	flag.Parse()
	if err := run(*dir, *syncs, *writeBytes); err != nil {
		fmt.Fprintln(os.Stderr, "disklatency:", err)
		os.Exit(1)
	}
}

func run(dir string, syncs, writeBytes int) error {
	switch {
	case dir == "":
		return errors.New("--dir is required: the directory whose file system to measure")
	case syncs < 10 || syncs > 100_000:
		return fmt.Errorf("--syncs %d: use 10 to 100000", syncs)
	case writeBytes < 1 || writeBytes > 1<<20:
		return fmt.Errorf("--write-bytes %d: use 1 to 1048576", writeBytes)
	}
	name := filepath.Join(dir, "disklatency-"+strconv.Itoa(os.Getpid()))
	f, err := vfs.OS().OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("cannot create a file in %s: %w", dir, err)
	}
	defer os.Remove(name)
	defer f.Close()
	rep := report{WriteBytes: writeBytes, SyncsPerRun: syncs}
	for _, p := range []struct {
		gap time.Duration
		out *quantiles
	}{{0, &rep.BackToBack}, {100 * time.Microsecond, &rep.Gap100us}, {time.Millisecond, &rep.Gap1ms}} {
		if err := diskfile.ZeroFill(f, int64(syncs*writeBytes)+1<<20); err != nil {
			return err
		}
		lat, err := pace(f, syncs, writeBytes, p.gap)
		if err != nil {
			return err
		}
		*p.out = summarize(lat)
	}
	return json.NewEncoder(os.Stdout).Encode(rep)
}

// pace times syncs writes of writeBytes, each followed by fdatasync, with
// gap between one sync's return and the next write.
func pace(f vfs.File, syncs, writeBytes int, gap time.Duration) ([]time.Duration, error) {
	buf := make([]byte, writeBytes)
	for i := range buf {
		buf[i] = byte(i)
	}
	lat := make([]time.Duration, 0, syncs)
	stop := time.Now().Add(paceLimit)
	for i := 0; i < syncs && time.Now().Before(stop); i++ {
		start := time.Now()
		if _, err := f.WriteAt(buf, int64(i*writeBytes)); err != nil {
			return nil, err
		}
		if err := f.Datasync(); err != nil {
			return nil, err
		}
		lat = append(lat, time.Since(start))
		if gap > 0 {
			time.Sleep(gap)
		}
	}
	return lat, nil
}

func summarize(lat []time.Duration) quantiles {
	slices.Sort(lat)
	at := func(q float64) float64 {
		return float64(lat[int(q*float64(len(lat)-1))]) / float64(time.Millisecond)
	}
	return quantiles{P50: at(0.50), P99: at(0.99)}
}

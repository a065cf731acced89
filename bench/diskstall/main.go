// Command diskstall measures what a disk does to durable produce at a
// sustained rate: several files (a broker's partitions) appended at once,
// each write followed by fdatasync, at a fixed total rate. It reports the
// fdatasync latency and the stalls: moments when syncs took at least
// --stall-ms, grouped into episodes (syncs that stalled within 2 ms of each
// other are one episode), with the median time between episodes. A disk
// that pauses every N ms shows it as a steady episode period.
//
// With --busy N, N goroutines keep the CPU busy while it measures, and
// each mode reports the steal time the kernel counted meanwhile (steal_ms,
// -1 where /proc/stat has none): on a virtual machine whose host runs the
// disk's emulation on the guest's CPU budget, syncs stall when the guest's
// CPUs are busy, which a probe on an idle guest does not show.
//
// It runs twice: appending past each file's size into blocks reserved
// with fallocate KEEP_SIZE (every sync also writes the inode and the
// extent tree, what a log does without zero-fill), and overwriting blocks
// already written and synced inside the file's size (every sync writes
// data only, what a zero-filled active segment gives). It prints one JSON
// line:
//
//	{"files":6,"rate_mb_s":100,"write_bytes":16384,"append":{...},"overwrite":{...}}
//
//	diskstall --dir DIR [--files 6] [--rate-mb-s 100] [--write-bytes 16384] [--seconds 5] [--stall-ms 5] [--busy 0]
//
// It writes --files files in DIR of the rate's share times --seconds plus
// 1 MiB each, and removes them. Bounded: each mode stops after --seconds.
package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/strata-broker/strata/bench/internal/diskfile"
	"github.com/strata-broker/strata/internal/vfs"
)

// stall is one fdatasync of at least the stall threshold.
type stall struct {
	at  time.Duration // when the sync started, from the start of the mode
	dur time.Duration
}

// episode is stalls that overlap or start within episodeGap of each other.
type episode struct {
	at  time.Duration
	end time.Duration
}

// episodeGap joins stalls into one episode: syncs of several files caught
// by one pause of the disk start within a moment of each other.
const episodeGap = 2 * time.Millisecond

type modeReport struct {
	Syncs           int     `json:"syncs"`
	P50ms           float64 `json:"p50_ms"`
	P99ms           float64 `json:"p99_ms"`
	P999ms          float64 `json:"p999_ms"`
	MaxMs           float64 `json:"max_ms"`
	Stalls          int     `json:"stalls"`
	Episodes        int     `json:"episodes"`
	EpisodePeriodMs float64 `json:"episode_period_ms"` // median between episode starts; 0 with fewer than 2
	StalledShare    float64 `json:"stalled_share"`     // share of the run inside an episode
	StealMs         int64   `json:"steal_ms"`          // CPU time the host took from this machine meanwhile; -1 unknown
}

type report struct {
	Files      int        `json:"files"`
	RateMBs    int        `json:"rate_mb_s"`
	WriteBytes int        `json:"write_bytes"`
	Seconds    int        `json:"seconds"`
	StallMs    int        `json:"stall_ms"`
	Busy       int        `json:"busy"`
	Append     modeReport `json:"append"`
	Overwrite  modeReport `json:"overwrite"`
}

type params struct {
	dir        string
	files      int
	rateMBs    int
	writeBytes int
	seconds    int
	stallMs    int
	busy       int
}

func main() {
	var p params
	flag.StringVar(&p.dir, "dir", "", "directory on the file system to measure (required)")
	flag.IntVar(&p.files, "files", 6, "files appended at once")
	flag.IntVar(&p.rateMBs, "rate-mb-s", 100, "total bytes written per second, in MB (10^6)")
	flag.IntVar(&p.writeBytes, "write-bytes", 16<<10, "bytes written before each sync")
	flag.IntVar(&p.seconds, "seconds", 5, "length of each mode")
	flag.IntVar(&p.stallMs, "stall-ms", 5, "a sync at least this long is a stall")
	flag.IntVar(&p.busy, "busy", 0, "goroutines kept busy on the CPU while measuring")
	flag.Parse()
	if err := run(p); err != nil {
		fmt.Fprintln(os.Stderr, "diskstall:", err)
		os.Exit(1)
	}
}

func (p params) check() error {
	switch {
	case p.dir == "":
		return errors.New("--dir is required: the directory whose file system to measure")
	case p.files < 1 || p.files > 64:
		return fmt.Errorf("--files %d: use 1 to 64", p.files)
	case p.rateMBs < 1 || p.rateMBs > 2000:
		return fmt.Errorf("--rate-mb-s %d: use 1 to 2000", p.rateMBs)
	case p.writeBytes < 512 || p.writeBytes > 4<<20:
		return fmt.Errorf("--write-bytes %d: use 512 to 4194304", p.writeBytes)
	case p.seconds < 1 || p.seconds > 60:
		return fmt.Errorf("--seconds %d: use 1 to 60", p.seconds)
	case p.stallMs < 1:
		return fmt.Errorf("--stall-ms %d: use 1 or more", p.stallMs)
	case p.busy < 0 || p.busy > 8:
		return fmt.Errorf("--busy %d: use 0 to 8", p.busy)
	}
	return nil
}

func run(p params) error {
	if err := p.check(); err != nil {
		return err
	}
	rep := report{Files: p.files, RateMBs: p.rateMBs, WriteBytes: p.writeBytes, Seconds: p.seconds, StallMs: p.stallMs, Busy: p.busy}
	for _, m := range []struct {
		overwrite bool
		out       *modeReport
	}{{false, &rep.Append}, {true, &rep.Overwrite}} {
		lat, stalls, stealMs, err := runMode(p, m.overwrite)
		if err != nil {
			return err
		}
		*m.out = summarize(lat, stalls, time.Duration(p.seconds)*time.Second)
		m.out.StealMs = stealMs
	}
	return json.NewEncoder(os.Stdout).Encode(rep)
}

// runMode appends to p.files files at once for p.seconds and returns every
// sync's latency, the stalls among them and the steal time meanwhile (ms;
// -1 unknown), with p.busy goroutines spinning while it runs.
func runMode(p params, overwrite bool) ([]time.Duration, []stall, int64, error) {
	perFile := float64(p.rateMBs) * 1e6 / float64(p.files)
	interval := time.Duration(float64(time.Second) * float64(p.writeBytes) / perFile)
	size := int64(perFile*float64(p.seconds)) + 1<<20
	threshold := time.Duration(p.stallMs) * time.Millisecond
	files := make([]vfs.File, p.files)
	for i := range files {
		name := filepath.Join(p.dir, "diskstall-"+strconv.Itoa(os.Getpid())+"-"+strconv.Itoa(i))
		f, err := prepare(name, size, overwrite)
		if err != nil {
			return nil, nil, 0, err
		}
		defer os.Remove(name)
		defer f.Close()
		files[i] = f
	}
	var (
		mu     sync.Mutex
		lat    []time.Duration
		stalls []stall
		first  error
		wg     sync.WaitGroup
	)
	stealBefore, stealKnown := stealTicks()
	stopSpinning := spin(p.busy)
	start := time.Now()
	stop := start.Add(time.Duration(p.seconds) * time.Second)
	for _, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own, ownStalls, err := appendAtRate(f, p.writeBytes, interval, start, stop, threshold)
			mu.Lock()
			defer mu.Unlock()
			lat = append(lat, own...)
			stalls = append(stalls, ownStalls...)
			if err != nil && first == nil {
				first = err
			}
		}()
	}
	wg.Wait()
	stopSpinning()
	stealAfter, stillKnown := stealTicks()
	stealMs := int64(-1)
	if stealKnown && stillKnown {
		stealMs = (stealAfter - stealBefore) * 1000 / userHz
	}
	return lat, stalls, stealMs, first
}

// prepare creates the file name: with overwrite, size bytes of zeros
// written and synced; else empty, with size bytes reserved past its end.
func prepare(name string, size int64, overwrite bool) (vfs.File, error) {
	f, err := vfs.OS().OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot create %s: %w", name, err)
	}
	if !overwrite {
		_ = vfs.Preallocate(f, 0, size) // a hint; without it appends allocate as they go
		return f, nil
	}
	if err := diskfile.ZeroFill(f, size); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return f, nil
}

// appendAtRate writes writeBytes at the file's next offset and fdatasyncs
// it, one write per interval (or back to back while behind), until stop.
func appendAtRate(f vfs.File, writeBytes int, interval time.Duration, start, stop time.Time, threshold time.Duration) ([]time.Duration, []stall, error) {
	buf := make([]byte, writeBytes)
	for i := range buf {
		buf[i] = byte(i)
	}
	var lat []time.Duration
	var stalls []stall
	next := start
	for off := int64(0); time.Now().Before(stop); off += int64(writeBytes) {
		if _, err := f.WriteAt(buf, off); err != nil {
			return lat, stalls, err
		}
		t0 := time.Now()
		if err := f.Datasync(); err != nil {
			return lat, stalls, err
		}
		d := time.Since(t0)
		lat = append(lat, d)
		if d >= threshold {
			stalls = append(stalls, stall{at: t0.Sub(start), dur: d})
		}
		next = next.Add(interval)
		if wait := time.Until(next); wait > 0 {
			time.Sleep(wait)
		}
	}
	return lat, stalls, nil
}

func summarize(lat []time.Duration, stalls []stall, length time.Duration) modeReport {
	r := modeReport{Syncs: len(lat), Stalls: len(stalls)}
	if len(lat) == 0 {
		return r
	}
	slices.Sort(lat)
	at := func(q float64) float64 { return ms(lat[int(q*float64(len(lat)-1))]) }
	r.P50ms, r.P99ms, r.P999ms, r.MaxMs = at(0.50), at(0.99), at(0.999), ms(lat[len(lat)-1])
	eps := episodes(stalls)
	r.Episodes = len(eps)
	r.EpisodePeriodMs = ms(medianPeriod(eps))
	var stalled time.Duration
	for _, e := range eps {
		stalled += e.end - e.at
	}
	r.StalledShare = float64(stalled) / float64(length)
	return r
}

// episodes groups stalls that overlap or start within episodeGap of the
// end of the one before, in time order.
func episodes(stalls []stall) []episode {
	sorted := slices.Clone(stalls)
	slices.SortFunc(sorted, func(a, b stall) int { return cmp.Compare(a.at, b.at) })
	var eps []episode
	for _, s := range sorted {
		end := s.at + s.dur
		if n := len(eps); n > 0 && s.at <= eps[n-1].end+episodeGap {
			eps[n-1].end = max(eps[n-1].end, end)
			continue
		}
		eps = append(eps, episode{at: s.at, end: end})
	}
	return eps
}

// medianPeriod is the median time between the starts of consecutive
// episodes; 0 with fewer than two.
func medianPeriod(eps []episode) time.Duration {
	if len(eps) < 2 {
		return 0
	}
	gaps := make([]time.Duration, 0, len(eps)-1)
	for i := 1; i < len(eps); i++ {
		gaps = append(gaps, eps[i].at-eps[i-1].at)
	}
	slices.Sort(gaps)
	return gaps[len(gaps)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

package main

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// spin keeps n goroutines busy on the CPU until the returned stop is
// called (--busy): on a virtual machine whose host runs the disk's
// emulation on the same CPU budget as the guest, syncs stall when the
// guest's CPUs are busy too, which a probe on an idle guest never shows.
func spin(n int) (stop func()) {
	var done atomic.Bool
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for x := uint64(1); !done.Load(); x = x*6364136223846793005 + 1 {
			}
		}()
	}
	return func() {
		done.Store(true)
		wg.Wait()
	}
}

// userHz is the unit of /proc/stat's CPU times on Linux (USER_HZ).
const userHz = 100

// stealTicks reads the time the host ran something else while this
// machine's CPUs wanted to run (the "cpu" line's 8th value of /proc/stat,
// in 1/userHz s); ok is false where there is no such file or value.
func stealTicks() (ticks int64, ok bool) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil {
		return 0, false
	}
	return parseSteal(line)
}

// parseSteal takes the steal time out of /proc/stat's first line:
// "cpu user nice system idle iowait irq softirq steal ...".
func parseSteal(line string) (ticks int64, ok bool) {
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, false
	}
	v, err := strconv.ParseInt(f[8], 10, 64)
	if err != nil || v < 0 {
		return 0, false
	}
	return v, true
}

//go:build race

package record

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// allocation counts that rely on pools mean nothing.
const raceEnabled = true

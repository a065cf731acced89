package partition

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/vfs"
)

const logStartFile = "log-start-offset"

// cleanerCheckpointFile holds the first dirty offset of a compacted
// partition: everything below it was cleaned by the last pass (Kafka keeps
// one cleaner-offset-checkpoint per log directory; one per partition keeps
// a partition's files in its own directory). Missing means nothing was
// cleaned, and the next pass starts at the log start.
const cleanerCheckpointFile = "cleaner-offset-checkpoint"

func readLogStart(dir string) (base.Offset, error) {
	o, _, err := readOffsetFile(dir, logStartFile)
	return o, err
}

func writeLogStart(dir string, o base.Offset) error { return writeOffsetFile(dir, logStartFile, o) }

// cleanerCheckpoint is what a cleaning pass leaves for the next: the first
// dirty offset, and the earliest delete horizon of a tombstone it kept.
type cleanerCheckpoint struct {
	FirstDirty     base.Offset
	NextHorizonMs  int64
	HasNextHorizon bool
}

// readCleanerCheckpoint reads "firstDirty [nextHorizonMs]"; ok is false
// when the file is missing.
func readCleanerCheckpoint(dir string) (c cleanerCheckpoint, ok bool, err error) {
	fields, ok, err := readNumbersFile(dir, cleanerCheckpointFile, 1, 2)
	if !ok || err != nil {
		return c, false, err
	}
	c.FirstDirty = base.Offset(fields[0])
	if len(fields) == 2 {
		c.NextHorizonMs, c.HasNextHorizon = fields[1], true
	}
	return c, true, nil
}

func writeCleanerCheckpoint(dir string, c cleanerCheckpoint) error {
	s := strconv.FormatInt(int64(c.FirstDirty), 10)
	if c.HasNextHorizon {
		s += " " + strconv.FormatInt(c.NextHorizonMs, 10)
	}
	return vfs.WriteFileAtomic(dir, cleanerCheckpointFile, []byte(s+"\n"))
}

// readOffsetFile reads a file holding one offset in decimal; ok is false
// when there is none.
func readOffsetFile(dir, name string) (o base.Offset, ok bool, err error) {
	fields, ok, err := readNumbersFile(dir, name, 1, 1)
	if !ok || err != nil {
		return 0, false, err
	}
	return base.Offset(fields[0]), true, nil
}

// readNumbersFile reads a file of minFields to maxFields space-separated
// non-negative decimal numbers; ok is false when the file is missing.
func readNumbersFile(dir, name string, minFields, maxFields int) ([]int64, bool, error) {
	data, err := os.ReadFile(filepath.Join(dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	fields := strings.Fields(string(data))
	if len(fields) < minFields || len(fields) > maxFields {
		return nil, false, fmt.Errorf("%s in %s is corrupt: %q", name, dir, data)
	}
	out := make([]int64, len(fields))
	for i, f := range fields {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil || v < 0 {
			return nil, false, fmt.Errorf("%s in %s is corrupt: %q", name, dir, data)
		}
		out[i] = v
	}
	return out, true, nil
}

// writeOffsetFile replaces a file holding one offset, crash-safely.
func writeOffsetFile(dir, name string, o base.Offset) error {
	return vfs.WriteFileAtomic(dir, name, []byte(strconv.FormatInt(int64(o), 10)+"\n"))
}

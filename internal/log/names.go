package log

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/strata-broker/strata/internal/base"
)

const (
	logSuffix       = ".log"
	indexSuffix     = ".index"
	timeIndexSuffix = ".timeindex"

	deletedSuffix = ".deleted"
	tmpSuffix     = ".tmp"
	cleanedSuffix = ".cleaned" // a Replacement being written
	swapSuffix    = ".swap"    // a Replacement being swapped in (replace.go)

	cleanShutdownName = ".clean-shutdown"
	recoveryPointName = "recovery-point"

	baseOffsetDigits = 20
)

// segmentSuffixes are the files of one segment, .log first.
var segmentSuffixes = [...]string{logSuffix, indexSuffix, timeIndexSuffix}

// segmentPath names a segment file: the 20-digit zero-padded base offset plus suffix.
func segmentPath(dir string, b base.Offset, suffix string) string {
	return filepath.Join(dir, fmt.Sprintf("%020d%s", int64(b), suffix))
}

// parseSegmentName splits "00000000000000000042.log" into (42, ".log").
func parseSegmentName(name string) (base.Offset, string, bool) {
	if len(name) <= baseOffsetDigits {
		return 0, "", false
	}
	digits, suffix := name[:baseOffsetDigits], name[baseOffsetDigits:]
	switch suffix {
	case logSuffix, indexSuffix, timeIndexSuffix:
	default:
		return 0, "", false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n < 0 {
		return 0, "", false
	}
	return base.Offset(n), suffix, true
}

// isLeftover reports whether name is debris of an interrupted operation that
// Open removes. A .swap is debris only once finishSwaps has run: a
// <base>.log.swap is an interrupted swap that Open completes.
func isLeftover(name string) bool {
	return strings.HasSuffix(name, deletedSuffix) ||
		strings.HasSuffix(name, tmpSuffix) ||
		strings.HasSuffix(name, cleanedSuffix) ||
		strings.HasSuffix(name, swapSuffix)
}

// parseSwapName splits "00000000000000000042.log.swap" into 42.
func parseSwapName(name string) (base.Offset, bool) {
	stem, ok := strings.CutSuffix(name, swapSuffix)
	if !ok {
		return 0, false
	}
	b, suffix, ok := parseSegmentName(stem)
	return b, ok && suffix == logSuffix
}

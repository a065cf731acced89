package log

import (
	"path/filepath"
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
)

// segmentSuffixes are the files of one segment, .log first.
var segmentSuffixes = [...]string{logSuffix, indexSuffix, timeIndexSuffix}

// segmentPath names a segment file: the 20-digit zero-padded base offset plus suffix.
func segmentPath(dir string, b base.Offset, suffix string) string {
	return filepath.Join(dir, base.OffsetName(b)+suffix)
}

// parseSegmentName splits "00000000000000000042.log" into (42, ".log").
func parseSegmentName(name string) (base.Offset, string, bool) {
	if len(name) <= base.OffsetNameDigits {
		return 0, "", false
	}
	digits, suffix := name[:base.OffsetNameDigits], name[base.OffsetNameDigits:]
	switch suffix {
	case logSuffix, indexSuffix, timeIndexSuffix:
	default:
		return 0, "", false
	}
	n, ok := base.ParseOffsetName(digits)
	if !ok {
		return 0, "", false
	}
	return n, suffix, true
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

package log

import (
	"github.com/strata-broker/strata/internal/record"
)

// batchCRCValid reports whether b, exactly one whole batch, carries the
// CRC-32C of its bytes from the attributes field to the end.
func batchCRCValid(b []byte) bool {
	if len(b) < record.HeaderSize {
		return false
	}
	h, err := record.ParseHeader(b)
	return err == nil && record.ComputeCRC(b) == h.CRC
}

package partition

import (
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

func TestRestartHighWatermark(t *testing.T) {
	for _, tc := range []struct {
		name                            string
		cp                              CheckpointedOffset
		logStart, localStart, end, want base.Offset
	}{
		{"no checkpoint: the log end", CheckpointedOffset{}, 0, 0, 100, 100},
		{"checkpoint inside the log", CheckpointedOffset{Offset: 60, Set: true}, 0, 0, 100, 60},
		{"checkpoint at the log end", CheckpointedOffset{Offset: 100, Set: true}, 0, 0, 100, 100},
		{"checkpoint past a log that lost its unsynced tail", CheckpointedOffset{Offset: 120, Set: true}, 0, 0, 100, 100},
		{"checkpoint below the log start", CheckpointedOffset{Offset: 10, Set: true}, 40, 40, 100, 40},
		{"checkpoint below the local log start of a tiered log", CheckpointedOffset{Offset: 30, Set: true}, 0, 50, 100, 50},
		{"checkpoint below a log start inside the first local segment", CheckpointedOffset{Offset: 10, Set: true}, 45, 40, 100, 45},
		{"checkpoint of zero on an empty log", CheckpointedOffset{Offset: 0, Set: true}, 0, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := restartHighWatermark(tc.cp, tc.logStart, tc.localStart, tc.end); got != tc.want {
				t.Errorf("restartHighWatermark(%+v, %d, %d, %d) = %d, want %d", tc.cp, tc.logStart, tc.localStart, tc.end, got, tc.want)
			}
		})
	}
}

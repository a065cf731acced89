package metrics

import (
	"maps"
	"testing"
)

func TestCleanerCollector(t *testing.T) {
	v := CleanerValues{MaxDirtyPercent: 42, Uncleanable: 1, Passes: 3, BytesRead: 1000, BytesWritten: 250}
	c := NewCleanerCollector(func() CleanerValues { return v })
	want := map[string]float64{
		"strata_log_cleaner_max_dirty_percent{}":      42,
		"strata_log_cleaner_uncleanable_partitions{}": 1,
		"strata_log_cleaner_passes_total{}":           3,
		"strata_log_cleaner_read_bytes_total{}":       1000,
		"strata_log_cleaner_written_bytes_total{}":    250,
	}
	if got := samples(t, c); !maps.Equal(got, want) {
		t.Fatalf("before a pass: samples %v, want %v", got, want)
	}
	v.HasRun, v.SinceLastRunSeconds, v.RecopyPercent, v.LastCleanSeconds = true, 1.5, 25, 0.5
	want["strata_log_cleaner_time_since_last_run_seconds{}"] = 1.5
	want["strata_log_cleaner_recopy_percent{}"] = 25
	want["strata_log_cleaner_last_clean_time_seconds{}"] = 0.5
	if got := samples(t, c); !maps.Equal(got, want) {
		t.Fatalf("after a pass: samples %v, want %v", got, want)
	}
	lint(t, c)
}

package api

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// readmeAPIRow matches a row of the README's table of supported APIs: the
// name and key, or keys "(a–b)", then the versions.
var readmeAPIRow = regexp.MustCompile(`^\| [^|]*\((\d+)(?:–(\d+))?\) \| ([^|]*) \|`)

// Every API that ApiVersions can advertise is in the README's table, and a
// row of one API gives the version range registered here: the table is
// what users read to know what Strata serves.
func TestReadmeListsEveryRegisteredAPI(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	versions := map[int16]string{} // key → versions column of its own row
	listed := map[int16]bool{}
	for line := range strings.Lines(string(data)) {
		m := readmeAPIRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		first, _ := strconv.Atoi(m[1])
		last := first
		if m[2] != "" {
			last, _ = strconv.Atoi(m[2])
		} else {
			versions[int16(first)] = strings.TrimSpace(m[3])
		}
		for k := first; k <= last; k++ {
			listed[int16(k)] = true
		}
	}
	if len(versions) < len(registry)/2 {
		t.Fatalf("found %d one-API rows in the README for %d registered APIs: has the table's layout changed?", len(versions), len(registry))
	}
	for key, r := range registry {
		if !listed[key] {
			t.Errorf("API key %d (versions %d-%d) is not in the README's table", key, r.min, r.max)
			continue
		}
		got, own := versions[key]
		if !own {
			continue // a row of several APIs
		}
		want := strconv.Itoa(int(r.min))
		if r.max != r.min {
			want += "–" + strconv.Itoa(int(r.max))
		}
		if got != want {
			t.Errorf("API key %d: the README says versions %q, registered %q", key, got, want)
		}
	}
}

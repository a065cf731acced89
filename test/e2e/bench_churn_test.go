package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestBenchE2EWithTopicChurn: `strata bench --mode e2e --churn-partitions`
// creates and deletes topics while it measures, reports how many, and
// leaves none behind.
func TestBenchE2EWithTopicChurn(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	out, code := runCLI(t, "bench", "--bootstrap", b.Addr, "--mode", "e2e", "--topic", "bench-churned",
		"--partitions", "2", "--rate", "2000", "--duration", "3s", "--warmup", "0s",
		"--churn-partitions", "4", "--json")
	if code != 0 {
		t.Fatalf("strata bench with churn: exit %d\n%s", code, out)
	}
	var rep struct {
		E2E struct {
			Records         int64 `json:"records"`
			ChurnPartitions int32 `json:"churn_partitions"`
			ChurnCycles     int64 `json:"churn_cycles"`
		} `json:"e2e"`
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rep); err != nil {
		t.Fatalf("bench's last line is not its report: %v\n%s", err, out)
	}
	if rep.E2E.Records == 0 || rep.E2E.ChurnPartitions != 4 || rep.E2E.ChurnCycles < 1 {
		t.Fatalf("report %+v: want records, churn_partitions 4 and at least one churn cycle\n%s", rep.E2E, out)
	}

	details, err := newAdmin(t, b.Addr).ListTopics(testContext(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range details.Names() {
		if strings.Contains(name, "-churn-") {
			t.Fatalf("churn topic %s is left after the run; topics %v", name, details.Names())
		}
	}

	_, code = runCLI(t, "bench", "--bootstrap", b.Addr, "--mode", "produce", "--churn-partitions", "4")
	if code == 0 {
		t.Fatal("--churn-partitions with --mode produce was accepted")
	}
}

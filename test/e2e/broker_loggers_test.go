package e2e

import (
	"context"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestBrokerLoggers: the BROKER_LOGGER resource (kafka-configs
// --entity-type broker-loggers) lists the broker's loggers and changes
// their levels while it runs: strata.server at DEBUG logs each closed
// connection, which it does not at INFO; DELETE takes the level away, and
// a restart starts from --log-level again.
func TestBrokerLoggers(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	node := strconv.Itoa(int(brokerNodeID(t, newAdmin(t, b.Addr))))
	cl := newClient(t, b.Addr)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	describe := func() map[string]string {
		t.Helper()
		r := kmsg.NewPtrDescribeConfigsRequest()
		rr := kmsg.NewDescribeConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBrokerLogger, node
		r.Resources = append(r.Resources, rr)
		resp, err := r.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		res := resp.Resources[0]
		if res.ErrorCode != 0 {
			t.Fatalf("DescribeConfigs of BROKER_LOGGER %s: %d %v", node, res.ErrorCode, res.ErrorMessage)
		}
		levels := map[string]string{}
		for _, c := range res.Configs {
			levels[c.Name] = *c.Value
		}
		return levels
	}
	alter := func(op kmsg.IncrementalAlterConfigOp, name string, value *string) {
		t.Helper()
		r := kmsg.NewPtrIncrementalAlterConfigsRequest()
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBrokerLogger, node
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Op, c.Name, c.Value = op, name, value
		rr.Configs = append(rr.Configs, c)
		r.Resources = append(r.Resources, rr)
		resp, err := r.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if res := resp.Resources[0]; res.ErrorCode != 0 {
			t.Fatalf("IncrementalAlterConfigs %v %s: %d %v", op, name, res.ErrorCode, res.ErrorMessage)
		}
	}
	// closedLines counts the closed connections logged; closeOne opens
	// and closes one.
	closedLines := func() int {
		return strings.Count(b.output.String(), `msg="connection closed"`)
	}
	closeOne := func() {
		t.Helper()
		other := newClient(t, b.Addr)
		if err := other.Ping(ctx); err != nil {
			t.Fatal(err)
		}
		other.Close()
	}

	levels := describe()
	for _, name := range []string{"root", "strata", "strata.server", "strata.tier", "strata.coordinator", "strata.coordinator.group"} {
		if levels[name] != "INFO" {
			t.Errorf("logger %s at %q at first, want INFO (all: %v)", name, levels[name], levels)
		}
	}
	closeOne()
	time.Sleep(200 * time.Millisecond)
	if n := closedLines(); n != 0 {
		t.Fatalf("at INFO, %d closed connections logged", n)
	}

	alter(kmsg.IncrementalAlterConfigOpSet, "strata.server", kmsg.StringPtr("DEBUG"))
	if got := describe(); got["strata.server"] != "DEBUG" || got["strata"] != "INFO" || got["root"] != "INFO" {
		t.Fatalf("after SET strata.server=DEBUG: %v", got)
	}
	closeOne()
	waitFor(t, 10*time.Second, "the closed connection logged at DEBUG", func() bool { return closedLines() > 0 })
	if out := b.output.String(); !strings.Contains(out, "logger=strata.server") {
		t.Fatalf("the DEBUG line does not name its logger:\n%s", out)
	}

	alter(kmsg.IncrementalAlterConfigOpDelete, "strata.server", nil)
	if got := describe(); got["strata.server"] != "INFO" {
		t.Fatalf("after DELETE strata.server: %v", got)
	}
	before := closedLines()
	closeOne()
	time.Sleep(200 * time.Millisecond)
	if n := closedLines(); n != before {
		t.Fatalf("back at INFO, %d more closed connections logged", n-before)
	}

	alter(kmsg.IncrementalAlterConfigOpSet, "strata", kmsg.StringPtr("TRACE"))
	b.Stop()
	b.Restart()
	cl = newClient(t, b.Addr, kgo.MetadataMinAge(100*time.Millisecond))
	if got := describe(); !maps.Equal(got, levels) {
		t.Fatalf("after a restart: %v, want the levels it started with, %v", got, levels)
	}
}

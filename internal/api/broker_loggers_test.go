package api

import (
	"maps"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/logging"
)

func TestLoggerChangesRefusal(t *testing.T) {
	exists := func(name string) bool { return name == logging.Root || name == "strata" || name == "strata.tier" }
	op := incrementalOp
	for _, tc := range []struct {
		what    string
		changes []kmsg.IncrementalAlterConfigsRequestResourceConfig
		code    int16
		says    string
	}{
		{"none", nil, 0, ""},
		{"sets and a delete", []kmsg.IncrementalAlterConfigsRequestResourceConfig{op(opSet, "root", "WARN"), op(opSet, "strata", "TRACE"), op(opDelete, "strata.tier")}, 0, ""},
		{"an unknown logger", []kmsg.IncrementalAlterConfigsRequestResourceConfig{op(opSet, "strata", "DEBUG"), op(opSet, "kafka.server", "DEBUG")}, kerr.InvalidConfig.Code, "logger kafka.server does not exist"},
		{"deleting an unknown logger", []kmsg.IncrementalAlterConfigsRequestResourceConfig{op(opDelete, "strata.log")}, kerr.InvalidConfig.Code, "logger strata.log does not exist"},
		{"a level in small letters", []kmsg.IncrementalAlterConfigsRequestResourceConfig{op(opSet, "strata", "debug")}, kerr.InvalidConfig.Code, `cannot set the level of logger strata: "debug" is not a log level; use one of TRACE, DEBUG, INFO, WARN, ERROR, FATAL`},
		{"OFF", []kmsg.IncrementalAlterConfigsRequestResourceConfig{op(opSet, "strata", "OFF")}, kerr.InvalidConfig.Code, `"OFF" is not a log level`},
		{"deleting the root's level", []kmsg.IncrementalAlterConfigsRequestResourceConfig{op(opDelete, "root")}, kerr.InvalidRequest.Code, "root logger's level cannot be removed"},
		{"APPEND", []kmsg.IncrementalAlterConfigsRequestResourceConfig{op(opAppend, "strata", "DEBUG")}, kerr.InvalidRequest.Code, "APPEND is not an operation on a BROKER_LOGGER resource"},
		{"SUBTRACT of an unknown logger", []kmsg.IncrementalAlterConfigsRequestResourceConfig{op(opSubtract, "nope", "DEBUG")}, kerr.InvalidRequest.Code, "SUBTRACT is not an operation"},
	} {
		code, msg := loggerChangesRefusal(tc.changes, exists)
		if code != tc.code || !strings.Contains(msg, tc.says) {
			t.Errorf("%s: %d %q, want %d saying %q", tc.what, code, msg, tc.code, tc.says)
		}
	}
}

// TestBrokerLoggers: DescribeConfigs of this broker's BROKER_LOGGER
// resource lists its loggers and their levels; IncrementalAlterConfigs
// sets and removes levels (validate_only changes nothing, a refused
// resource changes nothing of it); another broker's resource and
// AlterConfigs are refused.
func TestBrokerLoggers(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	loggers := rh.h.opts.Loggers
	loggers.Logger("strata.tier")
	describe := func(name string) (int16, map[string]string) {
		t.Helper()
		r := kmsg.NewPtrDescribeConfigsRequest()
		rr := kmsg.NewDescribeConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = resourceBrokerLogger, name
		r.Resources = append(r.Resources, rr)
		res := rh.handle(32, 4, r, "User:ANONYMOUS").(*kmsg.DescribeConfigsResponse).Resources[0]
		levels := map[string]string{}
		for _, c := range res.Configs {
			if c.Source != kmsg.ConfigSourceDynamicBrokerLoggerConfig || c.ReadOnly || c.IsSensitive || c.Value == nil {
				t.Errorf("logger %s described as %+v", c.Name, c)
				continue
			}
			levels[c.Name] = *c.Value
		}
		return res.ErrorCode, levels
	}
	wantLevels := func(what string, want map[string]string) {
		t.Helper()
		if code, got := describe("1"); code != 0 || !maps.Equal(got, want) {
			t.Fatalf("%s: described %d %v, want %v", what, code, got, want)
		}
	}
	wantLevels("at first", map[string]string{"root": "INFO", "strata": "INFO", "strata.tier": "INFO"})

	alter := func(name string, validateOnly bool, ops ...string) (int16, string) {
		t.Helper()
		return rh.incrementalConfigs(resourceBrokerLogger, name, validateOnly, ops...)
	}
	if code, msg := alter("1", false, "SET strata=DEBUG", "SET root=WARN"); code != 0 {
		t.Fatalf("SET: %d %s", code, msg)
	}
	wantLevels("strata at DEBUG, root at WARN", map[string]string{"root": "WARN", "strata": "DEBUG", "strata.tier": "DEBUG"})
	if code, msg := alter("1", true, "SET strata.tier=ERROR", "DELETE strata"); code != 0 {
		t.Fatalf("validate only: %d %s", code, msg)
	}
	wantLevels("after validate_only", map[string]string{"root": "WARN", "strata": "DEBUG", "strata.tier": "DEBUG"})
	if code, msg := alter("1", false, "SET strata.tier=ERROR", "DELETE strata"); code != 0 {
		t.Fatalf("SET and DELETE: %d %s", code, msg)
	}
	wantLevels("strata.tier at ERROR, strata unset", map[string]string{"root": "WARN", "strata": "WARN", "strata.tier": "ERROR"})

	for _, tc := range []struct {
		what     string
		resource string
		ops      []string
		code     int16
	}{
		{"another broker", "2", []string{"SET root=DEBUG"}, kerr.InvalidRequest.Code},
		{"no broker", "", []string{"SET root=DEBUG"}, kerr.InvalidRequest.Code},
		{"a good SET beside an unknown logger", "1", []string{"SET root=DEBUG", "SET kafka=DEBUG"}, kerr.InvalidConfig.Code},
		{"a good SET beside a bad level", "1", []string{"SET root=DEBUG", "SET strata=LOUD"}, kerr.InvalidConfig.Code},
		{"DELETE of the root's level", "1", []string{"DELETE root"}, kerr.InvalidRequest.Code},
		{"APPEND", "1", []string{"APPEND strata=DEBUG"}, kerr.InvalidRequest.Code},
	} {
		if code, msg := alter(tc.resource, false, tc.ops...); code != tc.code {
			t.Errorf("%s: %d %q, want %d", tc.what, code, msg, tc.code)
		}
	}
	wantLevels("after the refusals", map[string]string{"root": "WARN", "strata": "WARN", "strata.tier": "ERROR"})
	for _, name := range []string{"2", "", "x"} {
		if code, _ := describe(name); code != kerr.InvalidRequest.Code {
			t.Errorf("DescribeConfigs of BROKER_LOGGER %q: %d, want INVALID_REQUEST", name, code)
		}
	}

	res := rh.alterConfigsLegacy(resourceBrokerLogger, "1", legacyEntry("root", "DEBUG"))
	if res.ErrorCode != kerr.InvalidRequest.Code || res.ErrorMessage == nil || !strings.Contains(*res.ErrorMessage, "use IncrementalAlterConfigs") {
		t.Errorf("AlterConfigs of BROKER_LOGGER: %d %v, want INVALID_REQUEST", res.ErrorCode, res.ErrorMessage)
	}
	wantLevels("after AlterConfigs", map[string]string{"root": "WARN", "strata": "WARN", "strata.tier": "ERROR"})
}

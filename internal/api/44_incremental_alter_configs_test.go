package api

import (
	"maps"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestApplyConfigOps(t *testing.T) {
	// "list" is the one list config; unset, it is effectively "x,y".
	lists := listConfigs{
		isList: func(k string) bool { return k == "list" },
		effective: func(_ map[string]string, k string) []string {
			if k != "list" {
				t.Fatalf("effective value of %s asked", k)
			}
			return []string{"x", "y"}
		},
	}
	op := incrementalOp
	for _, tc := range []struct {
		what string
		cur  map[string]string
		ops  []kmsg.IncrementalAlterConfigsRequestResourceConfig
		want map[string]string
	}{
		{"nothing", nil, nil, map[string]string{}},
		{"set a new config", map[string]string{"a": "1"}, []kmsg.IncrementalAlterConfigsRequestResourceConfig{op(opSet, "b", "2")}, map[string]string{"a": "1", "b": "2"}},
		{"set one again", map[string]string{"a": "1"}, []kmsg.IncrementalAlterConfigsRequestResourceConfig{op(opSet, "a", "3")}, map[string]string{"a": "3"}},
		{"set to empty", map[string]string{"a": "1"}, []kmsg.IncrementalAlterConfigsRequestResourceConfig{op(opSet, "a", "")}, map[string]string{"a": ""}},
		{"delete one", map[string]string{"a": "1", "b": "2"}, []kmsg.IncrementalAlterConfigsRequestResourceConfig{op(opDelete, "a")}, map[string]string{"b": "2"}},
		{"delete one not set", map[string]string{"a": "1"}, []kmsg.IncrementalAlterConfigsRequestResourceConfig{op(opDelete, "b")}, map[string]string{"a": "1"}},
		{"append to the effective list", nil, []kmsg.IncrementalAlterConfigsRequestResourceConfig{op(opAppend, "list", "z")}, map[string]string{"list": "x,y,z"}},
		{"append to the set list", map[string]string{"list": "a"}, []kmsg.IncrementalAlterConfigsRequestResourceConfig{op(opAppend, "list", " b , ,c")}, map[string]string{"list": "a,b,c"}},
		{"append what the list has", map[string]string{"list": "a,b"}, []kmsg.IncrementalAlterConfigsRequestResourceConfig{op(opAppend, "list", "b,a,c,c")}, map[string]string{"list": "a,b,c"}},
		{"append to an empty list", map[string]string{"list": ""}, []kmsg.IncrementalAlterConfigsRequestResourceConfig{op(opAppend, "list", "a")}, map[string]string{"list": "a"}},
		{"subtract from the effective list", nil, []kmsg.IncrementalAlterConfigsRequestResourceConfig{op(opSubtract, "list", "x")}, map[string]string{"list": "y"}},
		{"subtract what the list lacks", map[string]string{"list": "a,b"}, []kmsg.IncrementalAlterConfigsRequestResourceConfig{op(opSubtract, "list", "c")}, map[string]string{"list": "a,b"}},
		{"subtract every item", map[string]string{"list": "a,b"}, []kmsg.IncrementalAlterConfigsRequestResourceConfig{op(opSubtract, "list", "b,a")}, map[string]string{"list": ""}},
		{"subtract an item listed twice", map[string]string{"list": "a,b,a"}, []kmsg.IncrementalAlterConfigsRequestResourceConfig{op(opSubtract, "list", "a")}, map[string]string{"list": "b"}},
		{"a set, a delete and an append", map[string]string{"a": "1", "b": "2"}, []kmsg.IncrementalAlterConfigsRequestResourceConfig{op(opSet, "c", "3"), op(opDelete, "a"), op(opAppend, "list", "x")}, map[string]string{"b": "2", "c": "3", "list": "x,y"}},
	} {
		before := maps.Clone(tc.cur)
		got, err := applyConfigOps(tc.cur, tc.ops, lists)
		if err != nil || !maps.Equal(got, tc.want) {
			t.Errorf("%s: %v (%v), want %v", tc.what, got, err, tc.want)
		}
		if !maps.Equal(tc.cur, before) {
			t.Errorf("%s: the current configs changed to %v", tc.what, tc.cur)
		}
	}
	for _, tc := range []struct {
		what string
		ops  []kmsg.IncrementalAlterConfigsRequestResourceConfig
		says string
	}{
		{"append to a scalar", []kmsg.IncrementalAlterConfigsRequestResourceConfig{op(opAppend, "a", "1")}, "only to list configs"},
		{"subtract from a scalar", []kmsg.IncrementalAlterConfigsRequestResourceConfig{op(opSet, "b", "1"), op(opSubtract, "a", "1")}, "only to list configs"},
		{"an unknown operation", []kmsg.IncrementalAlterConfigsRequestResourceConfig{op(4, "a", "1")}, "unknown operation"},
	} {
		if got, err := applyConfigOps(map[string]string{"a": "1"}, tc.ops, lists); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v (%v), want an error saying %q", tc.what, got, err, tc.says)
		}
	}
}

// TestAppendAndSubtractOnTopicLists: APPEND and SUBTRACT edit a topic's
// list configs, starting from the value the topic has when it does not
// set one (the broker's default); a topic's scalar config is no list.
func TestAppendAndSubtractOnTopicLists(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("lists", nil, []int32{1})
	steps := []struct {
		op   string
		want string // cleanup.policy after it
	}{
		{"APPEND cleanup.policy=compact", "delete,compact"},
		{"APPEND cleanup.policy=compact", "delete,compact"},
		{"SUBTRACT cleanup.policy=delete", "compact"},
		{"SUBTRACT cleanup.policy=delete", "compact"},
	}
	for _, s := range steps {
		if code, msg := rh.incrementalConfigs(resourceTopic, "lists", false, s.op); code != 0 {
			t.Fatalf("%s: %d %s", s.op, code, msg)
		}
		if got := rh.meta.Image().Topics["lists"].Configs["cleanup.policy"]; got != s.want {
			t.Fatalf("after %s: cleanup.policy=%q, want %q", s.op, got, s.want)
		}
	}
	code, msg := rh.incrementalConfigs(resourceTopic, "lists", false, "APPEND retention.ms=1")
	if code != kerr.InvalidConfig.Code || !strings.Contains(msg, "list configs") {
		t.Fatalf("APPEND to retention.ms: %d %q, want INVALID_CONFIG", code, msg)
	}
}

// TestAppendToTheClusterWideList: a list the cluster-wide broker resource
// does not set starts from the static value, not from what this broker
// sets for itself.
func TestAppendToTheClusterWideList(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	if code, msg := rh.incrementalBrokerConfigs("1", false, "SET log.cleanup.policy=compact"); code != 0 {
		t.Fatalf("this broker's: %d %s", code, msg)
	}
	if code, msg := rh.incrementalBrokerConfigs("", false, "APPEND log.cleanup.policy=delete"); code != 0 {
		t.Fatalf("cluster-wide: %d %s", code, msg)
	}
	if got := rh.meta.Image().BrokerConfigs["log.cleanup.policy"]; got != "delete" {
		t.Fatalf("cluster-wide log.cleanup.policy=%q, want delete (the static value with delete appended)", got)
	}
	if code, msg := rh.incrementalBrokerConfigs("1", false, "APPEND log.cleanup.policy=delete"); code != 0 {
		t.Fatalf("this broker's append: %d %s", code, msg)
	}
	if got := rh.meta.Image().NodeConfigs[1]["log.cleanup.policy"]; got != "compact,delete" {
		t.Fatalf("this broker's log.cleanup.policy=%q, want compact,delete", got)
	}
}

// incrementalOp is one change of an IncrementalAlterConfigs resource;
// without a value, its value is null.
func incrementalOp(o kmsg.IncrementalAlterConfigOp, name string, value ...string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Op, c.Name = o, name
	if len(value) > 0 {
		c.Value = &value[0]
	}
	return c
}

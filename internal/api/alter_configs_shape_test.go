package api

import (
	"maps"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestConfigChangesRefusal(t *testing.T) {
	set := func(name string) configChange { return configChange{name: name, op: opSet} }
	null := func(name string, op int8) configChange { return configChange{name: name, op: op, null: true} }
	for _, tc := range []struct {
		name    string
		changes []configChange
		want    string // a part of the refusal; "" for none
	}{
		{"none", nil, ""},
		{"one of each operation", []configChange{set("a"), {name: "b", op: opDelete}, {name: "c", op: opAppend}, {name: "d", op: opSubtract}}, ""},
		{"a DELETE without a value", []configChange{null("a", opDelete)}, ""},
		{"a config set twice", []configChange{set("a"), set("b"), set("a")}, "duplicate config keys: a ("},
		{"set and deleted", []configChange{set("a"), {name: "a", op: opDelete}}, "duplicate config keys: a ("},
		{"each twice named once", []configChange{set("a"), set("b"), set("a"), set("b"), set("a")}, "duplicate config keys: a, b ("},
		{"a SET without a value", []configChange{set("a"), null("b", opSet)}, "null value not supported for: b ("},
		{"APPEND and SUBTRACT without values", []configChange{null("a", opAppend), null("b", opSubtract)}, "null value not supported for: a, b ("},
		{"a duplicate before a null", []configChange{null("a", opSet), set("b"), set("b")}, "duplicate config keys: b ("},
		{"an operation past SUBTRACT", []configChange{set("a"), {name: "b", op: 4}}, "unknown operation 4 on config b;"},
		{"a negative operation", []configChange{{name: "a", op: -1}}, "unknown operation -1 on config a;"},
		{"a null before an unknown operation", []configChange{{name: "a", op: 9}, null("b", opSet)}, "null value not supported for: b ("},
	} {
		got := configChangesRefusal(tc.changes)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestAlterConfigsRefusesMalformedResources: as Kafka's broker does, a
// resource named twice in a request (each copy), a config named twice in
// a resource, and a null value (legacy AlterConfigs; in
// IncrementalAlterConfigs on anything but DELETE) are INVALID_REQUEST
// and change nothing, while a sound resource of the same request is
// applied. The shape is checked before authorization.
func TestAlterConfigsRefusesMalformedResources(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	for _, name := range []string{"twice", "sound"} {
		rh.createTopic(name, map[string]string{"retention.ms": "5000"}, []int32{1})
	}
	incremental := func(resources ...kmsg.IncrementalAlterConfigsRequestResource) []kmsg.IncrementalAlterConfigsResponseResource {
		r := kmsg.NewPtrIncrementalAlterConfigsRequest()
		r.Resources = resources
		return rh.handle(44, 1, r, "User:ANONYMOUS").(*kmsg.IncrementalAlterConfigsResponse).Resources
	}
	topic := func(name string, configs ...kmsg.IncrementalAlterConfigsRequestResourceConfig) kmsg.IncrementalAlterConfigsRequestResource {
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName, rr.Configs = resourceTopic, name, configs
		return rr
	}
	op := incrementalOp
	const one = "1000"
	wantRefused := func(what string, got []kmsg.IncrementalAlterConfigsResponseResource, i int, part string) {
		t.Helper()
		if msg := got[i].ErrorMessage; got[i].ErrorCode != kerr.InvalidRequest.Code || msg == nil || !strings.Contains(*msg, part) {
			t.Errorf("%s: resource %d answered %d %v, want INVALID_REQUEST with %q", what, i, got[i].ErrorCode, msg, part)
		}
	}
	wantConfigs := func(name string, want map[string]string) {
		t.Helper()
		if got := rh.meta.Image().Topics[name].Configs; !maps.Equal(got, want) {
			t.Fatalf("topic %s configs %v, want %v", name, got, want)
		}
	}

	got := incremental(topic("twice", op(opSet, "retention.ms", one)), topic("sound", op(opSet, "segment.ms", one)), topic("twice", op(opDelete, "retention.ms")))
	wantRefused("a topic named twice", got, 0, `TOPIC resource "twice" appears more than once`)
	wantRefused("a topic named twice", got, 2, `TOPIC resource "twice" appears more than once`)
	if got[1].ErrorCode != 0 {
		t.Fatalf("the sound resource beside them: %d %v", got[1].ErrorCode, got[1].ErrorMessage)
	}
	wantConfigs("twice", map[string]string{"retention.ms": "5000"})
	wantConfigs("sound", map[string]string{"retention.ms": "5000", "segment.ms": "1000"})

	for _, tc := range []struct {
		what string
		ops  []kmsg.IncrementalAlterConfigsRequestResourceConfig
		part string
	}{
		{"a config set and deleted", []kmsg.IncrementalAlterConfigsRequestResourceConfig{op(opSet, "retention.ms", one), op(opDelete, "retention.ms")}, "duplicate config keys: retention.ms"},
		{"a SET without a value", []kmsg.IncrementalAlterConfigsRequestResourceConfig{op(opSet, "retention.ms")}, "null value not supported for: retention.ms"},
		{"an APPEND without a value", []kmsg.IncrementalAlterConfigsRequestResourceConfig{op(opAppend, "cleanup.policy")}, "null value not supported for: cleanup.policy"},
		{"an unknown operation", []kmsg.IncrementalAlterConfigsRequestResourceConfig{op(7, "retention.ms", one)}, "unknown operation 7"},
	} {
		wantRefused(tc.what, incremental(topic("twice", tc.ops...)), 0, tc.part)
	}
	wantConfigs("twice", map[string]string{"retention.ms": "5000"})

	legacy := func(configs ...kmsg.AlterConfigsRequestResourceConfig) kmsg.AlterConfigsResponseResource {
		return rh.alterConfigsLegacy(resourceTopic, "twice", configs...)
	}
	entry := legacyEntry
	for _, tc := range []struct {
		what    string
		configs []kmsg.AlterConfigsRequestResourceConfig
		part    string
	}{
		{"AlterConfigs with a config named twice", []kmsg.AlterConfigsRequestResourceConfig{entry("segment.ms", one), entry("segment.ms", one)}, "duplicate config keys: segment.ms"},
		{"AlterConfigs with a null value", []kmsg.AlterConfigsRequestResourceConfig{entry("segment.ms", one), entry("retention.ms")}, "null value not supported for: retention.ms"},
	} {
		got := legacy(tc.configs...)
		if msg := got.ErrorMessage; got.ErrorCode != kerr.InvalidRequest.Code || msg == nil || !strings.Contains(*msg, tc.part) {
			t.Errorf("%s: %d %v, want INVALID_REQUEST with %q", tc.what, got.ErrorCode, msg, tc.part)
		}
	}
	wantConfigs("twice", map[string]string{"retention.ms": "5000"})
	if got := legacy(entry("segment.ms", one)); got.ErrorCode != 0 {
		t.Fatalf("AlterConfigs of a sound resource: %d %v", got.ErrorCode, got.ErrorMessage)
	}
	wantConfigs("twice", map[string]string{"segment.ms": "1000"})
}

// TestAlterConfigsShapeBeforeAuthorization: a principal without ACLs that
// sends a malformed resource hears INVALID_REQUEST, as from Kafka, whose
// broker checks the shape before it forwards the request to be
// authorized; a sound one hears the authorization failure.
func TestAlterConfigsShapeBeforeAuthorization(t *testing.T) {
	rh := newReplicaHarness(t, map[string]string{
		"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":           "User:admin",
	})
	rh.createTopic("guarded", nil, []int32{1})
	r := kmsg.NewPtrIncrementalAlterConfigsRequest()
	for _, value := range []*string{kmsg.StringPtr("1"), nil} {
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = resourceTopic, "guarded"
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = "retention.ms", value
		rr.Configs = append(rr.Configs, c)
		r.Resources = append(r.Resources, rr)
	}
	r.Resources[1].ResourceName = "other"
	got := rh.handle(44, 1, r, "User:mallory").(*kmsg.IncrementalAlterConfigsResponse).Resources
	if got[0].ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Errorf("a sound resource: %d, want TOPIC_AUTHORIZATION_FAILED", got[0].ErrorCode)
	}
	if got[1].ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("a SET without a value: %d, want INVALID_REQUEST", got[1].ErrorCode)
	}
}

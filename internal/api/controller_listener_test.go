package api

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Every API the controller listener lists is one this broker implements,
// and none of the broker-only APIs a client must not reach there is.
func TestControllerListenerAPIsAreRegistered(t *testing.T) {
	for key := range controllerListenerAPIs {
		if _, ok := registry[key]; !ok {
			t.Errorf("controller listener API %s is not registered", kmsg.NameForKey(key))
		}
	}
	for _, k := range []kmsg.Key{kmsg.Produce, kmsg.Fetch, kmsg.Metadata, kmsg.ListOffsets, kmsg.FindCoordinator,
		kmsg.JoinGroup, kmsg.InitProducerID, kmsg.DescribeLogDirs, kmsg.DescribeClientQuotas} {
		if controllerListenerAPIs[k.Int16()] {
			t.Errorf("%s is served on the controller listener; Kafka's controllers do not serve it", k.Name())
		}
	}
}

func TestControllerEndpointType(t *testing.T) {
	for _, tc := range []struct {
		version      int16
		endpointType int8
		code         int16
	}{
		{2, endpointTypeController, 0},
		{1, endpointTypeController, 0},
		{2, endpointTypeBroker, kerr.MismatchedEndpointType.Code},
		{0, endpointTypeBroker, kerr.InvalidRequest.Code}, // v0 cannot ask for controllers
		{2, 7, kerr.UnsupportedEndpointType.Code},
		{2, 0, kerr.UnsupportedEndpointType.Code},
	} {
		r := kmsg.NewPtrDescribeClusterRequest()
		r.Version, r.EndpointType = tc.version, tc.endpointType
		code, msg, ok := controllerEndpointType(r)
		if code != tc.code || ok != (tc.code == 0) || ok != (msg == "") {
			t.Errorf("v%d endpoint type %d: %d %q %v, want code %d", tc.version, tc.endpointType, code, msg, ok, tc.code)
		}
	}
}

func TestSplitAddress(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Address
		ok   bool
	}{
		{"localhost:9093", Address{"localhost", 9093}, true},
		{"10.0.0.1:1", Address{"10.0.0.1", 1}, true},
		{"[::1]:9093", Address{"::1", 9093}, true},
		{"localhost", Address{}, false},
		{":9093", Address{}, false},
		{"host:0", Address{}, false},
		{"host:65536", Address{}, false},
		{"host:port", Address{}, false},
	} {
		got, ok := splitAddress(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("splitAddress(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

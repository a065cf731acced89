package clientmetrics

import (
	"net/netip"
	"testing"
)

// kafkaTestClient is the client of Kafka's ClientMetricsTestUtils.requestContext.
var kafkaTestClient = Selectors{
	ClientID:        "producer-1",
	SoftwareName:    "apache-kafka-java",
	SoftwareVersion: "3.5.2",
	Source:          netip.MustParseAddrPort("10.1.2.3:56078"),
}

var testID = InstanceID{0: 0x12, 5: 0x34, 15: 0x56}

func TestSubscriptionMatches(t *testing.T) {
	for _, tc := range []struct {
		match string
		sel   Selectors
		want  bool
	}{
		// Kafka's ClientMetricsInstanceMetadataTest.
		{"", kafkaTestClient, true},
		{"client_id=.*", kafkaTestClient, true},
		{"client_id=producer-1", kafkaTestClient, true},
		{"client_id=producer.*", kafkaTestClient, true},
		{"client_instance_id=" + testID.String(), kafkaTestClient, true},
		{"client_software_name=apache-kafka-java", kafkaTestClient, true},
		{"client_software_version=3.5.2", kafkaTestClient, true},
		{"client_source_address=10.1.2.3", kafkaTestClient, true},
		{"client_source_port=56078", kafkaTestClient, true},
		{"client_id=producer-1,client_instance_id=" + testID.String() + ",client_software_name=apache-kafka-.*,client_software_version=3.5.2,client_source_address=10.1.2.3,client_source_port=56078", kafkaTestClient, true},
		{"client_id=producer-2,client_software_name=apache-kafka-.*", kafkaTestClient, false},
		{"client_instance_id=" + testID.String() + "random", kafkaTestClient, false},
		{"client_software_name=apache-kafka-java-1", kafkaTestClient, false},
		{"client_software_version=3.5.x", kafkaTestClient, false},
		{"client_source_address=1.2.3.4", kafkaTestClient, false},
		{"client_source_port=8080", kafkaTestClient, false},
		// The regex must match the whole value, as Java's matches().
		{"client_id=producer", kafkaTestClient, false},
		{"client_id=roducer-1", kafkaTestClient, false},
		{"client_id=producer-1|x", kafkaTestClient, true},
		{"client_id=a|producer-1", kafkaTestClient, true},
		{"client_id=producer|x", kafkaTestClient, false}, // the alternation is inside the anchors
		{"client_id=x|-1", kafkaTestClient, false},
		{"client_id=producer-1\n", Selectors{ClientID: "producer-1\n"}, false}, // trimmed: the regex is "producer-1"
		// A client that did not name its software is "unknown".
		{"client_software_name=unknown,client_software_version=unknown", Selectors{}, true},
		// An unknown source matches no address or port pattern.
		{"client_source_address=.*", Selectors{}, false},
		{"client_source_port=.*", Selectors{}, false},
	} {
		s, err := ParseSubscription("s", map[string]string{"match": tc.match})
		if err != nil {
			t.Fatalf("%q: %v", tc.match, err)
		}
		if got := s.Matches(testID, tc.sel); got != tc.want {
			t.Errorf("%q on %+v: got %v, want %v", tc.match, tc.sel, got, tc.want)
		}
	}
}

func TestJavaHostAddress(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1":              "127.0.0.1",
		"::ffff:10.0.0.7":        "10.0.0.7",
		"::1":                    "0:0:0:0:0:0:0:1",
		"2001:db8::ff00:42:8329": "2001:db8:0:0:0:ff00:42:8329",
		"fe80::1%eth0":           "fe80:0:0:0:0:0:0:1%eth0",
	} {
		if got := javaHostAddress(netip.MustParseAddr(in)); got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
}

func TestSelectorNames(t *testing.T) {
	for s := SelectorClientInstanceID; s < selectorEnd; s++ {
		got, ok := parseSelector(s.String())
		if !ok || got != s {
			t.Errorf("%v does not round-trip", s)
		}
	}
	if got := Selector(0).String(); got != "selector(0)" {
		t.Errorf("the zero selector is %q", got)
	}
	if _, ok := parseSelector("selector(0)"); ok {
		t.Error("the zero selector parses")
	}
}

package quota

import (
	"errors"
	"math"
	"testing"
)

func strp(s string) *string { return &s }

func TestParseEntity(t *testing.T) {
	for _, tc := range []struct {
		name  string
		parts []WirePart
		want  Entity
		bad   bool
	}{
		{"user", []WirePart{{TypeUser, strp("alice")}}, Entity{User: NamedPart("alice")}, false},
		{"default user", []WirePart{{TypeUser, nil}}, Entity{User: DefaultPart()}, false},
		{"client id", []WirePart{{TypeClientID, strp("app")}}, Entity{ClientID: NamedPart("app")}, false},
		{"empty client id is a name", []WirePart{{TypeClientID, strp("")}}, Entity{ClientID: NamedPart("")}, false},
		{"user's client", []WirePart{{TypeClientID, nil}, {TypeUser, strp("bob")}}, Entity{User: NamedPart("bob"), ClientID: DefaultPart()}, false},
		{"no part", nil, Entity{}, true},
		{"ip", []WirePart{{TypeIP, strp("10.0.0.1")}}, Entity{IP: NamedPart("10.0.0.1")}, false},
		{"ipv6", []WirePart{{TypeIP, strp("fe80::1")}}, Entity{IP: NamedPart("fe80::1")}, false},
		{"ip host name", []WirePart{{TypeIP, strp("broker-1.example.com")}}, Entity{IP: NamedPart("broker-1.example.com")}, false},
		{"default ip", []WirePart{{TypeIP, nil}}, Entity{IP: DefaultPart()}, false},
		{"ip with user", []WirePart{{TypeIP, strp("10.0.0.1")}, {TypeUser, strp("a")}}, Entity{}, true},
		{"ip with default client", []WirePart{{TypeClientID, nil}, {TypeIP, nil}}, Entity{}, true},
		{"ip twice", []WirePart{{TypeIP, nil}, {TypeIP, strp("10.0.0.1")}}, Entity{}, true},
		{"empty ip", []WirePart{{TypeIP, strp("")}}, Entity{}, true},
		{"ip not a name", []WirePart{{TypeIP, strp("10.0.0.1/8")}}, Entity{}, true},
		{"unknown type", []WirePart{{"group", strp("g")}}, Entity{}, true},
		{"user twice", []WirePart{{TypeUser, strp("a")}, {TypeUser, nil}}, Entity{}, true},
		{"empty user", []WirePart{{TypeUser, strp("")}}, Entity{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseEntity(tc.parts)
			if tc.bad {
				if !errors.Is(err, ErrInvalidEntity) {
					t.Fatalf("ParseEntity = %v, %v; want ErrInvalidEntity", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseEntity = %v, %v; want %v", got, err, tc.want)
			}
			back, err := ParseEntity(got.Wire())
			if err != nil || back != got {
				t.Fatalf("Wire round trip: %v, %v; want %v", back, err, got)
			}
		})
	}
}

func TestEntityString(t *testing.T) {
	for _, tc := range []struct {
		e    Entity
		want string
	}{
		{Entity{User: NamedPart("alice"), ClientID: DefaultPart()}, "user=alice, client-id=<default>"},
		{Entity{User: DefaultPart()}, "user=<default>"},
		{Entity{User: DefaultPart(), ClientID: NamedPart("app")}, "user=<default>, client-id=app"},
		{Entity{ClientID: NamedPart("")}, "client-id="},
		{Entity{IP: NamedPart("10.0.0.1")}, "ip=10.0.0.1"},
		{Entity{IP: DefaultPart()}, "ip=<default>"},
		{Entity{}, "<no entity>"},
	} {
		if got := tc.e.String(); got != tc.want {
			t.Errorf("String of %#v = %q, want %q", tc.e, got, tc.want)
		}
	}
}

func TestValidateKey(t *testing.T) {
	user := Entity{User: NamedPart("alice")}
	ip := Entity{IP: DefaultPart()}
	for _, k := range []string{ProducerByteRate, ConsumerByteRate, ControllerMutationRate, RequestPercentage} {
		if err := ValidateKey(user, k); err != nil {
			t.Errorf("ValidateKey(user, %s) = %v", k, err)
		}
		if err := ValidateKey(ip, k); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("ValidateKey(ip, %s) = %v, want ErrInvalidKey", k, err)
		}
	}
	if err := ValidateKey(ip, ConnectionCreationRate); err != nil {
		t.Errorf("ValidateKey(ip, %s) = %v", ConnectionCreationRate, err)
	}
	for _, e := range []Entity{user, {ClientID: NamedPart("app")}} {
		if err := ValidateKey(e, ConnectionCreationRate); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("ValidateKey(%s, %s) = %v, want ErrInvalidKey", e, ConnectionCreationRate, err)
		}
	}
	for _, k := range []string{"bogus", ""} {
		for _, e := range []Entity{user, ip} {
			if err := ValidateKey(e, k); !errors.Is(err, ErrInvalidKey) {
				t.Errorf("ValidateKey(%s, %q) = %v, want ErrInvalidKey", e, k, err)
			}
		}
	}
}

// TestValidateValue: the values taken for each key's type, as Kafka's
// ClientQuotaControlManager (a LONG byte rate up to Long's maximum; a
// DOUBLE mutation rate or request percentage; an INT connection rate).
// ValidateNewValue takes the same but 0: the stored connection rate of 0
// an earlier Strata accepted is no longer set by a request, as in Kafka.
func TestValidateValue(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, tc := range []struct {
		key  string
		good []float64
		bad  []float64
	}{
		{ProducerByteRate,
			[]float64{1, 1024, 1e12, 1 << 62, math.MaxInt64}, // Long's maximum as a double (2^63), Kafka's largest
			[]float64{0, -1, 0.5, 1024.5, 1 << 64, 1e19, inf, -inf, nan}},
		{ConsumerByteRate, []float64{1, 1 << 40}, []float64{0, 0.5, nan}},
		{ControllerMutationRate, // a mutation rate may be fractional
			[]float64{0.5, 1, 10.25},
			[]float64{0, -1, inf, -inf, nan}},
		{RequestPercentage, []float64{0.5, 12.5, 100, 250}, []float64{0, -1, inf, nan}},
		{ConnectionCreationRate,
			[]float64{0, 1, 10, UnlimitedConnectionCreationRate},
			[]float64{-1, 0.5, UnlimitedConnectionCreationRate + 1, inf, nan}},
	} {
		for _, v := range tc.good {
			if err := ValidateValue(tc.key, v); err != nil {
				t.Errorf("ValidateValue(%s, %v) = %v", tc.key, v, err)
			}
			if err := ValidateNewValue(tc.key, v); (err != nil) != (v == 0) || v == 0 && !errors.Is(err, ErrInvalidValue) {
				t.Errorf("ValidateNewValue(%s, %v) = %v", tc.key, v, err)
			}
		}
		for _, v := range tc.bad {
			if err := ValidateValue(tc.key, v); !errors.Is(err, ErrInvalidValue) {
				t.Errorf("ValidateValue(%s, %v) = %v, want ErrInvalidValue", tc.key, v, err)
			}
			if err := ValidateNewValue(tc.key, v); !errors.Is(err, ErrInvalidValue) {
				t.Errorf("ValidateNewValue(%s, %v) = %v, want ErrInvalidValue", tc.key, v, err)
			}
		}
	}
}

package quota

import (
	"errors"
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
	e := Entity{User: NamedPart("alice"), ClientID: DefaultPart()}
	if got := e.String(); got != "user=alice, client-id=<default>" {
		t.Fatalf("String = %q", got)
	}
}

func TestEntityStringWithIP(t *testing.T) {
	for e, want := range map[Entity]string{
		{IP: NamedPart("10.0.0.1")}: "ip=10.0.0.1",
		{IP: DefaultPart()}:         "ip=<default>",
	} {
		if got := e.String(); got != want {
			t.Errorf("String = %q, want %q", got, want)
		}
	}
}

func TestValidateKeyAndValue(t *testing.T) {
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
	for _, v := range []float64{0, 1, 10, UnlimitedConnectionCreationRate} {
		if err := ValidateValue(ConnectionCreationRate, v); err != nil {
			t.Errorf("ValidateValue(%s, %v) = %v", ConnectionCreationRate, v, err)
		}
	}
	for _, v := range []float64{-1, 0.5, UnlimitedConnectionCreationRate + 1} {
		if err := ValidateValue(ConnectionCreationRate, v); !errors.Is(err, ErrInvalidValue) {
			t.Errorf("ValidateValue(%s, %v) = %v, want ErrInvalidValue", ConnectionCreationRate, v, err)
		}
	}
	for _, v := range []float64{1, 1024, 1e12} {
		if err := ValidateValue(ProducerByteRate, v); err != nil {
			t.Errorf("ValidateValue(%v) = %v", v, err)
		}
	}
	inf := 1.0
	for range 2000 {
		inf *= 10
	}
	for _, v := range []float64{0, -1, 0.5, 1024.5, inf, -inf} {
		if err := ValidateValue(ProducerByteRate, v); !errors.Is(err, ErrInvalidValue) {
			t.Errorf("ValidateValue(%v) = %v, want ErrInvalidValue", v, err)
		}
	}
	for _, v := range []float64{0.5, 1, 10.25} { // a mutation rate may be fractional
		if err := ValidateValue(ControllerMutationRate, v); err != nil {
			t.Errorf("ValidateValue(%s, %v) = %v", ControllerMutationRate, v, err)
		}
	}
	for _, v := range []float64{0, -1, inf, -inf} {
		if err := ValidateValue(ControllerMutationRate, v); !errors.Is(err, ErrInvalidValue) {
			t.Errorf("ValidateValue(%s, %v) = %v, want ErrInvalidValue", ControllerMutationRate, v, err)
		}
	}
}

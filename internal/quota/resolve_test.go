package quota

import (
	"testing"

	"pgregory.net/rapid"
)

func lookupOf(m map[Entity]map[string]float64) Lookup {
	return func(e Entity) map[string]float64 { return m[e] }
}

// TestResolvePrecedence: each entity of Kafka's order wins over every one
// after it, and the meter follows the entity's parts.
func TestResolvePrecedence(t *testing.T) {
	c := Client{User: "alice", ClientID: "app"}
	alice, app := NamedPart("alice"), NamedPart("app")
	def := DefaultPart()
	order := []struct {
		e     Entity
		meter Entity
	}{
		{Entity{User: alice, ClientID: app}, Entity{User: alice, ClientID: app}},
		{Entity{User: alice, ClientID: def}, Entity{User: alice, ClientID: app}},
		{Entity{User: alice}, Entity{User: alice}},
		{Entity{User: def, ClientID: app}, Entity{User: alice, ClientID: app}},
		{Entity{User: def, ClientID: def}, Entity{User: alice, ClientID: app}},
		{Entity{User: def}, Entity{User: alice}},
		{Entity{ClientID: app}, Entity{ClientID: app}},
		{Entity{ClientID: def}, Entity{ClientID: app}},
	}
	for i, want := range order {
		m := map[Entity]map[string]float64{}
		for j := i; j < len(order); j++ {
			m[order[j].e] = map[string]float64{ProducerByteRate: float64(100 + j)}
		}
		got, ok := Resolve(lookupOf(m), c, ProducerByteRate)
		if !ok || got.From != want.e || got.Bound != float64(100+i) || got.Meter != want.meter {
			t.Errorf("with entities %d.. set: %+v, %v; want from %v, bound %d, meter %v", i, got, ok, want.e, 100+i, want.meter)
		}
	}
	if _, ok := Resolve(lookupOf(nil), c, ProducerByteRate); ok {
		t.Error("a quota applied with none set")
	}
	m := map[Entity]map[string]float64{{User: alice}: {ConsumerByteRate: 5}}
	if _, ok := Resolve(lookupOf(m), c, ProducerByteRate); ok {
		t.Error("a consumer quota applied to produce")
	}
	other := map[Entity]map[string]float64{{User: NamedPart("bob")}: {ProducerByteRate: 5}}
	if _, ok := Resolve(lookupOf(other), c, ProducerByteRate); ok {
		t.Error("bob's quota applied to alice")
	}
}

// TestResolvePicksAnEntityThatMatches: whatever is set, the quota found is
// set on an entity that matches the client, and no entity earlier in the
// order sets the key.
func TestResolvePicksAnEntityThatMatches(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		names := []string{"a", "b", ""}
		part := func(label string, allowEmpty bool) Part {
			switch rapid.IntRange(0, 2).Draw(t, label+" kind") {
			case 1:
				n := rapid.SampledFrom(names).Draw(t, label+" name")
				if n == "" && !allowEmpty {
					n = "a"
				}
				return NamedPart(n)
			case 2:
				return DefaultPart()
			}
			return Part{}
		}
		m := map[Entity]map[string]float64{}
		for i := range rapid.IntRange(0, 8).Draw(t, "entities") {
			e := Entity{User: part("user", false), ClientID: part("client", true)}
			if e == (Entity{}) {
				continue
			}
			m[e] = map[string]float64{ProducerByteRate: float64(i + 1)}
		}
		c := Client{User: rapid.SampledFrom([]string{"a", "b"}).Draw(t, "user"), ClientID: rapid.SampledFrom(names).Draw(t, "client id")}
		got, ok := Resolve(lookupOf(m), c, ProducerByteRate)
		matches := func(p Part, name string) bool { return p.Kind != Named || p.Name == name }
		var first *Entity
		for _, p := range precedence {
			e := Entity{User: partFor(p.user, c.User), ClientID: partFor(p.client, c.ClientID)}
			if _, set := m[e]; set {
				first = &e
				break
			}
		}
		if first == nil {
			if ok {
				t.Fatalf("Resolve found %+v; no entity of the client sets the key", got)
			}
			return
		}
		if !ok || got.From != *first || !matches(got.From.User, c.User) || !matches(got.From.ClientID, c.ClientID) {
			t.Fatalf("Resolve = %+v, %v; want from %v", got, ok, *first)
		}
	})
}

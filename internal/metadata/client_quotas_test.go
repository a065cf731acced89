package metadata

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/quota"
)

const (
	produceRate = quota.ProducerByteRate
	consumeRate = quota.ConsumerByteRate
)

// Entities of every shape, named after what they hold.
var (
	qUserAlice      = quota.Entity{User: quota.NamedPart("alice")}
	qUserBob        = quota.Entity{User: quota.NamedPart("bob")}
	qUserDefault    = quota.Entity{User: quota.DefaultPart()}
	qClientApp      = quota.Entity{ClientID: quota.NamedPart("app")}
	qClientEmpty    = quota.Entity{ClientID: quota.NamedPart("")}
	qClientDefault  = quota.Entity{ClientID: quota.DefaultPart()}
	qAliceApp       = quota.Entity{User: quota.NamedPart("alice"), ClientID: quota.NamedPart("app")}
	qAliceAnyClient = quota.Entity{User: quota.NamedPart("alice"), ClientID: quota.DefaultPart()}
	qIPLocal        = quota.Entity{IP: quota.NamedPart("127.0.0.1")}
	qIPDefault      = quota.Entity{IP: quota.DefaultPart()}
)

// connRate is an ip entity's quotas: connection_creation_rate = n.
func connRate(n float64) map[string]float64 {
	return map[string]float64{quota.ConnectionCreationRate: n}
}

// qAlt is one alteration: set, then the keys removed.
func qAlt(e quota.Entity, set map[string]float64, remove ...string) ClientQuotaAlteration {
	return ClientQuotaAlteration{Entity: e, Set: set, Remove: remove}
}

// alterQuotas is the command of AlterClientQuotas(alts).
func alterQuotas(alts ...ClientQuotaAlteration) *alterClientQuotasCmd {
	return newAlterClientQuotasCmd(alts)
}

func rates(produce, consume float64) map[string]float64 {
	out := map[string]float64{}
	if produce != 0 {
		out[produceRate] = produce
	}
	if consume != 0 {
		out[consumeRate] = consume
	}
	return out
}

// clientQuotaInvariantErr checks the client quota invariants of Image.
func clientQuotaInvariantErr(img *Image) error {
	if img.clientQuotas == nil {
		return errors.New("nil client quota map")
	}
	for e, quotas := range img.clientQuotas {
		if err := validateQuotaEntity(e); err != nil {
			return err
		}
		if len(quotas) == 0 {
			return fmt.Errorf("client quota entity %s kept without a quota", e)
		}
		for key, v := range quotas {
			if err := quota.ValidateKey(e, key); err != nil {
				return fmt.Errorf("%s: %w", e, err)
			}
			if err := quota.ValidateValue(key, v); err != nil {
				return fmt.Errorf("%s: %w", e, err)
			}
		}
	}
	if n := countRequestQuotaEntities(img.clientQuotas); img.requestQuotaEntities != n {
		return fmt.Errorf("requestQuotaEntities %d, but %d user and client-id entities", img.requestQuotaEntities, n)
	}
	return nil
}

// sameQuotasAs compares img's quotas with a plain map, through the
// exported accessors only.
func sameQuotasAs(img *Image, want map[quota.Entity]map[string]float64) error {
	got := img.ClientQuotaEntities()
	if !sameEntitySet(got, slices.Collect(maps.Keys(want))) {
		return fmt.Errorf("ClientQuotaEntities() = %v, want %v", got, slices.Collect(maps.Keys(want)))
	}
	for _, e := range append(got, qUserBob, qClientDefault, quota.Entity{}) {
		if q := img.ClientQuotas(e); !maps.Equal(q, want[e]) || (q == nil) != (want[e] == nil) {
			return fmt.Errorf("ClientQuotas(%s) = %v, want %v", e, q, want[e])
		}
	}
	return nil
}

func sameEntitySet(a, b []quota.Entity) bool {
	return len(a) == len(b) && !slices.ContainsFunc(a, func(e quota.Entity) bool { return !slices.Contains(b, e) })
}

// wantQuotas checks that img holds exactly want: entity → key → value.
func wantQuotas(want map[quota.Entity]map[string]float64) func(*testing.T, *Image) {
	return func(t *testing.T, img *Image) {
		t.Helper()
		if err := sameQuotasAs(img, want); err != nil {
			t.Error(err)
		}
	}
}

// TestValidateClientQuotaAlterations: each rule refuses on its own, with
// ErrInvalidClientQuota; quota's own sentinel stays visible; a command
// carrying the same request is refused by apply with the same error.
func TestValidateClientQuotaAlterations(t *testing.T) {
	longName := strings.Repeat("n", maxQuotaNameBytes)
	tests := []struct {
		name string
		alts []ClientQuotaAlteration
		also error // a second sentinel the error matches, or nil
		ok   bool
	}{
		{name: "one user", alts: []ClientQuotaAlteration{qAlt(qUserAlice, rates(1024, 0))}, ok: true},
		{name: "every entity shape", alts: []ClientQuotaAlteration{
			qAlt(qUserAlice, rates(1, 0)), qAlt(qUserDefault, rates(2, 0)), qAlt(qClientApp, rates(3, 0)),
			qAlt(qClientEmpty, rates(4, 0)), qAlt(qClientDefault, rates(5, 0)), qAlt(qAliceApp, rates(6, 0)),
			qAlt(qAliceAnyClient, rates(7, 0)), qAlt(quota.Entity{User: quota.DefaultPart(), ClientID: quota.DefaultPart()}, rates(8, 0)),
		}, ok: true},
		{name: "remove only", alts: []ClientQuotaAlteration{qAlt(qUserAlice, nil, produceRate, consumeRate)}, ok: true},
		{name: "set one, remove the other", alts: []ClientQuotaAlteration{qAlt(qUserAlice, rates(1, 0), consumeRate)}, ok: true},
		{name: "largest value", alts: []ClientQuotaAlteration{qAlt(qUserAlice, rates(math.MaxInt64, 0))}, ok: true},
		{name: "longest name", alts: []ClientQuotaAlteration{qAlt(quota.Entity{ClientID: quota.NamedPart(longName)}, rates(1, 0))}, ok: true},
		{name: "ip entities", alts: []ClientQuotaAlteration{
			qAlt(qIPLocal, connRate(10)), qAlt(qIPDefault, connRate(0)), qAlt(quota.Entity{IP: quota.NamedPart("fe80::1")}, connRate(1)),
			qAlt(quota.Entity{IP: quota.NamedPart("broker.example.com")}, connRate(quota.UnlimitedConnectionCreationRate)),
		}, ok: true},
		{name: "ip removed", alts: []ClientQuotaAlteration{qAlt(qIPLocal, nil, quota.ConnectionCreationRate)}, ok: true},

		{name: "no alteration", alts: nil},
		{name: "empty list", alts: []ClientQuotaAlteration{}},
		{name: "zero entity", alts: []ClientQuotaAlteration{qAlt(quota.Entity{}, rates(1, 0))}},
		{name: "empty user name", alts: []ClientQuotaAlteration{qAlt(quota.Entity{User: quota.NamedPart("")}, rates(1, 0))}},
		{name: "empty user name with a client id",
			alts: []ClientQuotaAlteration{qAlt(quota.Entity{User: quota.NamedPart(""), ClientID: quota.NamedPart("app")}, rates(1, 0))}},
		{name: "default user with a name",
			alts: []ClientQuotaAlteration{qAlt(quota.Entity{User: quota.Part{Kind: quota.Default, Name: "x"}}, rates(1, 0))}},
		{name: "absent client id with a name",
			alts: []ClientQuotaAlteration{qAlt(quota.Entity{User: quota.NamedPart("alice"), ClientID: quota.Part{Name: "x"}}, rates(1, 0))}},
		{name: "unknown part kind", alts: []ClientQuotaAlteration{qAlt(quota.Entity{User: quota.Part{Kind: 7, Name: "alice"}}, rates(1, 0))}},
		{name: "name not UTF-8", alts: []ClientQuotaAlteration{qAlt(quota.Entity{ClientID: quota.NamedPart("a\xffb")}, rates(1, 0))}},
		{name: "name too long", alts: []ClientQuotaAlteration{qAlt(quota.Entity{ClientID: quota.NamedPart(longName + "n")}, rates(1, 0))}},
		{name: "entity twice", alts: []ClientQuotaAlteration{qAlt(qUserAlice, rates(1, 0)), qAlt(qUserAlice, nil, consumeRate)}},
		{name: "nothing to alter", alts: []ClientQuotaAlteration{qAlt(qUserAlice, nil)}},
		{name: "nothing to alter, empty map and list",
			alts: []ClientQuotaAlteration{{Entity: qUserAlice, Set: map[string]float64{}, Remove: []string{}}}},
		{name: "unknown key set", alts: []ClientQuotaAlteration{qAlt(qUserAlice, map[string]float64{"bogus": 1})}, also: quota.ErrInvalidKey},
		{name: "connection rate on a user", alts: []ClientQuotaAlteration{qAlt(qUserAlice, connRate(50))}, also: quota.ErrInvalidKey},
		{name: "byte rate on an ip", alts: []ClientQuotaAlteration{qAlt(qIPLocal, rates(1, 0))}, also: quota.ErrInvalidKey},
		{name: "byte rate removed from an ip", alts: []ClientQuotaAlteration{qAlt(qIPDefault, nil, produceRate)}, also: quota.ErrInvalidKey},
		{name: "ip with a user", alts: []ClientQuotaAlteration{qAlt(quota.Entity{User: quota.NamedPart("a"), IP: quota.DefaultPart()}, connRate(1))}},
		{name: "ip with a client id", alts: []ClientQuotaAlteration{qAlt(quota.Entity{ClientID: quota.DefaultPart(), IP: quota.NamedPart("::1")}, connRate(1))}},
		{name: "ip not an address or a host", alts: []ClientQuotaAlteration{qAlt(quota.Entity{IP: quota.NamedPart("10.0.0.0/8")}, connRate(1))}},
		{name: "empty ip", alts: []ClientQuotaAlteration{qAlt(quota.Entity{IP: quota.NamedPart("")}, connRate(1))}},
		{name: "default ip with a name", alts: []ClientQuotaAlteration{qAlt(quota.Entity{IP: quota.Part{Kind: quota.Default, Name: "x"}}, connRate(1))}},
		{name: "fractional connection rate", alts: []ClientQuotaAlteration{qAlt(qIPLocal, connRate(1.5))}, also: quota.ErrInvalidValue},
		{name: "negative connection rate", alts: []ClientQuotaAlteration{qAlt(qIPLocal, connRate(-1))}, also: quota.ErrInvalidValue},
		{name: "unknown key removed", alts: []ClientQuotaAlteration{qAlt(qUserAlice, nil, "bogus")}, also: quota.ErrInvalidKey},
		{name: "zero value", alts: []ClientQuotaAlteration{qAlt(qUserAlice, map[string]float64{produceRate: 0})}, also: quota.ErrInvalidValue},
		{name: "negative value", alts: []ClientQuotaAlteration{qAlt(qUserAlice, rates(-1, 0))}, also: quota.ErrInvalidValue},
		{name: "fractional value", alts: []ClientQuotaAlteration{qAlt(qUserAlice, rates(1.5, 0))}, also: quota.ErrInvalidValue},
		{name: "NaN", alts: []ClientQuotaAlteration{qAlt(qUserAlice, rates(math.NaN(), 0))}, also: quota.ErrInvalidValue},
		{name: "infinite value", alts: []ClientQuotaAlteration{qAlt(qUserAlice, rates(math.Inf(1), 0))}, also: quota.ErrInvalidValue},
		{name: "value too large", alts: []ClientQuotaAlteration{qAlt(qUserAlice, rates(1<<64, 0))}, also: quota.ErrInvalidValue},
		{name: "set and removed", alts: []ClientQuotaAlteration{qAlt(qUserAlice, rates(1, 0), produceRate)}},
		{name: "removed twice", alts: []ClientQuotaAlteration{qAlt(qUserAlice, nil, consumeRate, consumeRate)}},
		// All or nothing: one bad alteration refuses the good ones.
		{name: "a good alteration and a bad one",
			alts: []ClientQuotaAlteration{qAlt(qUserBob, rates(1, 0)), qAlt(qClientApp, rates(0, 2.5))}, also: quota.ErrInvalidValue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := validateClientQuotaAlterations(tt.alts)
			if tt.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidClientQuota) {
				t.Fatalf("err = %v, want ErrInvalidClientQuota", err)
			}
			if tt.also != nil && !errors.Is(err, tt.also) {
				t.Errorf("err = %v, want it to match %v too", err, tt.also)
			}
			// apply runs the same checks: the log refuses what the Store refuses.
			applyChecked(t, emptyImage(), alterQuotas(tt.alts...), ErrInvalidClientQuota)
		})
	}
}

// TestValidateClientQuotaMessages: a refusal names the entity, as Kafka's
// tools print it, and the key.
func TestValidateClientQuotaMessages(t *testing.T) {
	for _, tc := range []struct {
		alt  ClientQuotaAlteration
		want []string
	}{
		{qAlt(qAliceAnyClient, map[string]float64{"bogus": 1}), []string{"user=alice, client-id=<default>", `"bogus"`}},
		{qAlt(qClientApp, rates(0, -1)), []string{"client-id=app", consumeRate}},
		{qAlt(qUserDefault, rates(1, 0), produceRate), []string{"user=<default>", produceRate}},
	} {
		err := validateClientQuotaAlterations([]ClientQuotaAlteration{tc.alt})
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: %v, want a message naming %q", tc.alt, err, w)
			}
		}
	}
}

// TestDecodedClientQuotaCommandRefusals: what only a command read from a
// log can hold (the Store cannot write it) is refused too.
func TestDecodedClientQuotaCommandRefusals(t *testing.T) {
	named := func(name string) wireQuotaPart { return wireQuotaPart{Kind: wireQuotaNamed, Name: name} }
	absent := wireQuotaPart{Kind: wireQuotaAbsent}
	one := []wireQuotaValue{{Key: produceRate, Value: 1}}
	for name, cmd := range map[string]*alterClientQuotasCmd{
		"no alterations":        {},
		"unknown user kind":     {Alterations: []wireQuotaAlteration{{Entity: wireQuotaEntity{User: wireQuotaPart{Kind: "everyone"}, ClientID: absent}, Set: one}}},
		"unknown client kind":   {Alterations: []wireQuotaAlteration{{Entity: wireQuotaEntity{User: named("a"), ClientID: wireQuotaPart{Kind: ""}}, Set: one}}},
		"kind in capitals":      {Alterations: []wireQuotaAlteration{{Entity: wireQuotaEntity{User: wireQuotaPart{Kind: "NAMED", Name: "a"}, ClientID: absent}, Set: one}}},
		"key set twice":         {Alterations: []wireQuotaAlteration{{Entity: wireQuotaEntity{User: named("a"), ClientID: absent}, Set: []wireQuotaValue{{produceRate, 1}, {produceRate, 2}}}}},
		"same entity, two ways": {Alterations: []wireQuotaAlteration{{Entity: wireQuotaEntity{User: named("a"), ClientID: absent}, Set: one}, {Entity: wireQuotaEntity{User: named("a"), ClientID: absent}, Remove: []string{consumeRate}}}},
	} {
		if _, err := applyCommand(emptyImage(), cmd, 1); !errors.Is(err, ErrInvalidClientQuota) {
			t.Errorf("%s: %v, want ErrInvalidClientQuota", name, err)
		}
	}
}

func TestApplyClientQuotas(t *testing.T) {
	alice := func(t *testing.T) *Image { return build(t, alterQuotas(qAlt(qUserAlice, rates(1024, 2048)))) }
	type want = map[quota.Entity]map[string]float64
	tests := []applyCase{
		{name: "set on a new entity", cmd: alterQuotas(qAlt(qUserAlice, rates(1024, 0))),
			check: wantQuotas(want{qUserAlice: rates(1024, 0)})},
		{name: "set a second key keeps the first", setup: alice, cmd: alterQuotas(qAlt(qUserAlice, rates(0, 4096))),
			check: wantQuotas(want{qUserAlice: rates(1024, 4096)})},
		{name: "set replaces a value", setup: alice, cmd: alterQuotas(qAlt(qUserAlice, rates(1, 0))),
			check: wantQuotas(want{qUserAlice: rates(1, 2048)})},
		{name: "remove one key", setup: alice, cmd: alterQuotas(qAlt(qUserAlice, nil, produceRate)),
			check: wantQuotas(want{qUserAlice: rates(0, 2048)})},
		{name: "remove the last key removes the entity", setup: alice, cmd: alterQuotas(qAlt(qUserAlice, nil, produceRate, consumeRate)),
			check: func(t *testing.T, img *Image) {
				wantQuotas(nil)(t, img)
				if len(img.clientQuotas) != 0 {
					t.Errorf("clientQuotas = %v, want empty", img.clientQuotas)
				}
			}},
		{name: "remove a key the entity lacks", setup: func(t *testing.T) *Image {
			return build(t, alterQuotas(qAlt(qUserAlice, rates(1024, 0))))
		}, cmd: alterQuotas(qAlt(qUserAlice, nil, consumeRate)),
			check: wantQuotas(want{qUserAlice: rates(1024, 0)})},
		{name: "remove from an entity without quotas", setup: alice, cmd: alterQuotas(qAlt(qUserBob, nil, consumeRate)),
			check: wantQuotas(want{qUserAlice: rates(1024, 2048)})},
		{name: "set one key and remove the other", setup: alice, cmd: alterQuotas(qAlt(qUserAlice, rates(7, 0), consumeRate)),
			check: wantQuotas(want{qUserAlice: rates(7, 0)})},
		{name: "several entities at once", setup: alice,
			cmd:   alterQuotas(qAlt(qClientDefault, rates(0, 10)), qAlt(qUserAlice, nil, produceRate), qAlt(qAliceApp, rates(5, 0))),
			check: wantQuotas(want{qUserAlice: rates(0, 2048), qClientDefault: rates(0, 10), qAliceApp: rates(5, 0)})},
		{name: "a named empty client id is not the default", setup: alice,
			cmd:   alterQuotas(qAlt(qClientEmpty, rates(3, 0)), qAlt(qClientDefault, rates(4, 0))),
			check: wantQuotas(want{qUserAlice: rates(1024, 2048), qClientEmpty: rates(3, 0), qClientDefault: rates(4, 0)})},
		{name: "names are not folded", setup: alice, cmd: alterQuotas(qAlt(quota.Entity{User: quota.NamedPart("Alice")}, rates(9, 0))),
			check: wantQuotas(want{qUserAlice: rates(1024, 2048), {User: quota.NamedPart("Alice")}: rates(9, 0)})},
		// All or nothing (applyChecked checks that the image is unchanged).
		{name: "a valid alteration with an invalid one", setup: alice,
			cmd: alterQuotas(qAlt(qUserBob, rates(1, 0)), qAlt(qUserAlice, nil, "bogus")), wantErr: ErrInvalidClientQuota},
	}
	runApplyCases(t, tests)
}

// TestClientQuotaImagesAreCopyOnWrite: an image holds the quotas it was
// built with, whatever is applied to it later or to a sibling, and
// whatever the caller does to the maps it proposed.
func TestClientQuotaImagesAreCopyOnWrite(t *testing.T) {
	type want = map[quota.Entity]map[string]float64
	callers := rates(1024, 2048)
	v1 := build(t, alterQuotas(qAlt(qUserAlice, callers)))
	callers[produceRate] = 1 // the caller's map stays the caller's
	v2 := then(t, v1, alterQuotas(qAlt(qUserAlice, rates(4096, 0))))
	v3 := then(t, v2, alterQuotas(qAlt(qUserAlice, nil, consumeRate), qAlt(qClientApp, rates(0, 7))))
	v4 := then(t, v3, alterQuotas(qAlt(qUserAlice, nil, produceRate)))
	sibling := then(t, v1, alterQuotas(qAlt(qUserBob, rates(3, 0))))
	for name, tc := range map[string]struct {
		img  *Image
		want want
	}{
		"v1":      {v1, want{qUserAlice: rates(1024, 2048)}},
		"v2":      {v2, want{qUserAlice: rates(4096, 2048)}},
		"v3":      {v3, want{qUserAlice: rates(4096, 0), qClientApp: rates(0, 7)}},
		"v4":      {v4, want{qClientApp: rates(0, 7)}},
		"sibling": {sibling, want{qUserAlice: rates(1024, 2048), qUserBob: rates(3, 0)}},
	} {
		if err := sameQuotasAs(tc.img, tc.want); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestClientQuotaEntitiesOrder: by user part (absent, default, names
// ascending), then by client-id part the same way; whatever order they
// were set in.
func TestClientQuotaEntitiesOrder(t *testing.T) {
	absent, def := quota.Part{}, quota.DefaultPart()
	a, b, empty := quota.NamedPart("a"), quota.NamedPart("b"), quota.NamedPart("")
	want := []quota.Entity{
		{IP: def},
		{IP: quota.NamedPart("10.0.0.1")},
		{IP: quota.NamedPart("127.0.0.1")},
		{User: absent, ClientID: def},
		{User: absent, ClientID: empty},
		{User: absent, ClientID: a},
		{User: absent, ClientID: b},
		{User: def, ClientID: absent},
		{User: def, ClientID: def},
		{User: def, ClientID: a},
		{User: a, ClientID: absent},
		{User: a, ClientID: def},
		{User: a, ClientID: empty},
		{User: a, ClientID: b},
		{User: b, ClientID: absent},
		{User: b, ClientID: a},
	}
	quotasOf := func(e quota.Entity, n float64) map[string]float64 {
		if e.IsIP() {
			return connRate(n)
		}
		return rates(n, 0)
	}
	for _, order := range [][]int{
		{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
		{15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0},
		{6, 0, 14, 11, 3, 9, 15, 1, 12, 4, 8, 2, 13, 10, 5, 7},
	} {
		img := emptyImage()
		for _, i := range order {
			img = then(t, img, alterQuotas(qAlt(want[i], quotasOf(want[i], float64(i+1)))))
		}
		if got := img.ClientQuotaEntities(); !reflect.DeepEqual(got, want) {
			t.Errorf("set in order %v: ClientQuotaEntities() =\n%v\nwant\n%v", order, got, want)
		}
		cmd := newAlterClientQuotasCmd(func() []ClientQuotaAlteration {
			var alts []ClientQuotaAlteration
			for _, i := range order {
				alts = append(alts, qAlt(want[i], quotasOf(want[i], 1)))
			}
			return alts
		}())
		for i, w := range cmd.Alterations {
			if e, err := w.Entity.entity(); err != nil || e != want[i] {
				t.Errorf("command from order %v: alteration %d is %v (%v), want %v", order, i, e, err, want[i])
			}
		}
	}
	if got := emptyImage().ClientQuotaEntities(); got != nil {
		t.Errorf("no quota: ClientQuotaEntities() = %v, want nil", got)
	}
}

// TestClientQuotaCommandIsDeterministic: the same request makes the same
// log entry, whatever the order of its entities and keys.
func TestClientQuotaCommandIsDeterministic(t *testing.T) {
	one, err := encodeCommand(alterQuotas(
		qAlt(qUserAlice, rates(1, 2)), qAlt(qClientDefault, nil, produceRate, consumeRate), qAlt(qAliceApp, rates(3, 0), consumeRate)))
	if err != nil {
		t.Fatal(err)
	}
	other, err := encodeCommand(alterQuotas(
		qAlt(qAliceApp, rates(3, 0), consumeRate), qAlt(qClientDefault, nil, consumeRate, produceRate), qAlt(qUserAlice, rates(1, 2))))
	if err != nil {
		t.Fatal(err)
	}
	if string(one) != string(other) {
		t.Errorf("two orders of one request:\n%s\n%s", one, other)
	}
}

// TestClientQuotaCommandWireForm pins the log form of the command: logs
// written today must decode, field for field, forever.
func TestClientQuotaCommandWireForm(t *testing.T) {
	const wire = "\x01{\"alter_client_quotas\":{\"alterations\":[" +
		"{\"entity\":{\"user\":{\"kind\":\"absent\"},\"client_id\":{\"kind\":\"named\"}},\"set\":[{\"key\":\"consumer_byte_rate\",\"value\":2048}],\"remove\":null}," +
		"{\"entity\":{\"user\":{\"kind\":\"default\"},\"client_id\":{\"kind\":\"absent\"}},\"set\":null,\"remove\":[\"producer_byte_rate\"]}," +
		"{\"entity\":{\"user\":{\"kind\":\"named\",\"name\":\"alice\"},\"client_id\":{\"kind\":\"default\"}}," +
		"\"set\":[{\"key\":\"consumer_byte_rate\",\"value\":1000000},{\"key\":\"producer_byte_rate\",\"value\":1024}],\"remove\":null}]}}"
	cmd := alterQuotas(
		qAlt(qAliceAnyClient, rates(1024, 1e6)),
		qAlt(qUserDefault, nil, produceRate),
		qAlt(qClientEmpty, rates(0, 2048)))
	checkPinnedWire(t, cmd, wire,
		"\x01{\"alter_client_quotas\":{\"alterations\":[],\"extra\":1}}",
		"\x01{\"alter_client_quotas\":{\"alterations\":[{\"entity\":\"user=alice\"}]}}",
		"\x01{\"alter_client_quotas\":{\"alterations\":[{\"entity\":{\"user\":{\"kind\":\"named\",\"name\":\"a\",\"x\":1}}}]}}",
		"\x01{\"alter_client_quotas\":{\"alterations\":[]},\"set_broker_configs\":{}}",
	)
}

// TestIPConnectionRates: the image hands the ip entities' rates out by
// part, and ip entities alone do not turn request metering on.
func TestIPConnectionRates(t *testing.T) {
	img := build(t, alterQuotas(qAlt(qIPLocal, connRate(5)), qAlt(qIPDefault, connRate(0))))
	want := map[quota.Part]int{quota.NamedPart("127.0.0.1"): 5, quota.DefaultPart(): 0}
	if got := img.IPConnectionRates(); !reflect.DeepEqual(got, want) {
		t.Errorf("IPConnectionRates() = %v, want %v", got, want)
	}
	if img.HasClientQuotas() {
		t.Error("HasClientQuotas() with ip entities only, want false")
	}
	img = then(t, img, alterQuotas(qAlt(qClientApp, rates(1, 0))))
	if !img.HasClientQuotas() {
		t.Error("HasClientQuotas() with a client id's quota, want true")
	}
	img = then(t, img, alterQuotas(qAlt(qIPLocal, nil, quota.ConnectionCreationRate), qAlt(qIPDefault, nil, quota.ConnectionCreationRate)))
	if got := img.IPConnectionRates(); got != nil {
		t.Errorf("after removing them: IPConnectionRates() = %v, want nil", got)
	}
	if err := clientQuotaInvariantErr(img); err != nil {
		t.Fatal(err)
	}
}

// TestIPQuotaCommandWireForm pins the log form of an ip entity's change:
// the ip part is a field of its own, absent from the other entities.
func TestIPQuotaCommandWireForm(t *testing.T) {
	const wire = "\x01{\"alter_client_quotas\":{\"alterations\":[" +
		"{\"entity\":{\"user\":{\"kind\":\"absent\"},\"client_id\":{\"kind\":\"absent\"},\"ip\":{\"kind\":\"default\"}},\"set\":[{\"key\":\"connection_creation_rate\",\"value\":0}],\"remove\":null}," +
		"{\"entity\":{\"user\":{\"kind\":\"absent\"},\"client_id\":{\"kind\":\"absent\"},\"ip\":{\"kind\":\"named\",\"name\":\"127.0.0.1\"}},\"set\":null,\"remove\":[\"connection_creation_rate\"]}]}}"
	checkPinnedWire(t, alterQuotas(qAlt(qIPLocal, nil, quota.ConnectionCreationRate), qAlt(qIPDefault, connRate(0))), wire,
		"\x01{\"alter_client_quotas\":{\"alterations\":[{\"entity\":{\"user\":{\"kind\":\"absent\"},\"client_id\":{\"kind\":\"absent\"},\"ip\":\"127.0.0.1\"},\"set\":[{\"key\":\"connection_creation_rate\",\"value\":0}]}]}}",
	)
}

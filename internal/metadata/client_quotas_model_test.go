package metadata

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"
	"unicode/utf8"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/quota"
)

// The parts, keys and values genQuotaCommand draws from: a few valid
// ones, so that entities and keys repeat, and one of each kind of
// invalid one.
var (
	validQuotaParts = []wireQuotaPart{
		{Kind: wireQuotaAbsent}, {Kind: wireQuotaAbsent}, {Kind: wireQuotaDefault},
		{Kind: wireQuotaNamed, Name: "alice"}, {Kind: wireQuotaNamed, Name: "bob"},
	}
	invalidQuotaParts = []wireQuotaPart{
		{Kind: wireQuotaNamed, Name: ""}, // invalid for a user only
		{Kind: wireQuotaNamed, Name: "a\xff"},
		{Kind: wireQuotaDefault, Name: "x"},
		{Kind: wireQuotaAbsent, Name: "x"},
		{Kind: "everyone"},
	}
	validQuotaValues   = []float64{1024, 2048, 1, 1 << 62, math.MaxInt64}
	invalidQuotaValues = []float64{0, -1, 1.5, 1 << 64}
	invalidQuotaKeys   = []string{"connection_creation_rate", "bogus", ""}
	// The ip entities' parts and rates, drawn the same way.
	validIPParts = []wireQuotaPart{
		{Kind: wireQuotaDefault}, {Kind: wireQuotaNamed, Name: "127.0.0.1"}, {Kind: wireQuotaNamed, Name: "broker.example"},
	}
	invalidIPParts = []wireQuotaPart{
		{Kind: wireQuotaNamed, Name: ""}, {Kind: wireQuotaNamed, Name: "10.0.0.0/8"}, {Kind: wireQuotaDefault, Name: "x"},
	}
	validConnRates   = []float64{0, 5, math.MaxInt32}
	invalidConnRates = []float64{-1, 1.5, math.MaxInt32 + 1}
)

// genIPAlteration draws an ip entity's alteration, breaking one rule one
// time in eight: a bad name or rate, a user or client-id part, a user's key.
func genIPAlteration(t *rapid.T) wireQuotaAlteration {
	absent := wireQuotaPart{Kind: wireQuotaAbsent}
	ip := rapid.SampledFrom(validIPParts).Draw(t, "ip")
	a := wireQuotaAlteration{Entity: wireQuotaEntity{User: absent, ClientID: absent, IP: &ip}}
	if rapid.Bool().Draw(t, "remove") {
		a.Remove = []string{quota.ConnectionCreationRate}
	} else {
		a.Set = []wireQuotaValue{{Key: quota.ConnectionCreationRate, Value: rapid.SampledFrom(validConnRates).Draw(t, "rate")}}
	}
	if rapid.IntRange(0, 7).Draw(t, "break") > 0 {
		return a
	}
	switch rapid.IntRange(0, 3).Draw(t, "how") {
	case 0:
		bad := rapid.SampledFrom(invalidIPParts).Draw(t, "ip")
		a.Entity.IP = &bad
	case 1:
		a.Set = []wireQuotaValue{{Key: quota.ConnectionCreationRate, Value: rapid.SampledFrom(invalidConnRates).Draw(t, "rate")}}
		a.Remove = nil
	case 2:
		a.Entity.User = rapid.SampledFrom(validQuotaParts[2:]).Draw(t, "user")
	default:
		a.Set = append(a.Set, wireQuotaValue{Key: produceRate, Value: 1})
	}
	return a
}

// genQuotaPart draws a valid part nine times in ten.
func genQuotaPart() *rapid.Generator[wireQuotaPart] {
	return rapid.Custom(func(t *rapid.T) wireQuotaPart {
		if rapid.IntRange(0, 9).Draw(t, "invalid") == 0 {
			return rapid.SampledFrom(invalidQuotaParts).Draw(t, "part")
		}
		return rapid.SampledFrom(validQuotaParts).Draw(t, "part")
	})
}

// genQuotaAlteration draws an alteration that leaves, sets or removes
// each enforced key, and one time in eight breaks one more rule: a bad
// key, a bad value, a key named twice.
func genQuotaAlteration() *rapid.Generator[wireQuotaAlteration] {
	return rapid.Custom(func(t *rapid.T) wireQuotaAlteration {
		if rapid.IntRange(0, 3).Draw(t, "ip entity") == 0 {
			return genIPAlteration(t)
		}
		a := wireQuotaAlteration{Entity: wireQuotaEntity{User: genQuotaPart().Draw(t, "user"), ClientID: genQuotaPart().Draw(t, "client")}}
		for _, key := range []string{consumeRate, produceRate} {
			switch rapid.IntRange(0, 2).Draw(t, key) {
			case 1:
				a.Set = append(a.Set, wireQuotaValue{Key: key, Value: rapid.SampledFrom(validQuotaValues).Draw(t, "value")})
			case 2:
				a.Remove = append(a.Remove, key)
			}
		}
		if rapid.IntRange(0, 7).Draw(t, "break") > 0 {
			return a
		}
		key := rapid.SampledFrom([]string{consumeRate, produceRate}).Draw(t, "twice")
		switch rapid.IntRange(0, 4).Draw(t, "how") {
		case 0:
			a.Set = append(a.Set, wireQuotaValue{Key: rapid.SampledFrom(invalidQuotaKeys).Draw(t, "key"), Value: 1})
		case 1:
			a.Set = append(a.Set, wireQuotaValue{Key: key, Value: rapid.SampledFrom(invalidQuotaValues).Draw(t, "value")})
		case 2:
			a.Remove = append(a.Remove, rapid.SampledFrom(invalidQuotaKeys).Draw(t, "key"))
		case 3:
			a.Set = append(a.Set, wireQuotaValue{Key: key, Value: 1})
		default:
			a.Remove = append(a.Remove, key)
		}
		return a
	})
}

// genQuotaCommand draws alter commands over a few entities and keys, so
// that replacements, removals of what exists, entities leaving and every
// refusal happen.
func genQuotaCommand() *rapid.Generator[*alterClientQuotasCmd] {
	return rapid.Custom(func(t *rapid.T) *alterClientQuotasCmd {
		if rapid.IntRange(0, 19).Draw(t, "empty") == 0 {
			return &alterClientQuotasCmd{Alterations: rapid.SliceOfN(genQuotaAlteration(), 0, 0).Draw(t, "alterations")}
		}
		return &alterClientQuotasCmd{Alterations: rapid.SliceOfN(genQuotaAlteration(), 1, 3).Draw(t, "alterations")}
	})
}

// normalizeQuotaCommand replaces each byte of a name that is not UTF-8
// with U+FFFD, as JSON does; that is why such names are refused before
// they reach the log.
func normalizeQuotaCommand(c *alterClientQuotasCmd) *alterClientQuotasCmd {
	out := &alterClientQuotasCmd{Alterations: c.Alterations}
	if c.Alterations != nil {
		out.Alterations = make([]wireQuotaAlteration, len(c.Alterations))
	}
	for i, a := range c.Alterations {
		a.Entity.User.Name = string([]rune(a.Entity.User.Name))
		a.Entity.ClientID.Name = string([]rune(a.Entity.ClientID.Name))
		out.Alterations[i] = a
	}
	return out
}

// quotaModel is the naive model of the image's client quotas.
type quotaModel map[quota.Entity]map[string]float64

// modelPart is the model's own reading of a wire part; ok is false for a
// part the rules refuse.
func modelPart(w wireQuotaPart, isUser bool) (quota.Part, bool) {
	switch w.Kind {
	case "absent":
		return quota.Part{}, w.Name == ""
	case "default":
		return quota.DefaultPart(), w.Name == ""
	case "named":
		return quota.NamedPart(w.Name), utf8.ValidString(w.Name) && !(isUser && w.Name == "")
	}
	return quota.Part{}, false
}

// modelEntity is the model's reading of a wire entity; ok is false when
// a part is refused (an ip part must be an address or a host name: the
// generator's invalid ones are neither).
func modelEntity(w wireQuotaEntity) (quota.Entity, bool) {
	user, okUser := modelPart(w.User, true)
	client, okClient := modelPart(w.ClientID, false)
	e := quota.Entity{User: user, ClientID: client}
	if w.IP == nil {
		return e, okUser && okClient
	}
	ip, okIP := modelPart(*w.IP, true)
	e.IP = ip
	return e, okUser && okClient && okIP && !slices.Contains(invalidIPParts, *w.IP)
}

// broken reports whether c breaks a rule: then it must be refused whole.
func (quotaModel) broken(c *alterClientQuotasCmd) bool {
	if len(c.Alterations) == 0 {
		return true
	}
	seen := map[quota.Entity]bool{}
	for _, a := range c.Alterations {
		e, ok := modelEntity(a.Entity)
		isIP := e.IP.Kind != quota.Absent
		client := e.User.Kind != quota.Absent || e.ClientID.Kind != quota.Absent
		if !ok || !isIP && !client || isIP && client || seen[e] || len(a.Set)+len(a.Remove) == 0 {
			return true
		}
		seen[e] = true
		named := map[string]int{}
		for _, v := range a.Set {
			named[v.Key]++
			if isIP && (v.Value < 0 || v.Value != math.Trunc(v.Value) || v.Value > math.MaxInt32) {
				return true
			}
			if !isIP && (v.Value < 1 || v.Value != math.Trunc(v.Value) || v.Value > math.MaxInt64) {
				return true
			}
		}
		for _, key := range a.Remove {
			named[key]++
		}
		for key, n := range named {
			if n > 1 || isIP && key != quota.ConnectionCreationRate || !isIP && key != produceRate && key != consumeRate {
				return true
			}
		}
	}
	return false
}

func (m quotaModel) apply(c *alterClientQuotasCmd) quotaModel {
	next := quotaModel{}
	for e, q := range m {
		next[e] = maps.Clone(q)
	}
	for _, a := range c.Alterations {
		e, _ := modelEntity(a.Entity)
		if next[e] == nil {
			next[e] = map[string]float64{}
		}
		for _, key := range a.Remove {
			delete(next[e], key)
		}
		for _, v := range a.Set {
			next[e][v.Key] = v.Value
		}
		if len(next[e]) == 0 {
			delete(next, e)
		}
	}
	return next
}

// TestClientQuotasAgainstModel applies random alter sequences to an image
// and to a plain map: a command is applied iff it breaks no rule, refused
// with ErrInvalidClientQuota otherwise, and the two always hold the same
// quotas, also after a snapshot round trip.
func TestClientQuotasAgainstModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		img, model := emptyImage(), quotaModel{}
		outcomes := map[string]int{}
		for i := range rapid.IntRange(1, 40).Draw(t, "n") {
			cmd := genQuotaCommand().Draw(t, fmt.Sprintf("cmd%d", i))
			broken := model.broken(cmd)
			next, err := applyCommand(img, cmd, uint64(i+1))
			switch {
			case !broken && err != nil:
				t.Fatalf("%#v refused: %v", cmd, err)
			case broken && err == nil:
				t.Fatalf("%#v applied, but it breaks a rule", cmd)
			case err != nil:
				if !errors.Is(err, ErrInvalidClientQuota) || next != nil {
					t.Fatalf("%#v refused with %v (image %v), want ErrInvalidClientQuota and no image", cmd, err, next)
				}
				outcomes["refused"]++
				continue
			}
			outcomes["applied"]++
			model = model.apply(cmd)
			img = next
			if err := clientQuotaInvariantErr(img); err != nil {
				t.Fatal(err)
			}
			if err := sameQuotasAs(img, model); err != nil {
				t.Fatal(err)
			}
			restored, err := snapshotRoundTrip(img)
			if err != nil {
				t.Fatal(err)
			}
			if err := sameQuotasAs(restored, model); err != nil {
				t.Fatalf("after a snapshot round trip: %v", err)
			}
		}
		t.Logf("outcomes: %v", outcomes)
	})
}

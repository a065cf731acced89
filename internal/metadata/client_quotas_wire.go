package metadata

import (
	"fmt"
	"maps"
	"slices"

	"github.com/strata-broker/strata/internal/quota"
)

// How commands and snapshots name the kind of a quota entity's part: by
// word, so that renumbering quota.PartKind never changes what a log or a
// snapshot means.
const (
	wireQuotaAbsent  = "absent"
	wireQuotaNamed   = "named"
	wireQuotaDefault = "default"
)

// wireQuotaPart is a quota.Part as commands and snapshots store it. Name
// is set only for a named part ("" is a valid client id).
type wireQuotaPart struct {
	Kind string `json:"kind"`
	Name string `json:"name,omitempty"`
}

// wireQuotaEntity is a quota.Entity as commands and snapshots store it:
// one explicit part per type, never a string to parse. IP is nil for an
// entity without an ip part, so that the entries written before ip
// quotas existed read as they were written.
type wireQuotaEntity struct {
	User     wireQuotaPart  `json:"user"`
	ClientID wireQuotaPart  `json:"client_id"`
	IP       *wireQuotaPart `json:"ip,omitempty"`
}

// wireQuotaValue is one quota key and its value.
type wireQuotaValue struct {
	Key   string  `json:"key"`
	Value float64 `json:"value"`
}

// wireQuotaAlteration is a ClientQuotaAlteration in a command; Set is
// ascending by key, Remove ascending.
type wireQuotaAlteration struct {
	Entity wireQuotaEntity  `json:"entity"`
	Set    []wireQuotaValue `json:"set"`
	Remove []string         `json:"remove"`
}

// wireClientQuotas is one entity's quotas in a snapshot, ascending by key.
type wireClientQuotas struct {
	Entity wireQuotaEntity  `json:"entity"`
	Quotas []wireQuotaValue `json:"quotas"`
}

func toWireQuotaPart(p quota.Part) wireQuotaPart {
	switch p.Kind {
	case quota.Absent:
		return wireQuotaPart{Kind: wireQuotaAbsent, Name: p.Name}
	case quota.Named:
		return wireQuotaPart{Kind: wireQuotaNamed, Name: p.Name}
	case quota.Default:
		return wireQuotaPart{Kind: wireQuotaDefault, Name: p.Name}
	}
	// Refused when read back (part): validation reports it.
	return wireQuotaPart{Kind: fmt.Sprintf("kind %d", p.Kind), Name: p.Name}
}

// part converts w back; a kind it does not know is refused. The name is
// kept whatever the kind, for validateQuotaPart to judge.
func (w wireQuotaPart) part(typ string) (quota.Part, error) {
	switch w.Kind {
	case wireQuotaAbsent:
		return quota.Part{Kind: quota.Absent, Name: w.Name}, nil
	case wireQuotaNamed:
		return quota.Part{Kind: quota.Named, Name: w.Name}, nil
	case wireQuotaDefault:
		return quota.Part{Kind: quota.Default, Name: w.Name}, nil
	}
	return quota.Part{}, fmt.Errorf("%w: %s part of unknown kind %q", ErrInvalidClientQuota, typ, w.Kind)
}

func toWireQuotaEntity(e quota.Entity) wireQuotaEntity {
	w := wireQuotaEntity{User: toWireQuotaPart(e.User), ClientID: toWireQuotaPart(e.ClientID)}
	if e.IP.Kind != quota.Absent || e.IP.Name != "" {
		ip := toWireQuotaPart(e.IP)
		w.IP = &ip
	}
	return w
}

func (w wireQuotaEntity) entity() (quota.Entity, error) {
	user, err := w.User.part(quota.TypeUser)
	if err != nil {
		return quota.Entity{}, err
	}
	clientID, err := w.ClientID.part(quota.TypeClientID)
	if err != nil {
		return quota.Entity{}, err
	}
	e := quota.Entity{User: user, ClientID: clientID}
	if w.IP != nil {
		if e.IP, err = w.IP.part(quota.TypeIP); err != nil {
			return quota.Entity{}, err
		}
	}
	return e, nil
}

// toWireQuotaValues lists quotas ascending by key; nil for none.
func toWireQuotaValues(quotas map[string]float64) []wireQuotaValue {
	var out []wireQuotaValue
	for _, key := range slices.Sorted(maps.Keys(quotas)) {
		out = append(out, wireQuotaValue{Key: key, Value: quotas[key]})
	}
	return out
}

// quotaValues converts ws back, refusing a key given twice (a map would
// keep one of them silently); nil for none.
func quotaValues(e quota.Entity, ws []wireQuotaValue) (map[string]float64, error) {
	if len(ws) == 0 {
		return nil, nil
	}
	out := make(map[string]float64, len(ws))
	for _, w := range ws {
		if _, dup := out[w.Key]; dup {
			return nil, fmt.Errorf("%w: %s: %s is set twice", ErrInvalidClientQuota, e, w.Key)
		}
		out[w.Key] = w.Value
	}
	return out, nil
}

// alteration converts w back; validateClientQuotaAlteration judges the result.
func (w wireQuotaAlteration) alteration() (ClientQuotaAlteration, error) {
	e, err := w.Entity.entity()
	if err != nil {
		return ClientQuotaAlteration{}, err
	}
	set, err := quotaValues(e, w.Set)
	if err != nil {
		return ClientQuotaAlteration{}, err
	}
	return ClientQuotaAlteration{Entity: e, Set: set, Remove: w.Remove}, nil
}

// encodeClientQuotas returns img's quotas in snapshot order: entities as
// ClientQuotaEntities lists them, keys ascending.
func encodeClientQuotas(img *Image) []wireClientQuotas {
	var out []wireClientQuotas
	for _, e := range img.ClientQuotaEntities() {
		out = append(out, wireClientQuotas{Entity: toWireQuotaEntity(e), Quotas: toWireQuotaValues(img.clientQuotas[e])})
	}
	return out
}

// restoreClientQuotas adds a snapshot's quotas to img, checking every
// invariant of Image that concerns them: a snapshot is a gateway.
func restoreClientQuotas(img *Image, entries []wireClientQuotas) error {
	for _, w := range entries {
		a, err := wireQuotaAlteration{Entity: w.Entity, Set: w.Quotas}.alteration()
		if err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		if len(a.Set) == 0 {
			return fmt.Errorf("snapshot: %w: client quota entity %s has no quota", ErrInvalidCommand, a.Entity)
		}
		if err := validateClientQuotaAlteration(a); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		if _, dup := img.clientQuotas[a.Entity]; dup {
			return fmt.Errorf("snapshot: %w: client quota entity %s twice", ErrInvalidCommand, a.Entity)
		}
		img.clientQuotas[a.Entity] = a.Set
	}
	img.requestQuotaEntities = countRequestQuotaEntities(img.clientQuotas)
	return nil
}

package metadata

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/strata-broker/strata/internal/quota"
)

// maxQuotaNameBytes bounds the name of a user or client id in a quota
// entity: Kafka's STRING, whose length is an int16, cannot carry more.
const maxQuotaNameBytes = math.MaxInt16

// ClientQuotaAlteration is one entity's change: keys set to values, keys removed.
type ClientQuotaAlteration struct {
	Entity quota.Entity
	Set    map[string]float64
	Remove []string
}

// ClientQuotas returns the quotas set on e, by key; nil when none. The map
// is the image's: callers never write it.
func (img *Image) ClientQuotas(e quota.Entity) map[string]float64 {
	return img.clientQuotas[e]
}

// HasClientQuotas reports whether any user or client-id entity has a
// quota: without one, no request needs metering (ip entities bound new
// connections, not requests).
func (img *Image) HasClientQuotas() bool { return img.requestQuotaEntities > 0 }

// ClientQuotaEntities returns every entity with at least one quota, in a
// fixed order (by user part: absent, default, then names ascending; then
// the same by client-id part, then by ip part); nil when there is none.
func (img *Image) ClientQuotaEntities() []quota.Entity {
	return slices.SortedFunc(maps.Keys(img.clientQuotas), compareQuotaEntities)
}

// compareQuotaEntities orders entities by user part, then client-id part,
// then ip part (compareQuotaParts).
func compareQuotaEntities(a, b quota.Entity) int {
	return cmp.Or(compareQuotaParts(a.User, b.User), compareQuotaParts(a.ClientID, b.ClientID),
		compareQuotaParts(a.IP, b.IP))
}

// compareQuotaParts orders parts absent, default, then named by name; a
// kind quota does not define (refused by validation) sorts last, so that
// even a request to refuse is ordered the same way every time.
func compareQuotaParts(a, b quota.Part) int {
	return cmp.Or(cmp.Compare(quotaPartRank(a.Kind), quotaPartRank(b.Kind)), strings.Compare(a.Name, b.Name))
}

func quotaPartRank(k quota.PartKind) int {
	switch k {
	case quota.Absent:
		return 0
	case quota.Default:
		return 1
	case quota.Named:
		return 2
	}
	return 3 + int(k) - math.MinInt8 // after every known kind, by value
}

// validateQuotaPart checks one part of an entity. typ is quota.TypeUser,
// quota.TypeClientID or quota.TypeIP.
func validateQuotaPart(e quota.Entity, typ string, p quota.Part) error {
	switch p.Kind {
	case quota.Absent, quota.Default:
		if p.Name != "" {
			// Two spellings of one entity would be two keys of the image.
			return fmt.Errorf("%w: %s: a %s part that is not named has the name %q", ErrInvalidClientQuota, e, typ, p.Name)
		}
		return nil
	case quota.Named:
	default:
		return fmt.Errorf("%w: %s: %s part of unknown kind %d", ErrInvalidClientQuota, e, typ, p.Kind)
	}
	if typ == quota.TypeIP {
		if err := quota.ValidateIPName(p.Name); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidClientQuota, err)
		}
	}
	switch {
	case typ == quota.TypeUser && p.Name == "":
		return fmt.Errorf("%w: %s: empty user name; use the default user for every user", ErrInvalidClientQuota, e)
	case len(p.Name) > maxQuotaNameBytes:
		return fmt.Errorf("%w: %s name of %d bytes, at most %d", ErrInvalidClientQuota, typ, len(p.Name), maxQuotaNameBytes)
	case !utf8.ValidString(p.Name):
		// JSON would replace the bad bytes: the log would name another entity.
		return fmt.Errorf("%w: %s name %q is not UTF-8", ErrInvalidClientQuota, typ, p.Name)
	}
	return nil
}

// validateQuotaEntity checks that e has at least one part, an ip part
// only on its own, and that each part is valid.
func validateQuotaEntity(e quota.Entity) error {
	client := e.User.Kind != quota.Absent || e.ClientID.Kind != quota.Absent
	switch {
	case !client && !e.IsIP():
		return fmt.Errorf("%w: %s: an entity names a user, a client id or both, or an ip", ErrInvalidClientQuota, e)
	case client && e.IsIP():
		return fmt.Errorf("%w: %s: an ip entity cannot be combined with a user or a client id", ErrInvalidClientQuota, e)
	}
	return errors.Join(validateQuotaPart(e, quota.TypeUser, e.User), validateQuotaPart(e, quota.TypeClientID, e.ClientID),
		validateQuotaPart(e, quota.TypeIP, e.IP))
}

// validateClientQuotaAlteration checks one entity's change: a valid
// entity, at least one key, every key one Strata enforces and named once,
// every value set valid for its key.
func validateClientQuotaAlteration(a ClientQuotaAlteration) error {
	if err := validateQuotaEntity(a.Entity); err != nil {
		return err
	}
	if len(a.Set) == 0 && len(a.Remove) == 0 {
		return fmt.Errorf("%w: %s: nothing to alter", ErrInvalidClientQuota, a.Entity)
	}
	// Sorted: the same request is refused with the same message everywhere.
	for _, key := range slices.Sorted(maps.Keys(a.Set)) {
		if err := quota.ValidateKey(a.Entity, key); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrInvalidClientQuota, a.Entity, err)
		}
		if err := quota.ValidateValue(key, a.Set[key]); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrInvalidClientQuota, a.Entity, err)
		}
	}
	removed := make(map[string]bool, len(a.Remove))
	for _, key := range a.Remove {
		if err := quota.ValidateKey(a.Entity, key); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrInvalidClientQuota, a.Entity, err)
		}
		if _, set := a.Set[key]; set {
			return fmt.Errorf("%w: %s: %s is both set and removed", ErrInvalidClientQuota, a.Entity, key)
		}
		if removed[key] {
			return fmt.Errorf("%w: %s: %s is removed twice", ErrInvalidClientQuota, a.Entity, key)
		}
		removed[key] = true
	}
	return nil
}

// ValidateClientQuotaAlteration is every check AlterClientQuotas makes
// of one entity's change on its own, so that a caller can refuse one
// entity of a request and apply the others.
func ValidateClientQuotaAlteration(a ClientQuotaAlteration) error {
	return validateClientQuotaAlteration(a)
}

// validateClientQuotaAlterations is every check of one AlterClientQuotas
// request that does not depend on the image: at least one alteration,
// each valid, no entity twice.
func validateClientQuotaAlterations(alts []ClientQuotaAlteration) error {
	if len(alts) == 0 {
		return fmt.Errorf("%w: no entity to alter", ErrInvalidClientQuota)
	}
	seen := make(map[quota.Entity]bool, len(alts))
	for _, a := range alts {
		if err := validateClientQuotaAlteration(a); err != nil {
			return err
		}
		if seen[a.Entity] {
			return fmt.Errorf("%w: %s: altered twice in one request", ErrInvalidClientQuota, a.Entity)
		}
		seen[a.Entity] = true
	}
	return nil
}

// validateAlterClientQuotas is every check of an alterClientQuotasCmd
// that does not depend on the image; the Store runs it before proposing
// too. It returns the command's alterations.
func validateAlterClientQuotas(c *alterClientQuotasCmd) ([]ClientQuotaAlteration, error) {
	alts := make([]ClientQuotaAlteration, 0, len(c.Alterations))
	for _, w := range c.Alterations {
		a, err := w.alteration()
		if err != nil {
			return nil, err
		}
		alts = append(alts, a)
	}
	if err := validateClientQuotaAlterations(alts); err != nil {
		return nil, err
	}
	return alts, nil
}

// newAlterClientQuotasCmd is the command of one AlterClientQuotas request:
// entities in compareQuotaEntities order, keys ascending, so that the same
// request makes the same log entry.
func newAlterClientQuotasCmd(alts []ClientQuotaAlteration) *alterClientQuotasCmd {
	sorted := slices.SortedStableFunc(slices.Values(alts), func(a, b ClientQuotaAlteration) int {
		return compareQuotaEntities(a.Entity, b.Entity)
	})
	c := &alterClientQuotasCmd{Alterations: make([]wireQuotaAlteration, 0, len(sorted))}
	for _, a := range sorted {
		c.Alterations = append(c.Alterations, wireQuotaAlteration{
			Entity: toWireQuotaEntity(a.Entity),
			Set:    toWireQuotaValues(a.Set),
			Remove: slices.Sorted(slices.Values(a.Remove)),
		})
	}
	return c
}

// applyAlterClientQuotas changes the quotas of every entity of c, all or
// nothing. Removing a key the entity does not have is no change (as in
// Kafka); an entity left without a key leaves the image.
func applyAlterClientQuotas(img *Image, c *alterClientQuotasCmd, index uint64) (*Image, error) {
	alts, err := validateAlterClientQuotas(c)
	if err != nil {
		return nil, err
	}
	next := img.with(index)
	next.clientQuotas = copyMap(img.clientQuotas, len(alts))
	for _, a := range alts {
		quotas := copyMap(img.clientQuotas[a.Entity], len(a.Set))
		for _, key := range a.Remove {
			delete(quotas, key)
		}
		maps.Copy(quotas, a.Set) // copied: the command's map is not the image's
		if len(quotas) == 0 {
			delete(next.clientQuotas, a.Entity)
		} else {
			next.clientQuotas[a.Entity] = quotas
		}
	}
	next.requestQuotaEntities = countRequestQuotaEntities(next.clientQuotas)
	return next, nil
}

// countRequestQuotaEntities counts the user and client-id entities of
// quotas (those that meter requests; ip entities meter connections).
func countRequestQuotaEntities(quotas map[quota.Entity]map[string]float64) int {
	n := 0
	for e := range quotas {
		if !e.IsIP() {
			n++
		}
	}
	return n
}

// IPConnectionRates returns the connection_creation_rate of every ip
// entity (KIP-612), by entity name ("" for the default ip); nil when
// there is none.
func (img *Image) IPConnectionRates() map[quota.Part]int {
	var out map[quota.Part]int
	for e, quotas := range img.clientQuotas {
		rate, ok := quotas[quota.ConnectionCreationRate]
		if !e.IsIP() || !ok {
			continue
		}
		if out == nil {
			out = make(map[quota.Part]int)
		}
		out[e.IP] = int(rate)
	}
	return out
}

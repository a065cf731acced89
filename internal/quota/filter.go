package quota

import (
	"errors"
	"fmt"
)

// Match types of a DescribeClientQuotas filter component.
const (
	MatchExact     int8 = 0 // the entity's part is this name
	MatchDefault   int8 = 1 // the entity's part is the default
	MatchSpecified int8 = 2 // the entity has this part, whatever it is
)

// ErrInvalidFilter is a DescribeClientQuotas filter Kafka refuses with
// INVALID_REQUEST; ErrUnsupportedEntityType one it refuses with
// UNSUPPORTED_VERSION (an entity type it does not know).
var (
	ErrInvalidFilter         = errors.New("invalid client quota filter")
	ErrUnsupportedEntityType = errors.New("unsupported entity type")
)

// WireComponent is one component of a DescribeClientQuotas filter as the
// wire gives it.
type WireComponent struct {
	Type  string
	Match int8
	Name  *string
}

// Filter selects entities for DescribeClientQuotas, as Kafka's
// ClientQuotasImage.describe: every exact or default component must be
// the entity's part of that type, every specified component a part the
// entity has; strict also wants the entity to have no other part.
type Filter struct {
	exact     map[string]Part // by type: Named or Default
	specified map[string]bool
	strict    bool
}

// ParseFilter checks the components of a request with Kafka's rules and
// messages.
func ParseFilter(comps []WireComponent, strict bool) (Filter, error) {
	f := Filter{exact: map[string]Part{}, specified: map[string]bool{}, strict: strict}
	for _, c := range comps {
		if _, dup := f.exact[c.Type]; dup || f.specified[c.Type] {
			return Filter{}, fmt.Errorf("%w: Entity type %s cannot appear more than once in the filter.", ErrInvalidFilter, c.Type)
		}
		switch c.Type {
		case TypeUser, TypeClientID, TypeIP:
		default:
			return Filter{}, fmt.Errorf("%w: Unsupported entity type %s", ErrUnsupportedEntityType, c.Type)
		}
		switch c.Match {
		case MatchExact:
			if c.Name == nil {
				return Filter{}, fmt.Errorf("%w: Request specified MATCH_TYPE_EXACT, but set match string to null", ErrInvalidFilter)
			}
			f.exact[c.Type] = NamedPart(*c.Name)
		case MatchDefault:
			if c.Name != nil {
				return Filter{}, fmt.Errorf("%w: Request specified MATCH_TYPE_DEFAULT, but also specified a match string", ErrInvalidFilter)
			}
			f.exact[c.Type] = DefaultPart()
		case MatchSpecified:
			if c.Name != nil {
				return Filter{}, fmt.Errorf("%w: Request specified MATCH_TYPE_SPECIFIED, but also specified a match string", ErrInvalidFilter)
			}
			f.specified[c.Type] = true
		default:
			return Filter{}, fmt.Errorf("%w: Unknown match type %d", ErrInvalidFilter, c.Match)
		}
	}
	if f.names(TypeIP) && (f.names(TypeUser) || f.names(TypeClientID)) {
		return Filter{}, fmt.Errorf("%w: Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component.", ErrInvalidFilter)
	}
	return f, nil
}

// names reports whether the filter has a component of type typ.
func (f Filter) names(typ string) bool {
	_, exact := f.exact[typ]
	return exact || f.specified[typ]
}

// Matches reports whether e is selected.
func (f Filter) Matches(e Entity) bool {
	parts := map[string]Part{TypeUser: e.User, TypeClientID: e.ClientID, TypeIP: e.IP}
	has := 0
	for typ, p := range parts {
		if p.Kind == Absent {
			continue
		}
		has++
		if f.strict && !f.names(typ) {
			return false
		}
	}
	for typ, want := range f.exact {
		if parts[typ] != want {
			return false
		}
	}
	for typ := range f.specified {
		if parts[typ].Kind == Absent {
			return false
		}
	}
	return has > 0
}

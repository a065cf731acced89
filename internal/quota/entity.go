package quota

import (
	"errors"
	"fmt"
	"strings"
)

// Entity types, as Kafka's AlterClientQuotas and DescribeClientQuotas name
// them.
const (
	TypeUser     = "user"
	TypeClientID = "client-id"
)

// PartKind says what one part of an entity is.
type PartKind int8

const (
	// Absent: the entity has no such part (a quota on client ids alone
	// has no user part).
	Absent PartKind = iota
	// Named: the part is one name (a user, a client id).
	Named
	// Default: the part is the default for its type, Kafka's <default>:
	// it applies to each name that has no quota of its own, to each one
	// separately.
	Default
)

// Part is the user or the client-id part of an entity.
type Part struct {
	Kind PartKind
	Name string // when Named; may be "" (an empty client id is a name)
}

// NamedPart and DefaultPart build parts.
func NamedPart(name string) Part { return Part{Kind: Named, Name: name} }

// DefaultPart is the default for its type.
func DefaultPart() Part { return Part{Kind: Default} }

func (p Part) String() string {
	switch p.Kind {
	case Named:
		return p.Name
	case Default:
		return "<default>"
	}
	return "<absent>"
}

// Entity is what a quota applies to (KIP-55, KIP-546): a user, a client
// id, or a user's client id, each part a name or the default. The zero
// Entity (no part) is not valid.
type Entity struct {
	User     Part
	ClientID Part
}

// String is the entity as Kafka's tools print it, e.g.
// "user=alice, client-id=<default>".
func (e Entity) String() string {
	var parts []string
	if e.User.Kind != Absent {
		parts = append(parts, TypeUser+"="+e.User.String())
	}
	if e.ClientID.Kind != Absent {
		parts = append(parts, TypeClientID+"="+e.ClientID.String())
	}
	if len(parts) == 0 {
		return "<no entity>"
	}
	return strings.Join(parts, ", ")
}

// ErrInvalidEntity is a malformed entity: no part, an unknown type, a type
// given twice, an empty user name.
var ErrInvalidEntity = errors.New("invalid quota entity")

// WirePart is one part of an entity as the wire gives it: its type and its
// name, nil for the default.
type WirePart struct {
	Type string
	Name *string
}

// ParseEntity builds an Entity from the parts of a request, refusing what
// Kafka refuses (INVALID_REQUEST): no part, a type other than user and
// client-id, a type twice, an empty user name (Kafka's principals are
// never empty; an empty client id is allowed).
func ParseEntity(parts []WirePart) (Entity, error) {
	var e Entity
	if len(parts) == 0 {
		return Entity{}, fmt.Errorf("%w: it names neither a user nor a client id", ErrInvalidEntity)
	}
	for _, wp := range parts {
		var dst *Part
		switch wp.Type {
		case TypeUser:
			dst = &e.User
		case TypeClientID:
			dst = &e.ClientID
		default:
			return Entity{}, fmt.Errorf("%w: unknown entity type %q; use %s or %s (Strata has no ip quotas)",
				ErrInvalidEntity, wp.Type, TypeUser, TypeClientID)
		}
		if dst.Kind != Absent {
			return Entity{}, fmt.Errorf("%w: entity type %s given twice", ErrInvalidEntity, wp.Type)
		}
		if wp.Name == nil {
			*dst = DefaultPart()
			continue
		}
		if wp.Type == TypeUser && *wp.Name == "" {
			return Entity{}, fmt.Errorf("%w: empty user name; use the default user (a null name) for every user", ErrInvalidEntity)
		}
		*dst = NamedPart(*wp.Name)
	}
	return e, nil
}

// Wire returns the entity's parts as the wire gives them, user first.
func (e Entity) Wire() []WirePart {
	var out []WirePart
	add := func(typ string, p Part) {
		switch p.Kind {
		case Named:
			name := p.Name
			out = append(out, WirePart{Type: typ, Name: &name})
		case Default:
			out = append(out, WirePart{Type: typ})
		}
	}
	add(TypeUser, e.User)
	add(TypeClientID, e.ClientID)
	return out
}

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
	// TypeIP is a client address (KIP-612): its only quota is
	// connection_creation_rate, and it names no user or client id.
	TypeIP = "ip"
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

// Part is the user, the client-id or the ip part of an entity.
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

// Entity is what a quota applies to (KIP-55, KIP-546, KIP-612): a user, a
// client id, a user's client id, or a client address (an IP address or a
// host name), each part a name or the default. The zero Entity (no part)
// is not valid, nor is an address with a user or a client id.
type Entity struct {
	User     Part
	ClientID Part
	IP       Part
}

// IsIP reports whether e is a client address's entity (its quota is
// connection_creation_rate).
func (e Entity) IsIP() bool { return e.IP.Kind != Absent }

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
	if e.IP.Kind != Absent {
		parts = append(parts, TypeIP+"="+e.IP.String())
	}
	if len(parts) == 0 {
		return "<no entity>"
	}
	return strings.Join(parts, ", ")
}

// ErrInvalidEntity is a malformed entity: no part, an unknown type, a type
// given twice, an empty user name, an address with another part or a name
// that is neither an IP address nor a host name.
var ErrInvalidEntity = errors.New("invalid quota entity")

// WirePart is one part of an entity as the wire gives it: its type and its
// name, nil for the default.
type WirePart struct {
	Type string
	Name *string
}

// ParseEntity builds an Entity from the parts of a request, refusing what
// Kafka refuses (INVALID_REQUEST): no part, a type other than user,
// client-id and ip, a type twice, an empty user name (Kafka's principals
// are never empty; an empty client id is allowed), an ip with a user or a
// client id, an ip name that is neither an IP address nor a host name.
// Whether a host name resolves is for the caller to check.
func ParseEntity(parts []WirePart) (Entity, error) {
	var e Entity
	if len(parts) == 0 {
		return Entity{}, fmt.Errorf("%w: it names no user, client id or ip", ErrInvalidEntity)
	}
	for _, wp := range parts {
		var dst *Part
		switch wp.Type {
		case TypeUser:
			dst = &e.User
		case TypeClientID:
			dst = &e.ClientID
		case TypeIP:
			dst = &e.IP
		default:
			return Entity{}, fmt.Errorf("%w: unknown entity type %q; use %s, %s or %s",
				ErrInvalidEntity, wp.Type, TypeUser, TypeClientID, TypeIP)
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
		if wp.Type == TypeIP {
			if err := ValidateIPName(*wp.Name); err != nil {
				return Entity{}, err
			}
		}
		*dst = NamedPart(*wp.Name)
	}
	if e.IsIP() && (e.User.Kind != Absent || e.ClientID.Kind != Absent) {
		return Entity{}, fmt.Errorf("%w: an ip entity cannot be combined with a user or a client id; set the address's quota on its own", ErrInvalidEntity)
	}
	return e, nil
}

// Wire returns the entity's parts as the wire gives them: user, client id, ip.
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
	add(TypeIP, e.IP)
	return out
}

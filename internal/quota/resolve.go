package quota

// Lookup returns the quotas set on one entity, by key; nil when none.
type Lookup func(Entity) map[string]float64

// Client is who sends a request: its authenticated user (Kafka's principal
// name; "ANONYMOUS" on a listener without authentication) and the client
// id of its request header.
type Client struct {
	User     string
	ClientID string
}

// Applied is the quota that applies to a client for one key: its bound,
// and the meter it is counted on. Clients whose quota comes from one
// entity with a named part share that part's meter; a default part gives
// each name its own (Kafka's quota metric tags).
type Applied struct {
	Bound float64
	// Meter names the clients counted together: the client's user and
	// client id where the entity the quota came from has that part (named
	// or default), absent where it has not.
	Meter Entity
	// From is the entity the quota is set on.
	From Entity
}

// precedence is Kafka's order of the entities a client's quota may come
// from (ClientQuotaManager, KIP-55): the first that sets the key wins.
var precedence = []struct{ user, client PartKind }{
	{Named, Named},     // /users/<user>/clients/<client-id>
	{Named, Default},   // /users/<user>/clients/<default>
	{Named, Absent},    // /users/<user>
	{Default, Named},   // /users/<default>/clients/<client-id>
	{Default, Default}, // /users/<default>/clients/<default>
	{Default, Absent},  // /users/<default>
	{Absent, Named},    // /clients/<client-id>
	{Absent, Default},  // /clients/<default>
}

// Resolve finds the quota on key that applies to c: the first entity in
// Kafka's precedence that sets it. ok is false when none does: the client
// is not limited.
func Resolve(lookup Lookup, c Client, key string) (Applied, bool) {
	for _, p := range precedence {
		e := Entity{User: partFor(p.user, c.User), ClientID: partFor(p.client, c.ClientID)}
		bound, ok := lookup(e)[key]
		if !ok {
			continue
		}
		var meter Entity
		if p.user != Absent {
			meter.User = NamedPart(c.User)
		}
		if p.client != Absent {
			meter.ClientID = NamedPart(c.ClientID)
		}
		return Applied{Bound: bound, Meter: meter, From: e}, true
	}
	return Applied{}, false
}

func partFor(k PartKind, name string) Part {
	switch k {
	case Named:
		return NamedPart(name)
	case Default:
		return DefaultPart()
	}
	return Part{}
}

package config

import "time"

// delegationTokenDefs are Kafka's broker configs of delegation tokens
// (KIP-48): a secret key turns them on; the lifetimes bound every token.
var delegationTokenDefs = []Def{
	secret(nullDef("delegation.token.secret.key", Password, "", nonEmpty,
		"Secret from which every broker derives a delegation token's HMAC (its password); the same on every broker of a cluster. Unset: delegation tokens are off (DELEGATION_TOKEN_AUTH_DISABLED)."),
	),
	secret(nullDef("delegation.token.master.key", Password, "", nonEmpty,
		"Deprecated name of delegation.token.secret.key, used when that is not set."),
	),
	def("delegation.token.max.lifetime.ms", Long, "604800000", "", atLeast(1),
		"Longest life of a delegation token: renewals never take it past its issue time plus this (or the shorter max_lifetime_ms its creator asked for)."),
	def("delegation.token.expiry.time.ms", Long, "86400000", "", atLeast(1),
		"How long a new or renewed delegation token lives unless renewed again (a renewal may ask for less)."),
	def("delegation.token.expiry.check.interval.ms", Long, "3600000", "", atLeast(1),
		"How often expired delegation tokens are removed from the metadata quorum; an expired token is refused from the moment it expires."),
}

// DelegationTokens is the delegation token setup (KIP-48).
type DelegationTokens struct {
	// SecretKey is delegation.token.secret.key (or its deprecated name);
	// "" means delegation tokens are off.
	SecretKey string
	// MaxLifetime is delegation.token.max.lifetime.ms.
	MaxLifetime time.Duration
	// ExpiryTime is delegation.token.expiry.time.ms: the life a creation
	// or a renewal gives.
	ExpiryTime time.Duration
	// ExpiryCheckInterval is delegation.token.expiry.check.interval.ms.
	ExpiryCheckInterval time.Duration
}

// Enabled reports whether delegation tokens are on: a secret key is set.
func (d DelegationTokens) Enabled() bool { return d.SecretKey != "" }

// setDelegationTokens fills b.DelegationTokens.
func (b *Broker) setDelegationTokens(g getter) {
	ms := func(key string) time.Duration { return time.Duration(g.i64(key)) * time.Millisecond }
	b.DelegationTokens = DelegationTokens{
		SecretKey:           g.str("delegation.token.secret.key"),
		MaxLifetime:         ms("delegation.token.max.lifetime.ms"),
		ExpiryTime:          ms("delegation.token.expiry.time.ms"),
		ExpiryCheckInterval: ms("delegation.token.expiry.check.interval.ms"),
	}
}

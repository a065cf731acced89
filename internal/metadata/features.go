package metadata

import "fmt"

// The features the cluster finalizes (KIP-584), with the levels this
// version of Strata supports and the default of a cluster that never
// changed them (a new Kafka 4 cluster's).
const (
	// TransactionVersion is transaction.version: at level 2 (KIP-890
	// part 2) every EndTxn bumps the producer epoch and the broker adds a
	// transaction's partitions for its client.
	TransactionVersion        = "transaction.version"
	MaxTransactionVersion     = 2
	defaultTransactionVersion = 2

	// ShareVersion is share.version: at level 1 share groups (KIP-932)
	// are served, as a new Kafka 4.2 cluster's; at 0 their requests are
	// answered UNSUPPORTED_VERSION.
	ShareVersion        = "share.version"
	MaxShareVersion     = 1
	defaultShareVersion = 1
)

// FeatureRange is a feature's supported levels.
type FeatureRange struct{ Min, Max int16 }

// SupportedFeatures are the features this version supports, by name.
var SupportedFeatures = map[string]FeatureRange{TransactionVersion: {0, MaxTransactionVersion}, ShareVersion: {0, MaxShareVersion}}

var defaultFeatureLevels = map[string]int16{TransactionVersion: defaultTransactionVersion, ShareVersion: defaultShareVersion}

// FeatureLevel is the finalized level of feature name: the one
// UpdateFeatures set, else its default.
func (img *Image) FeatureLevel(name string) int16 {
	if level, ok := img.Features[name]; ok {
		return level
	}
	return defaultFeatureLevels[name]
}

// FeaturesEpoch is the epoch of the finalized features ApiVersions
// advertises: the version of their last change, at least 1.
func (img *Image) FeaturesEpoch() int64 {
	return int64(max(img.FeaturesVersion, 1))
}

// validFeatureLevel reports whether level is one this version supports for
// feature name.
func validFeatureLevel(name string, level int16) error {
	r, ok := SupportedFeatures[name]
	switch {
	case !ok:
		return fmt.Errorf("%w: unknown feature %q", ErrInvalidCommand, name)
	case level < r.Min || level > r.Max:
		return fmt.Errorf("%w: feature %q at level %d, outside %d-%d", ErrInvalidCommand, name, level, r.Min, r.Max)
	}
	return nil
}

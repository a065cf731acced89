package api

import (
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/metadata"
)

// The features Strata advertises in ApiVersions v3+ (KIP-584): those of
// metadata.SupportedFeatures, finalized at the levels of the metadata image
// (UpdateFeatures changes them; a new cluster's are a new Kafka 4
// cluster's).
const (
	// At transaction.version 2 (KIP-890 part 2) every EndTxn v5 bumps the
	// producer epoch, and a client producing at v12+ or committing offsets
	// at TxnOffsetCommit v5+ sends no AddPartitionsToTxn or
	// AddOffsetsToTxn: the partition leader, or the group coordinator,
	// adds for it. Below 2 they only verify.
	produceAddsVersion   = 12
	txnCommitAddsVersion = 5
)

// addFeatures puts the supported and finalized features of img in an
// ApiVersions response of v3+.
func addFeatures(resp *kmsg.ApiVersionsResponse, img *metadata.Image) {
	if resp.Version < 3 {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(metadata.SupportedFeatures)) {
		r := metadata.SupportedFeatures[name]
		s := kmsg.NewApiVersionsResponseSupportedFeature()
		s.Name, s.MinVersion, s.MaxVersion = name, r.Min, r.Max
		resp.SupportedFeatures = append(resp.SupportedFeatures, s)
		if level := img.FeatureLevel(name); level > 0 {
			f := kmsg.NewApiVersionsResponseFinalizedFeature()
			f.Name, f.MinVersionLevel, f.MaxVersionLevel = name, level, level
			resp.FinalizedFeatures = append(resp.FinalizedFeatures, f)
		}
	}
	resp.FinalizedFeaturesEpoch = img.FeaturesEpoch()
}

// transactionsV2 reports whether img finalizes transaction.version 2: the
// broker then adds a transaction's partitions for its client.
func transactionsV2(img *metadata.Image) bool {
	return img.FeatureLevel(metadata.TransactionVersion) >= 2
}

// shareGroupsOn reports whether img finalizes share.version 1: share
// groups are served. At 0 their requests are answered
// UNSUPPORTED_VERSION, as Kafka's (which still advertises them).
func shareGroupsOn(img *metadata.Image) bool {
	return img.FeatureLevel(metadata.ShareVersion) >= 1
}

package api

import "github.com/twmb/franz-go/pkg/kmsg"

// The features Strata advertises in ApiVersions v3+ (KIP-584), finalized
// as a new Kafka 4 cluster finalizes them. They never change at run time,
// so their epoch is constant.
const (
	// transactionVersionFeature is transaction.version: at level 2
	// (KIP-890 part 2) every EndTxn v5 bumps the producer epoch, and a
	// client producing at v12+ or committing offsets at TxnOffsetCommit
	// v5+ sends no AddPartitionsToTxn or AddOffsetsToTxn: the partition
	// leader, or the group coordinator, adds for it.
	transactionVersionFeature   = "transaction.version"
	finalizedTransactionVersion = 2
	finalizedFeaturesEpoch      = 1
	// produceAddsVersion and txnCommitAddsVersion are the first
	// versions whose transactional writes are added for the client.
	produceAddsVersion   = 12
	txnCommitAddsVersion = 5
)

// addFeatures puts the supported and finalized features in an ApiVersions
// response of v3+.
func addFeatures(resp *kmsg.ApiVersionsResponse) {
	if resp.Version < 3 {
		return
	}
	s := kmsg.NewApiVersionsResponseSupportedFeature()
	s.Name, s.MinVersion, s.MaxVersion = transactionVersionFeature, 0, finalizedTransactionVersion
	resp.SupportedFeatures = append(resp.SupportedFeatures, s)
	f := kmsg.NewApiVersionsResponseFinalizedFeature()
	f.Name, f.MinVersionLevel, f.MaxVersionLevel = transactionVersionFeature, finalizedTransactionVersion, finalizedTransactionVersion
	resp.FinalizedFeatures = append(resp.FinalizedFeatures, f)
	resp.FinalizedFeaturesEpoch = finalizedFeaturesEpoch
}

package config

// A cluster tiers to one store that every node shares: a leader uploads a
// segment and the followers delete their local copies of it, so a store
// of one node's own would hold the only copy of what that node uploaded,
// out of the reach of the next leader. The default store, a directory in
// the node's data dir, is such a store; a cluster member therefore tiers
// only to a store named on purpose: an S3 bucket or a strata.remote.dir
// that every node shares. (cmd/strata checks at start that the named
// store is the one the cluster's other nodes use.)

// TierOn reports whether this broker runs the remote tier:
// remote.log.storage.system.enable, and in a cluster a store named on
// purpose (see TierNeedsSharedStore).
func (b *Broker) TierOn() bool {
	return b.RemoteStorageSystemEnable && !b.TierNeedsSharedStore()
}

// TierNeedsSharedStore reports whether the tier is off only because this
// cluster member has no store named on purpose: neither
// strata.remote.s3.bucket nor strata.remote.dir is set.
func (b *Broker) TierNeedsSharedStore() bool {
	return b.RemoteStorageSystemEnable && b.Clustered() && b.S3.Bucket == "" && !b.remoteDirSet
}

// sharedStoreFix is the fix of a cluster member without a shared store.
const sharedStoreFix = "set strata.remote.s3.bucket (or a strata.remote.dir that every node shares) on every node of the cluster"

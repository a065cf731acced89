package cleaner

// Pass is what one cleaning pass remembers from batch to batch, in log
// order from the log start: the keys that producers' last batches pinned,
// and which producers' open transactions still have data in the cleaned
// log. CleanBatch reads and updates it; a driver makes one per pass.
type Pass struct {
	// pinnedKeys are the keys of records kept only because their batch is
	// its producer's last. A later tombstone of such a key stays past its
	// horizon: removing it would bring the superseded record back.
	pinnedKeys map[keyHash]struct{}
	// txnData holds the producers whose current transaction (since their
	// last marker) has a batch in the cleaned log: its marker must stay.
	txnData map[int64]bool
}

// NewPass returns the state of a pass that has seen nothing yet.
func NewPass() *Pass {
	return &Pass{pinnedKeys: map[keyHash]struct{}{}, txnData: map[int64]bool{}}
}

func (p *Pass) pin(key []byte) { p.pinnedKeys[hashKey(key)] = struct{}{} }

func (p *Pass) pinned(key []byte) bool {
	if len(p.pinnedKeys) == 0 {
		return false
	}
	_, ok := p.pinnedKeys[hashKey(key)]
	return ok
}

// keptTxnData notes that a batch of pid's current transaction stays.
func (p *Pass) keptTxnData(pid int64) { p.txnData[pid] = true }

// endTxn reports whether pid's transaction, which a marker ends here, kept
// any data, and starts its next one.
func (p *Pass) endTxn(pid int64) (keptData bool) {
	keptData = p.txnData[pid]
	delete(p.txnData, pid)
	return keptData
}

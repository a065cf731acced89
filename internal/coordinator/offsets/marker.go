package offsets

import (
	"github.com/strata-broker/strata/internal/coordinator/runtime"
	"github.com/strata-broker/strata/internal/record"
)

// attrTransactional is the transactional bit of a batch's attributes.
const attrTransactional = 0x10

// readMarker decodes the one record of a control batch of h.
func readMarker(h record.Header, key, value []byte) (*runtime.Marker, error) {
	m, err := record.ParseEndTxnMarker(key, value)
	if err != nil {
		return nil, err
	}
	return &runtime.Marker{
		Producer:         runtime.Producer{ID: h.ProducerID, Epoch: h.ProducerEpoch},
		Commit:           m.Commit,
		CoordinatorEpoch: m.CoordinatorEpoch,
	}, nil
}

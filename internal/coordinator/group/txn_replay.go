package group

import (
	"fmt"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// ReplayTxn applies one record of a transactional batch of producer p, in
// log order (runtime.TxnReplayer). An offset commit becomes p's pending
// offset; a tombstone applies at once, as Kafka's replay does whatever the
// batch. Either way p's epoch is noted, unchecked: as Kafka's log does for
// what it reads back, replay trusts the epochs that Handle accepted. Group
// metadata is never written transactionally: such a record, like one that
// does not decode, is an error wrapping ErrBadRecord and leaves the state
// unchanged.
func (c *Coordinator) ReplayTxn(p runtime.Producer, key, value []byte) error {
	okey, _, err := readKey(key)
	if err != nil {
		return err
	}
	if okey == nil {
		return fmt.Errorf("%w: group metadata in a transactional batch of producer %d", ErrBadRecord, p.ID)
	}
	if p.ID < 0 || p.Epoch < 0 {
		return fmt.Errorf("%w: transactional batch of producer %d epoch %d", ErrBadRecord, p.ID, p.Epoch)
	}
	if value == nil {
		c.noteWrite(p.ID, p.Epoch)
		return c.replayOffset(*okey, nil)
	}
	e, err := readOffsetValue(value)
	if err != nil {
		return err
	}
	e.order = c.nextOffsetOrder()
	c.noteWrite(p.ID, p.Epoch)
	c.putTxnOffset(c.loadedGroup(okey.Group), p.ID, base.TopicPartition{Topic: okey.Topic, Partition: okey.Partition}, e)
	return nil
}

// ReplayMarker applies a transaction marker, in log order
// (runtime.TxnReplayer): p's pending offsets are committed or dropped as
// when TxnCompleted was handled. The log holds only markers that Handle
// accepted, so their epochs are not checked again.
func (c *Coordinator) ReplayMarker(m runtime.Marker) error {
	if m.Producer.ID < 0 || m.Producer.Epoch < 0 {
		return fmt.Errorf("%w: marker of producer %d epoch %d", ErrBadRecord, m.Producer.ID, m.Producer.Epoch)
	}
	c.completeTxn(m)
	return nil
}

package partition

import (
	"errors"
	"os"
	"testing"
)

// Delete removes a partition whose tail was never synced, without writing
// it out first; an acks=all append still waiting for its sync is told the
// log is gone, and the partition refuses appends after.
func TestDeleteRemovesAnUnsyncedPartition(t *testing.T) {
	e := newEnv(t, smallSegments)
	p := e.open(t)
	for range 20 {
		mustAppend(t, p, batch(t, spec{records: 3}), AcksLeader)
	}
	_, wait, err := p.Append(batch(t, spec{records: 1}), AcksAll)
	if err != nil || wait == nil {
		t.Fatalf("acks=all append: wait %v, err %v", wait != nil, err)
	}
	if err := p.Delete(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(e.dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the partition directory is still there: %v", err)
	}
	if err := wait(); err == nil {
		t.Fatal("the acks=all append was acknowledged after its partition was deleted")
	}
	if _, _, err := p.Append(batch(t, spec{records: 1}), AcksLeader); !errors.Is(err, ErrClosed) {
		t.Fatalf("append after Delete: %v, want ErrClosed", err)
	}
}

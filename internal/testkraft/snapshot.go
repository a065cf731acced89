// Package testkraft writes what Kafka's `kafka-storage format
// --initial-controllers` leaves in a metadata log dir, for tests of a
// Strata node started on it: the bootstrap snapshot of the initial voters
// (Formatter.writeDynamicQuorumSnapshot), byte for byte as Kafka's
// RecordsSnapshotWriter frames it (control batches, uncompressed; the
// records' schemas are Kafka's SnapshotHeaderRecord, KRaftVersionRecord,
// VotersRecord and SnapshotFooterRecord, each version 0, flexible).
package testkraft

import (
	"path/filepath"

	"github.com/twmb/franz-go/pkg/kbin"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
)

// SnapshotPath is where the formatter writes the snapshot, under the
// metadata log dir.
var SnapshotPath = filepath.Join("__cluster_metadata-0", "00000000000000000000-0000000000.checkpoint")

// Voter is one initial controller: id@host:port:directory-id.
type Voter struct {
	ID          int32
	DirectoryID [16]byte
	Endpoints   []Endpoint
}

// Endpoint is a voter's listener, named by controller.listener.names.
type Endpoint struct {
	Name string
	Host string
	Port uint16
}

// Kafka's control record types (ControlRecordType).
const (
	snapshotHeader = 3
	snapshotFooter = 4
	kraftVersion   = 5
	kraftVoters    = 6
)

// BootstrapSnapshot is the snapshot file of voters.
func BootstrapSnapshot(voters []Voter) []byte {
	header := kbin.AppendInt16(nil, 0)
	header = kbin.AppendInt64(header, 1764940000000) // LastContainedLogTimestamp
	header = kbin.AppendUvarint(header, 0)
	version := kbin.AppendInt16(nil, 0)
	version = kbin.AppendInt16(version, 1) // kraft.version 1: a dynamic quorum
	version = kbin.AppendUvarint(version, 0)
	footer := kbin.AppendUvarint(kbin.AppendInt16(nil, 0), 0)
	out := controlBatch(nil, 0, []control{{snapshotHeader, header}, {kraftVersion, version}, {kraftVoters, votersRecord(voters)}})
	return controlBatch(out, 3, []control{{snapshotFooter, footer}})
}

type control struct {
	kind  int16
	value []byte
}

// controlBatch appends a control batch of records from offset from.
func controlBatch(dst []byte, from int64, records []control) []byte {
	start := len(dst)
	dst = record.AppendHeader(dst, record.Header{
		BaseOffset: base.Offset(from), Magic: 2, Attributes: 0x20, // control
		LastOffsetDelta: int32(len(records) - 1), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
		NumRecords: int32(len(records)),
	})
	for i, c := range records {
		key := kbin.AppendInt16(kbin.AppendInt16(nil, 0), c.kind)
		dst = record.AppendRecord(dst, &record.Record{OffsetDelta: int32(i), Key: key, Value: c.value})
	}
	if err := record.FinishBatch(dst[start:]); err != nil {
		panic(err)
	}
	return dst
}

func votersRecord(voters []Voter) []byte {
	b := kbin.AppendInt16(nil, 0) // Version
	b = kbin.AppendCompactArrayLen(b, len(voters))
	for _, v := range voters {
		b = kbin.AppendInt32(b, v.ID)
		b = kbin.AppendUuid(b, v.DirectoryID)
		b = kbin.AppendCompactArrayLen(b, len(v.Endpoints))
		for _, e := range v.Endpoints {
			b = kbin.AppendCompactString(b, e.Name)
			b = kbin.AppendCompactString(b, e.Host)
			b = kbin.AppendUint16(b, e.Port)
			b = kbin.AppendUvarint(b, 0)
		}
		b = kbin.AppendInt16(b, 0) // KRaftVersionFeature: 0..1
		b = kbin.AppendInt16(b, 1)
		b = kbin.AppendUvarint(b, 0)
		b = kbin.AppendUvarint(b, 0)
	}
	return kbin.AppendUvarint(b, 0)
}

package main

import (
	"encoding/binary"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kbin"

	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/testkraft"
)

func TestSnapshotVoters(t *testing.T) {
	ctrl := func(host string, port uint16) []testkraft.Endpoint {
		return []testkraft.Endpoint{{Name: "CONTROLLER", Host: host, Port: port}}
	}
	three := testkraft.BootstrapSnapshot([]testkraft.Voter{
		{ID: 1, DirectoryID: [16]byte{1}, Endpoints: append(ctrl("c1", 9093), testkraft.Endpoint{Name: "OTHER", Host: "y", Port: 2})},
		{ID: 2, DirectoryID: [16]byte{2}, Endpoints: append([]testkraft.Endpoint{{Name: "OTHER", Host: "x", Port: 1}}, ctrl("c2", 9093)...)},
		{ID: 3, DirectoryID: [16]byte{3}, Endpoints: []testkraft.Endpoint{{Name: "OTHER", Host: "c3", Port: 9094}}},
	})
	got, err := snapshotVoters(three, "CONTROLLER")
	if want := map[int32]string{1: "c1:9093", 2: "c2:9093", 3: "c3:9094"}; err != nil || !maps.Equal(got, want) {
		t.Fatalf("snapshotVoters = %v, %v; want %v (the controller listener's endpoint, else the first)", got, err, want)
	}

	for name, tc := range map[string]struct {
		data []byte
		want string
	}{
		"no voter":    {testkraft.BootstrapSnapshot(nil), "names no voter"},
		"truncated":   {three[:len(three)-20], "CORRUPT_MESSAGE"},
		"empty":       {nil, "names no voter"},
		"no endpoint": {testkraft.BootstrapSnapshot([]testkraft.Voter{{ID: 1}}), "voter 1 has no endpoint"},
		// Kafka's records in a batch that is not a control batch are
		// metadata records, not voters.
		"not control batches": {withFirstBatchAttributes(t, three, 0), "names no voter"},
		"compressed":          {withFirstBatchAttributes(t, three, 0x20|int16(record.CodecGzip)), "compressed with"},
	} {
		if _, err := snapshotVoters(tc.data, "CONTROLLER"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, tc.want)
		}
	}
}

// voterFour is a voters record of voter 4 at c4:9093 with tagged fields at
// every level and a kraft.version range other than testkraft's.
func voterFour() []byte {
	b := kbin.AppendCompactArrayLen(kbin.AppendInt16(nil, 0), 1)
	b = kbin.AppendUuid(kbin.AppendInt32(b, 4), [16]byte{4})
	b = kbin.AppendCompactArrayLen(b, 1)
	b = kbin.AppendUint16(kbin.AppendCompactString(kbin.AppendCompactString(b, "CONTROLLER"), "c4"), 9093)
	b = append(kbin.AppendUvarint(kbin.AppendUvarint(kbin.AppendUvarint(b, 1), 7), 2), 0xab, 0xcd) // the endpoint's tagged field
	b = kbin.AppendUvarint(kbin.AppendInt16(kbin.AppendInt16(b, 0), 2), 0)                         // KRaftVersionFeature 0..2
	b = append(kbin.AppendUvarint(kbin.AppendUvarint(kbin.AppendUvarint(b, 1), 3), 1), 0x01)       // the voter's tagged field
	return kbin.AppendUvarint(b, 0)
}

func TestDecodeVotersRecord(t *testing.T) {
	if got, err := decodeVotersRecord(voterFour(), "CONTROLLER"); err != nil || !maps.Equal(got, map[int32]string{4: "c4:9093"}) {
		t.Fatalf("decodeVotersRecord = %v, %v; want voter 4 at c4:9093", got, err)
	}
	v1 := kbin.AppendCompactArrayLen(kbin.AppendInt16(nil, 1), 0)
	if _, err := decodeVotersRecord(kbin.AppendUvarint(v1, 0), "CONTROLLER"); err == nil || !strings.Contains(err.Error(), "version 1") {
		t.Fatalf("a version 1 voters record: %v, want it refused", err)
	}
}

// A control record key of a later version, longer than version 0's four
// bytes, still gives the record's type, as Kafka's
// ControlRecordType.parseTypeId reads it.
func TestLaterControlKeyVersionNamesTheVoters(t *testing.T) {
	key := kbin.AppendInt16(kbin.AppendInt16(kbin.AppendInt16(nil, 1), controlRecordVoters), 0)
	batch := record.AppendHeader(nil, record.Header{Magic: 2, Attributes: 0x20, // control
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, NumRecords: 1})
	batch = record.AppendRecord(batch, &record.Record{Key: key, Value: voterFour()})
	if err := record.FinishBatch(batch); err != nil {
		t.Fatal(err)
	}
	if got, err := snapshotVoters(batch, "CONTROLLER"); err != nil || !maps.Equal(got, map[int32]string{4: "c4:9093"}) {
		t.Fatalf("snapshotVoters = %v, %v; want voter 4 at c4:9093", got, err)
	}
}

// withFirstBatchAttributes is a copy of data, a Kafka snapshot, whose first
// batch has attributes attrs (its CRC made again).
func withFirstBatchAttributes(t *testing.T, data []byte, attrs int16) []byte {
	t.Helper()
	out := slices.Clone(data)
	batches := record.SplitBatches(out)
	batch, _, ok := batches.Next()
	if !ok {
		t.Fatal("no batch")
	}
	binary.BigEndian.PutUint16(batch[21:], uint16(attrs)) // the attributes, after offset, length, epoch, magic and CRC
	if err := record.FinishBatch(batch); err != nil {
		t.Fatal(err)
	}
	return out
}

// A node bootstrapping from controller.quorum.bootstrap.servers takes the
// voters of Kafka's bootstrap snapshot on its first start only.
func TestKafkaInitialVoters(t *testing.T) {
	logs := t.TempDir()
	cfg := &config.Broker{LogDirs: []string{logs}, MetadataDir: filepath.Join(logs, "__metadata"), ControllerListenerName: "CONTROLLER",
		QuorumBootstrap: []string{"c1:9093", "c2:9093"}, Raw: map[string]string{}}
	if v, _, err := kafkaInitialVoters(cfg); v != nil || err != nil {
		t.Fatalf("without a snapshot: %v, %v", v, err)
	}
	path := filepath.Join(logs, testkraft.SnapshotPath)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	snap := testkraft.BootstrapSnapshot([]testkraft.Voter{{ID: 1, Endpoints: []testkraft.Endpoint{{Name: "CONTROLLER", Host: "c1", Port: 9093}}}})
	if err := os.WriteFile(path, snap, 0o644); err != nil {
		t.Fatal(err)
	}
	if v, p, err := kafkaInitialVoters(cfg); err != nil || p != path || !maps.Equal(v, map[int32]string{1: "c1:9093"}) {
		t.Fatalf("first start: %v, %s, %v", v, p, err)
	}
	// A node given controller.quorum.voters instead takes those.
	static := *cfg
	static.QuorumBootstrap = nil
	if v, _, err := kafkaInitialVoters(&static); v != nil || err != nil {
		t.Fatalf("with controller.quorum.voters: %v, %v; want nothing taken", v, err)
	}
	// A metadata dir made by a start interrupted before the quorum
	// bootstrapped holds no Raft state: the snapshot is still read.
	if err := os.MkdirAll(filepath.Join(cfg.MetadataDir, "wal"), 0o755); err != nil {
		t.Fatal(err)
	}
	if v, _, err := kafkaInitialVoters(cfg); err != nil || !maps.Equal(v, map[int32]string{1: "c1:9093"}) {
		t.Fatalf("after an interrupted first start: %v, %v", v, err)
	}
	meta, err := metadata.Open(t.Context(), metadata.Options{Dir: cfg.MetadataDir, NodeID: 1, Clock: clock.Real{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := meta.Close(); err != nil {
		t.Fatal(err)
	}
	if v, _, err := kafkaInitialVoters(cfg); v != nil || err != nil {
		t.Fatalf("with Raft state already: %v, %v; want nothing taken", v, err)
	}
	if err := os.WriteFile(path, snap[:30], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(cfg.MetadataDir); err != nil {
		t.Fatal(err)
	}
	if _, _, err := kafkaInitialVoters(cfg); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("a torn snapshot: %v, want an error naming it", err)
	}
}

package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/twmb/franz-go/pkg/kbin"

	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/record"
)

// Kafka 4 bootstraps a dynamic quorum of several controllers from
// `kafka-storage format --initial-controllers id@host:port:dir,...`, which
// writes the voters into a bootstrap snapshot in the metadata log dir,
// while every node's controller.quorum.bootstrap.servers names them all.
// Strata reads that snapshot's voters on a node's first start (no Raft
// state in its metadata dir yet) and takes them as controller.quorum.voters:
// the voters bootstrap the quorum together, as Kafka's do, where otherwise
// every node would wait to join a quorum none of them started. Later
// starts find the voters in the metadata log.

// kafkaBootstrapSnapshot is where Kafka's formatter writes the bootstrap
// snapshot in a metadata log dir (Snapshots.BOOTSTRAP_SNAPSHOT_ID).
var kafkaBootstrapSnapshot = filepath.Join("__cluster_metadata-0", "00000000000000000000-0000000000.checkpoint")

// Kafka's control record types (ControlRecordType) and the VotersRecord
// version it writes.
const (
	controlRecordVoters = 6
	votersRecordVersion = 0
)

// kafkaInitialVoters are the voters (node id → host:port) of the bootstrap
// snapshot that Kafka's formatter left in cfg's metadata log dir, and its
// path, when this node bootstraps from controller.quorum.bootstrap.servers
// and its metadata holds no Raft state yet; nil otherwise, and when there
// is no such snapshot (`--standalone` writes one naming this node alone,
// which the list names alone too: config's standalone quorum).
func kafkaInitialVoters(cfg *config.Broker) (voters map[int32]string, path string, err error) {
	if len(cfg.QuorumBootstrap) == 0 {
		return nil, "", nil
	}
	dir := cfg.Raw["metadata.log.dir"]
	if dir == "" {
		dir = cfg.LogDirs[0]
	}
	path = filepath.Join(dir, kafkaBootstrapSnapshot)
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, "", nil
	case err != nil:
		return nil, "", fmt.Errorf("reading Kafka's bootstrap snapshot %s: %w", path, err)
	}
	if has, err := metadata.HasRaftState(cfg.MetadataDir); err != nil || has {
		return nil, "", err
	}
	voters, err = snapshotVoters(data, cfg.ControllerListenerName)
	if err != nil {
		return nil, "", fmt.Errorf("Kafka's bootstrap snapshot %s (kafka-storage format --initial-controllers): %v; format the node again, or move the file away and set controller.quorum.voters", path, err)
	}
	return voters, path, nil
}

// snapshotVoters reads the voters of the last VotersRecord in a Kafka
// snapshot (record batches; the records are not compressed), each at its
// endpoint on listener, else its first one.
func snapshotVoters(data []byte, listener string) (map[int32]string, error) {
	var voters map[int32]string
	batches := record.SplitBatches(data)
	for batch, h, ok := batches.Next(); ok; batch, h, ok = batches.Next() {
		if !h.Control() {
			continue
		}
		if h.Codec() != record.CodecNone {
			return nil, fmt.Errorf("a control batch compressed with %v", h.Codec())
		}
		payload := batch[record.HeaderSize:]
		for range h.NumRecords {
			r, rest, err := record.ParseRecord(payload)
			if err != nil {
				return nil, err
			}
			payload = rest
			// A key is at least version 0's 4 bytes; a later version's
			// type is where version 0 has it (ControlRecordType.parseTypeId).
			if len(r.Key) < 4 || int16(r.Key[2])<<8|int16(r.Key[3]) != controlRecordVoters {
				continue
			}
			if voters, err = decodeVotersRecord(r.Value, listener); err != nil {
				return nil, err
			}
		}
	}
	if err := batches.Err(); err != nil {
		return nil, err
	}
	if len(voters) == 0 {
		return nil, errors.New("it names no voter")
	}
	return voters, nil
}

// decodeVotersRecord decodes Kafka's VotersRecord v0 (a flexible message:
// compact arrays and strings, tagged fields after each struct).
func decodeVotersRecord(b []byte, listener string) (map[int32]string, error) {
	r := kbin.Reader{Src: b}
	if v := r.Int16(); v != votersRecordVersion {
		return nil, fmt.Errorf("a voters record of version %d, want %d", v, votersRecordVersion)
	}
	voters := map[int32]string{}
	for range max(r.CompactArrayLen(), 0) {
		if !r.Ok() {
			break // Complete reports it
		}
		id := r.Int32()
		r.Uuid() // the voter's directory id: Strata keys voters by node id
		addr := ""
		for range max(r.CompactArrayLen(), 0) {
			if !r.Ok() {
				break
			}
			name, host, port := r.CompactString(), r.CompactString(), r.Uint16()
			skipTaggedFields(&r)
			if addr == "" || name == listener {
				addr = net.JoinHostPort(host, strconv.Itoa(int(port)))
			}
		}
		r.Int16() // KRaftVersionFeature: min and max supported
		r.Int16()
		skipTaggedFields(&r)
		skipTaggedFields(&r) // the voter's
		if addr == "" {
			return nil, fmt.Errorf("voter %d has no endpoint", id)
		}
		voters[id] = addr
	}
	skipTaggedFields(&r)
	if err := r.Complete(); err != nil {
		return nil, fmt.Errorf("a malformed voters record: %w", err)
	}
	return voters, nil
}

func skipTaggedFields(r *kbin.Reader) {
	for range r.Uvarint() {
		if !r.Ok() {
			return
		}
		r.Uvarint() // tag
		r.Span(int(r.Uvarint()))
	}
}

package metadata

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/quota"
)

// TestSnapshotCarriesClientQuotas: quotas survive a snapshot, written in
// the v9 layout (v10 may add ip entities; v11, which adds delegation
// tokens, is the newest), entities in ClientQuotaEntities order and keys
// ascending.
func TestSnapshotCarriesClientQuotas(t *testing.T) {
	img := build(t, createCmd("foo", 1, 1), alterScram("alice", upsert(ScramSHA256, 1)),
		alterQuotas(qAlt(qUserAlice, rates(1024, 2048)), qAlt(qClientDefault, rates(0, 10))),
		alterQuotas(qAlt(qClientEmpty, rates(5, 0)), qAlt(qAliceApp, rates(7, 0))))
	data := encodeNewest(t, img)
	want := `"client_quotas":[` +
		`{"entity":{"user":{"kind":"absent"},"client_id":{"kind":"default"}},"quotas":[{"key":"consumer_byte_rate","value":10}]},` +
		`{"entity":{"user":{"kind":"absent"},"client_id":{"kind":"named"}},"quotas":[{"key":"producer_byte_rate","value":5}]},` +
		`{"entity":{"user":{"kind":"named","name":"alice"},"client_id":{"kind":"absent"}},"quotas":[{"key":"consumer_byte_rate","value":2048},{"key":"producer_byte_rate","value":1024}]},` +
		`{"entity":{"user":{"kind":"named","name":"alice"},"client_id":{"kind":"named","name":"app"}},"quotas":[{"key":"producer_byte_rate","value":7}]}]`
	if !bytes.Contains(data, []byte(want)) {
		t.Errorf("snapshot without ordered quotas:\n%s\nwant it to hold\n%s", data, want)
	}
	roundTrip(t, img)
	restored, err := decodeSnapshot(data)
	if err != nil {
		t.Fatal(err)
	}
	wantQuotas(map[quota.Entity]map[string]float64{
		qUserAlice: rates(1024, 2048), qClientDefault: rates(0, 10), qClientEmpty: rates(5, 0), qAliceApp: rates(7, 0),
	})(t, restored)
	wantScram(map[string]map[string]ScramCredential{"alice": {ScramSHA256: scramCred(ScramSHA256, 1)}})(t, restored)
	if err := clientQuotaInvariantErr(restored); err != nil {
		t.Fatal(err)
	}
}

// snapshotV8 was written by the v8 encoder (before client quotas): a
// topic, a SCRAM credential and one broker's dynamic configs.
const snapshotV8 = "\x08{\"cluster_id\":\"\",\"controller_id\":0,\"version\":3,\"broker_configs\":{}," +
	"\"topics\":[{\"Name\":\"foo\",\"ID\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1],\"Partitions\":[{\"Index\":0,\"Leader\":1,\"LeaderEpoch\":0,\"Replicas\":[1],\"ISR\":[1]}]," +
	"\"Configs\":{\"cleanup.policy\":\"delete\"}}],\"remote_segments\":null,\"pending_remote_deletes\":null," +
	"\"scram_credentials\":[{\"user\":\"alice\",\"credentials\":[{\"mechanism\":\"SCRAM-SHA-256\",\"salt\":\"AQEBAQEBAQEBAQEBAQEBAQ==\"," +
	"\"stored_key\":\"AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI=\",\"server_key\":\"AwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwM=\",\"iterations\":4097}]}]," +
	"\"acls\":[],\"brokers\":[],\"node_configs\":[{\"node\":2,\"configs\":{\"log.retention.ms\":\"10\"}}]}"

// TestDecodeSnapshotV8StillDecodes: a v8 snapshot restores with no client
// quota; a v8 snapshot holding v9 fields is corrupt.
func TestDecodeSnapshotV8StillDecodes(t *testing.T) {
	img, err := decodeSnapshot([]byte(snapshotV8))
	if err != nil {
		t.Fatal(err)
	}
	if img.Version != 3 || len(img.Topics) != 1 || len(img.ScramUsers()) != 1 || img.NodeConfigs[2]["log.retention.ms"] != "10" {
		t.Fatalf("decoded %+v", img)
	}
	if img.clientQuotas == nil || img.ClientQuotaEntities() != nil {
		t.Fatalf("clientQuotas = %v, want empty and not nil", img.clientQuotas)
	}
	checkImageInvariants(t, img)
	withQuotas := strings.Replace(snapshotV8, `"acls":[]`,
		`"acls":[],"client_quotas":[{"entity":{"user":{"kind":"default"},"client_id":{"kind":"absent"}},"quotas":[{"key":"producer_byte_rate","value":1}]}]`, 1)
	if _, err := decodeSnapshot([]byte(withQuotas)); !errors.Is(err, ErrInvalidCommand) {
		t.Errorf("v8 with v9 fields: %v, want ErrInvalidCommand", err)
	}
	if img, err := decodeSnapshot([]byte("\x09" + withQuotas[1:])); err != nil || len(img.ClientQuotaEntities()) != 1 {
		t.Errorf("the same as v9: %v", err)
	}
}

// TestFSMRestoresV8SnapshotThenWritesNewest: a node whose newest snapshot
// is v8 restores it, takes quotas, and snapshots them in the newest layout.
func TestFSMRestoresV8SnapshotThenWritesNewest(t *testing.T) {
	got := restoreApplyResnapshot(t, snapshotV8, alterQuotas(qAlt(qUserDefault, rates(1024, 0))), 4)
	if len(got.Topics) != 1 || len(got.ScramUsers()) != 1 || len(got.NodeConfigs) != 1 {
		t.Errorf("v8 state lost: %+v", got)
	}
	wantQuotas(map[quota.Entity]map[string]float64{qUserDefault: rates(1024, 0)})(t, got)
}

func TestDecodeSnapshotRejectsBadClientQuotas(t *testing.T) {
	alice := wireQuotaEntity{User: wireQuotaPart{Kind: wireQuotaNamed, Name: "alice"}, ClientID: wireQuotaPart{Kind: wireQuotaAbsent}}
	one := []wireQuotaValue{{Key: produceRate, Value: 1024}}
	for name, tc := range map[string]struct {
		entries []wireClientQuotas
		want    error
	}{
		"unknown kind": {[]wireClientQuotas{{Entity: wireQuotaEntity{User: wireQuotaPart{Kind: "all"}, ClientID: wireQuotaPart{Kind: wireQuotaAbsent}}, Quotas: one}},
			ErrInvalidClientQuota},
		"no part": {[]wireClientQuotas{{Entity: wireQuotaEntity{User: wireQuotaPart{Kind: wireQuotaAbsent}, ClientID: wireQuotaPart{Kind: wireQuotaAbsent}}, Quotas: one}},
			ErrInvalidClientQuota},
		"empty user name": {[]wireClientQuotas{{Entity: wireQuotaEntity{User: wireQuotaPart{Kind: wireQuotaNamed}, ClientID: wireQuotaPart{Kind: wireQuotaAbsent}}, Quotas: one}},
			ErrInvalidClientQuota},
		"no quota":       {[]wireClientQuotas{{Entity: alice}}, ErrInvalidCommand},
		"entity twice":   {[]wireClientQuotas{{Entity: alice, Quotas: one}, {Entity: alice, Quotas: []wireQuotaValue{{Key: consumeRate, Value: 1}}}}, ErrInvalidCommand},
		"key twice":      {[]wireClientQuotas{{Entity: alice, Quotas: []wireQuotaValue{{Key: produceRate, Value: 1}, {Key: produceRate, Value: 2}}}}, ErrInvalidClientQuota},
		"unknown key":    {[]wireClientQuotas{{Entity: alice, Quotas: []wireQuotaValue{{Key: "bogus", Value: 1}}}}, quota.ErrInvalidKey},
		"value too low":  {[]wireClientQuotas{{Entity: alice, Quotas: []wireQuotaValue{{Key: produceRate, Value: 0}}}}, quota.ErrInvalidValue},
		"fraction value": {[]wireClientQuotas{{Entity: alice, Quotas: []wireQuotaValue{{Key: consumeRate, Value: 0.5}}}}, quota.ErrInvalidValue},
	} {
		var s imageSnapshotV9
		s.ClientQuotas = tc.entries
		if _, err := decodeSnapshot(mustJSON(t, snapshotFormatV9, s)); !errors.Is(err, tc.want) {
			t.Errorf("%s: decodeSnapshot: %v, want %v", name, err, tc.want)
		}
	}
	// The same snapshot with valid quotas is accepted: the cases above are
	// refused for what they break, not for their shape.
	var ok imageSnapshotV9
	ok.ClientQuotas = []wireClientQuotas{{Entity: alice, Quotas: []wireQuotaValue{{Key: consumeRate, Value: 1}, {Key: produceRate, Value: 2}}}}
	img, err := decodeSnapshot(mustJSON(t, snapshotFormatV9, ok))
	if err != nil {
		t.Fatalf("valid quotas: %v", err)
	}
	wantQuotas(map[quota.Entity]map[string]float64{qUserAlice: rates(2, 1)})(t, img)
}

// TestSnapshotCarriesIPQuotas: ip entities survive a v10 snapshot, in
// their own field of the entity (an entity without one is written as v9
// wrote it); a v9 snapshot holding one is corrupt.
func TestSnapshotCarriesIPQuotas(t *testing.T) {
	img := build(t, alterQuotas(qAlt(qIPLocal, connRate(5)), qAlt(qIPDefault, connRate(0)), qAlt(qUserAlice, rates(1, 0))))
	data, err := encodeSnapshot(img)
	if err != nil {
		t.Fatal(err)
	}
	want := `"client_quotas":[` +
		`{"entity":{"user":{"kind":"absent"},"client_id":{"kind":"absent"},"ip":{"kind":"default"}},"quotas":[{"key":"connection_creation_rate","value":0}]},` +
		`{"entity":{"user":{"kind":"absent"},"client_id":{"kind":"absent"},"ip":{"kind":"named","name":"127.0.0.1"}},"quotas":[{"key":"connection_creation_rate","value":5}]},` +
		`{"entity":{"user":{"kind":"named","name":"alice"},"client_id":{"kind":"absent"}},"quotas":[{"key":"producer_byte_rate","value":1}]}]`
	if !bytes.Contains(data, []byte(want)) {
		t.Errorf("snapshot:\n%s\nwant it to hold\n%s", data, want)
	}
	roundTrip(t, img)
	restored, err := decodeSnapshot(data)
	if err != nil {
		t.Fatal(err)
	}
	wantQuotas(map[quota.Entity]map[string]float64{qIPLocal: connRate(5), qIPDefault: connRate(0), qUserAlice: rates(1, 0)})(t, restored)
	if err := clientQuotaInvariantErr(restored); err != nil {
		t.Fatal(err)
	}
	if _, err := decodeSnapshot(append([]byte{snapshotFormatV9}, data[1:]...)); !errors.Is(err, ErrInvalidCommand) {
		t.Errorf("the same as v9: %v, want ErrInvalidCommand", err)
	}
}

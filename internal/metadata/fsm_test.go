package metadata

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/hashicorp/raft"
)

// memSink is a raft.SnapshotSink that keeps the bytes.
type memSink struct {
	bytes.Buffer
	canceled bool
}

func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Cancel() error { s.canceled = true; return nil }
func (s *memSink) Close() error  { return nil }

func TestFSMSnapshotRestore(t *testing.T) {
	src := newFSM()
	for i, c := range []command{
		&initClusterCmd{ClusterID: newClusterID()},
		&controllerChangeCmd{NodeID: 2},
		createCmd("foo", 1, 3),
		createCmd("bar", 2, 1),
		&setBrokerConfigsCmd{Configs: map[string]string{"x": "y"}},
	} {
		data, err := encodeCommand(c)
		if err != nil {
			t.Fatal(err)
		}
		if res := src.Apply(&raft.Log{Index: uint64(i + 10), Type: raft.LogCommand, Data: data}).(applyResult); res.err != nil {
			t.Fatalf("apply %T: %v", c, res.err)
		}
	}
	snap, err := src.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var sink memSink
	if err := snap.Persist(&sink); err != nil {
		t.Fatal(err)
	}
	snap.Release()

	dst := newFSM()
	watch, cancel := dst.watchers.add()
	defer cancel()
	if err := dst.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(dst.image.Load(), src.image.Load()) {
		t.Fatalf("restored %+v\nwant %+v", dst.image.Load(), src.image.Load())
	}
	select {
	case <-watch:
	default:
		t.Fatal("Restore published no signal")
	}
}

func TestFSMRestoreRejectsCorruptSnapshots(t *testing.T) {
	for name, data := range map[string]string{
		"empty":                    "",
		"unknown format":           "\xff{}",
		"not json":                 "\x01{",
		"unknown field":            "\x01{\"surprise\":1}",
		"bad cluster id":           "\x01{\"cluster_id\":\"nope\",\"topics\":[]}",
		"null topic":               "\x01{\"topics\":[null]}",
		"zero topic id":            "\x01{\"topics\":[{\"Name\":\"a\",\"Partitions\":[{\"Index\":0,\"Leader\":1,\"Replicas\":[1],\"ISR\":[1]}]}]}",
		"leader not isr":           "\x01{\"topics\":[{\"Name\":\"a\",\"ID\":[1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],\"Partitions\":[{\"Index\":0,\"Leader\":2,\"Replicas\":[1],\"ISR\":[1]}]}]}",
		"index gap":                "\x01{\"topics\":[{\"Name\":\"a\",\"ID\":[1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],\"Partitions\":[{\"Index\":1,\"Leader\":1,\"Replicas\":[1],\"ISR\":[1]}]}]}",
		"duplicate topic id":       "\x01{\"topics\":[{\"Name\":\"a\",\"ID\":[1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],\"Partitions\":[{\"Index\":0,\"Leader\":1,\"Replicas\":[1],\"ISR\":[1]}]},{\"Name\":\"b\",\"ID\":[1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],\"Partitions\":[{\"Index\":0,\"Leader\":1,\"Replicas\":[1],\"ISR\":[1]}]}]}",
		"isr out of order":         "\x01{\"topics\":[{\"Name\":\"a\",\"ID\":[1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],\"Partitions\":[{\"Index\":0,\"Leader\":1,\"Replicas\":[1,2],\"ISR\":[2,1]}]}]}",
		"negative epoch":           "\x01{\"topics\":[{\"Name\":\"a\",\"ID\":[1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],\"Partitions\":[{\"Index\":0,\"Leader\":1,\"LeaderEpoch\":-1,\"Replicas\":[1],\"ISR\":[1]}]}]}",
		"negative partition epoch": "\x01{\"topics\":[{\"Name\":\"a\",\"ID\":[1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],\"Partitions\":[{\"Index\":0,\"Leader\":1,\"PartitionEpoch\":-1,\"Replicas\":[1],\"ISR\":[1]}]}]}",
		"too many replicas":        "\x01{\"topics\":[{\"Name\":\"a\",\"ID\":[1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],\"Partitions\":[{\"Index\":0,\"Leader\":0,\"Replicas\":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64],\"ISR\":[0]}]}]}",
		"duplicate topic":          "\x01{\"topics\":[{\"Name\":\"a\",\"ID\":[1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],\"Partitions\":[{\"Index\":0,\"Leader\":1,\"Replicas\":[1],\"ISR\":[1]}]},{\"Name\":\"a\",\"ID\":[2,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],\"Partitions\":[{\"Index\":0,\"Leader\":1,\"Replicas\":[1],\"ISR\":[1]}]}]}",
	} {
		f := newFSM()
		before := f.image.Load()
		if err := f.Restore(io.NopCloser(bytes.NewReader([]byte(data)))); err == nil {
			t.Errorf("%s: Restore accepted %q", name, data)
		}
		if f.image.Load() != before {
			t.Errorf("%s: a rejected snapshot changed the image", name)
		}
	}
}

func TestFSMApplyRejectsGarbage(t *testing.T) {
	f := newFSM()
	before := f.image.Load()
	res := f.Apply(&raft.Log{Index: 1, Type: raft.LogCommand, Data: []byte("garbage")}).(applyResult)
	if !errors.Is(res.err, ErrInvalidCommand) || f.image.Load() != before {
		t.Fatalf("garbage: err %v, image changed %v", res.err, f.image.Load() != before)
	}
}

// TestFSMAppliesOnlyCommandEntries: the FSM is a gateway; an entry that is
// not a command is refused even when its bytes decode as one.
func TestFSMAppliesOnlyCommandEntries(t *testing.T) {
	data, err := encodeCommand(createCmd("foo", 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []raft.LogType{raft.LogNoop, raft.LogBarrier, raft.LogConfiguration} {
		f := newFSM()
		before := f.image.Load()
		res := f.Apply(&raft.Log{Index: 1, Type: typ, Data: data}).(applyResult)
		if !errors.Is(res.err, ErrInvalidCommand) || f.image.Load() != before {
			t.Errorf("%v: err %v, image changed %v", typ, res.err, f.image.Load() != before)
		}
	}
	f := newFSM()
	if res := f.Apply(&raft.Log{Index: 1, Type: raft.LogCommand, Data: data}).(applyResult); res.err != nil || f.image.Load().Topics["foo"] == nil {
		t.Fatalf("as a command: %v", res.err)
	}
}

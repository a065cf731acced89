package record

import (
	"encoding/binary"
	"math"
	"testing"
)

// TestReaderVarints: a varint must end inside the bytes and, where Kafka
// reads an int32, fit one.
func TestReaderVarints(t *testing.T) {
	tests := []struct {
		name   string
		b      []byte
		int32s bool
		want   int64
		ok     bool
	}{
		{"varlong", binary.AppendVarint(nil, 1<<40), false, 1 << 40, true},
		{"varlong cut short", []byte{0x80}, false, 0, false},
		{"no bytes", nil, false, 0, false},
		{"int32 max", binary.AppendVarint(nil, math.MaxInt32), true, math.MaxInt32, true},
		{"int32 min", binary.AppendVarint(nil, math.MinInt32), true, math.MinInt32, true},
		{"past int32 max", binary.AppendVarint(nil, math.MaxInt32+1), true, 0, false},
		{"past int32 min", binary.AppendVarint(nil, math.MinInt32-1), true, 0, false},
	}
	for _, tt := range tests {
		r := reader{b: tt.b, ok: true}
		var got int64
		if tt.int32s {
			got = int64(r.varint())
		} else {
			got = r.varlong()
		}
		if got != tt.want || r.ok != tt.ok {
			t.Errorf("%s: %d, ok %v; want %d, ok %v", tt.name, got, r.ok, tt.want, tt.ok)
		}
		if tt.ok && len(r.b) != 0 {
			t.Errorf("%s: %d bytes left unread", tt.name, len(r.b))
		}
	}
}

func TestReaderByte(t *testing.T) {
	r := reader{b: []byte{7}, ok: true}
	if v := r.byte(); v != 7 || !r.ok || len(r.b) != 0 {
		t.Fatalf("the last byte: %d, ok %v, %d left", v, r.ok, len(r.b))
	}
	if v := r.byte(); v != 0 || r.ok {
		t.Fatalf("past the end: %d, ok %v", v, r.ok)
	}
}

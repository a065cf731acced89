package metadata

import (
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/strata-broker/strata/internal/clock"
)

// TestMuxRoutesByOpeningBytes: a connection that starts with forwardMagic
// goes to the forward server, one that starts as a Kafka frame to the Kafka
// server with its opening intact, any other to Raft with its opening intact;
// Close ends Accept and every connection.
func TestMuxRoutesByOpeningBytes(t *testing.T) {
	forwarded := make(chan string, 1)
	kafka := make(chan net.Conn, 1)
	m, err := newMuxListener("127.0.0.1:0", "", slog.New(slog.DiscardHandler), func(c net.Conn) {
		b, _ := io.ReadAll(c)
		forwarded <- string(b)
	}, kafka)
	if err != nil {
		t.Fatal(err)
	}
	addr := m.Addr().String()
	dial := func(payload string) net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(c, payload); err != nil {
			t.Fatal(err)
		}
		return c
	}

	// A silent connection does not hold up the next one.
	silent := dial("")
	defer silent.Close()

	toRaft := dial("\x01hello")
	got, err := m.Accept()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := io.ReadFull(got, buf); err != nil || string(buf) != "\x01hello" {
		t.Fatalf("Raft read %q, %v", buf, err)
	}

	toForward := dial(string([]byte{forwardMagic}) + "rest")
	if err := toForward.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	select {
	case b := <-forwarded:
		if b != "rest" {
			t.Fatalf("forward server read %q", b)
		}
	case <-time.After(clusterTimeout):
		t.Fatal("forwarding connection not served")
	}

	// A Kafka frame: size 0x00000010, then its body.
	frame := "\x00\x00\x00\x10" + "0123456789abcdef"
	toKafka := dial(frame)
	defer toKafka.Close()
	select {
	case c := <-kafka:
		got := make([]byte, len(frame))
		if _, err := io.ReadFull(c, got); err != nil || string(got) != frame {
			t.Fatalf("Kafka server read %q, %v", got, err)
		}
		c.Close()
	case <-time.After(clusterTimeout):
		t.Fatal("Kafka connection not handed over")
	}
	// Raft's AppendEntries opens with 0x00 and a msgpack map.
	appendEntries := dial("\x00\x87rest")
	defer appendEntries.Close()
	raftConn, err := m.Accept()
	if err != nil {
		t.Fatal(err)
	}
	opened := make([]byte, 6)
	if _, err := io.ReadFull(raftConn, opened); err != nil || string(opened) != "\x00\x87rest" {
		t.Fatalf("Raft read %q, %v", opened, err)
	}

	dialed, err := m.Dial(raft.ServerAddress(addr), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Accept(); err == nil {
		t.Fatal("Accept after Close")
	}
	// Close closed the connections it handed out: reads see EOF.
	for name, c := range map[string]net.Conn{"accepted": got, "dialed": dialed} {
		if _, err := c.Read(buf); err != io.EOF {
			t.Errorf("%s connection after Close: %v, want io.EOF", name, err)
		}
	}
	if _, err := toRaft.Read(buf); err == nil {
		t.Error("the peer of a closed connection can still read")
	}
	toRaft.Close()
	toForward.Close()
	if _, err := m.Dial(raft.ServerAddress(addr), time.Second); err == nil {
		t.Error("Dial after Close")
	}
}

func TestKindOf(t *testing.T) {
	for _, tc := range []struct {
		opening   string
		kind      connKind
		needsNext bool
	}{
		{"\xf5", connForward, false},
		{"\x01", connRaft, false}, // RequestVote
		{"\x04", connRaft, false}, // RequestPreVote
		{"\x00", connRaft, true},
		{"\x00\x00", connKafka, false}, // a frame under 64 KiB
		{"\x00\x7f", connKafka, false}, // just under 8 MiB
		{"\x00\x80", connRaft, false},  // AppendEntries: a fixmap
		{"\x00\x8f", connRaft, false},  // the largest fixmap
		{"\x00\xde", connRaft, false},  // map16
		{"\x00\xdf", connRaft, false},  // map32
		{"\x05\x00", connRaft, false},  // Raft decides what it cannot decode
	} {
		kind, needsNext := kindOf(tc.opening[0], []byte(tc.opening[1:]))
		if kind != tc.kind || needsNext != tc.needsNext {
			t.Errorf("kindOf(%q) = %v, %v; want %v, %v", tc.opening, kind, needsNext, tc.kind, tc.needsNext)
		}
	}
}

func TestMuxNeedsADialableAddress(t *testing.T) {
	if _, err := newMuxListener("0.0.0.0:0", "", slog.New(slog.DiscardHandler), nil, nil); err == nil ||
		!strings.Contains(err.Error(), "AdvertiseAddr") {
		t.Fatalf("listening on 0.0.0.0 without an advertised address: %v", err)
	}
	m, err := newMuxListener("0.0.0.0:0", "broker-1.example:9093", slog.New(slog.DiscardHandler), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if got := m.Addr().String(); got != "broker-1.example:9093" {
		t.Fatalf("Addr() = %q", got)
	}
}

func TestOptionsValidateQuorum(t *testing.T) {
	voters := map[int32]string{1: "10.0.0.1:9093", 2: "10.0.0.2:9093", 3: "Broker-3.example:09093"}
	base := func(id int32, bind string) Options {
		return Options{Dir: "d", NodeID: id, Clock: clock.Real{}, BindAddr: bind, Voters: voters}
	}
	with := func(o Options, f func(*Options)) Options { f(&o); return o }
	for name, o := range map[string]Options{
		"voter":                           base(1, "10.0.0.1:9093"),
		"voter, other spelling":           base(3, "broker-3.example:9093"),
		"voter behind an advertised addr": with(base(2, "0.0.0.0:9093"), func(o *Options) { o.AdvertiseAddr = "10.0.0.2:9093" }),
		"non-voter on any port":           base(4, "127.0.0.1:0"),
		"single node, advertised":         {Dir: "d", NodeID: 1, Clock: clock.Real{}, BindAddr: ":9093", AdvertiseAddr: "h:9093"},
	} {
		if err := o.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, o := range map[string]Options{
		"voters in memory":           base(1, ""),
		"negative voter id":          with(base(1, "10.0.0.1:9093"), func(o *Options) { o.Voters = map[int32]string{-1: "h:1", 1: "10.0.0.1:9093"} }),
		"voter without port":         with(base(1, "10.0.0.1:9093"), func(o *Options) { o.Voters = map[int32]string{1: "10.0.0.1"} }),
		"voter on port 0":            with(base(1, "10.0.0.1:0"), func(o *Options) { o.Voters = map[int32]string{1: "10.0.0.1:0"} }),
		"voter on 0.0.0.0":           with(base(1, "0.0.0.0:1"), func(o *Options) { o.Voters = map[int32]string{1: "0.0.0.0:1"} }),
		"two voters, one address":    with(base(1, "h:1"), func(o *Options) { o.Voters = map[int32]string{1: "h:1", 2: "H:1"} }),
		"voter advertising another":  base(1, "10.0.0.9:9093"),
		"voter bound to port 0":      base(1, "10.0.0.1:0"),
		"non-voter at a voter's":     base(4, "10.0.0.2:9093"),
		"advertised without TCP":     {Dir: "d", NodeID: 1, Clock: clock.Real{}, AdvertiseAddr: "h:1"},
		"advertised without port":    {Dir: "d", NodeID: 1, Clock: clock.Real{}, BindAddr: ":1", AdvertiseAddr: "h"},
		"advertised at 0.0.0.0":      {Dir: "d", NodeID: 1, Clock: clock.Real{}, BindAddr: ":1", AdvertiseAddr: "0.0.0.0:1"},
		"voter advertised elsewhere": with(base(2, "0.0.0.0:9093"), func(o *Options) { o.AdvertiseAddr = "10.0.0.3:9093" }),
	} {
		if err := o.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %+v", name, o)
		}
	}
}

package server

import (
	"log/slog"
	"net"
	"syscall"
	"testing"
)

// acceptRecorder hands each accepted connection to the test as well, and
// optionally closes it first, so that sizing its buffers fails.
type acceptRecorder struct {
	net.Listener
	accepted chan net.Conn
	closeIt  bool
}

func (l acceptRecorder) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err == nil {
		if l.closeIt {
			nc.Close()
		}
		l.accepted <- nc
	}
	return nc, err
}

func listenRecording(t *testing.T, closeIt bool) acceptRecorder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return acceptRecorder{Listener: ln, accepted: make(chan net.Conn, 16), closeIt: closeIt}
}

func sockopt(t *testing.T, nc net.Conn, opt int) int {
	t.Helper()
	rc, err := nc.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var gerr error
	if err := rc.Control(func(fd uintptr) { v, gerr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, opt) }); err != nil {
		t.Fatal(err)
	}
	if gerr != nil {
		t.Fatal(gerr)
	}
	return v
}

func TestSocketBufferSizes(t *testing.T) {
	// Small enough to be under net.core.[rw]mem_max and far below what
	// loopback autotuning reaches, so the value read back shows the setting.
	const size = 32 << 10
	ln := listenRecording(t, false)
	s := startServer(t, newFakeHandler(), func(o *Options) {
		o.Listener = ln
		o.SendBufferBytes, o.ReceiveBufferBytes = size, size
	})
	dial(t, s).apiVersions(1) // the buffers are sized before the connection is served
	nc := <-ln.accepted
	for _, opt := range []struct {
		name string
		opt  int
	}{{"SO_SNDBUF", syscall.SO_SNDBUF}, {"SO_RCVBUF", syscall.SO_RCVBUF}} {
		// Linux reports twice the size asked for (its bookkeeping overhead).
		if got := sockopt(t, nc, opt.opt); got < size || got > 2*size {
			t.Errorf("%s = %d, want in [%d, %d]", opt.name, got, size, 2*size)
		}
	}
}

func TestSocketBufferFailureIsLoggedOnce(t *testing.T) {
	ln := listenRecording(t, true)
	logs := &logRecorder{}
	s, served := serveUnmanaged(t, Options{
		Listener: ln, Handler: newFakeHandler(), Logger: slog.New(logs),
		SendBufferBytes: 1 << 16, ReceiveBufferBytes: 1 << 16,
	})
	dial(t, s).expectClosed()
	shutdownServed(t, s, served, t.Fatalf) // the accept loop, which logs, is over
	if warns := logs.at(slog.LevelWarn); len(warns) != 1 {
		t.Fatalf("warnings %v, want one", warns)
	}
}

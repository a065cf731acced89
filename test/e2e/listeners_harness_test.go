package e2e

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// startBrokerListeners starts a broker with one listener per name (each a
// listener name of listener.security.protocol.map, e.g. SASL_SSL), each on
// its own free loopback port; b.Listeners says which. Overrides as in
// startBroker.
func startBrokerListeners(t *testing.T, dir string, names []string, overrides ...string) *Broker {
	t.Helper()
	return startBrokerListenersConfig(t, dir, names, nil, overrides...)
}

// startBrokerListenersConfig is startBrokerListeners with a properties file:
// config, if not nil, writes it once the listeners' ports are picked (each
// start attempt) and returns its path, given to the broker as --config.
func startBrokerListenersConfig(t *testing.T, dir string, names []string, config func(*Broker) string, overrides ...string) *Broker {
	t.Helper()
	b := &Broker{Dir: dir, t: t, overrides: overrides, output: &syncBuffer{}, names: names, config: config}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("broker output (%v):\n%s", b.Listeners, b.output.String())
		}
	})
	t.Cleanup(func() {
		if b.running() {
			b.Stop()
		}
	})
	for attempt := 0; ; attempt++ {
		b.Listeners = make(map[string]string, len(names))
		for i, port := range freePorts(t, len(names)) {
			b.Listeners[names[i]] = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		}
		b.Addr = b.Listeners[names[0]]
		err := b.start()
		if err == nil {
			return b
		}
		if !errors.Is(err, errAddrInUse) || attempt >= bindRetries {
			t.Fatalf("starting broker: %v", err)
		}
	}
}

// listenersConfig is the listeners config of a broker with named listeners.
func (b *Broker) listenersConfig() string {
	parts := make([]string, len(b.names))
	for i, n := range b.names {
		parts[i] = n + "://" + b.Listeners[n]
	}
	return strings.Join(parts, ",")
}

// checkListening compares the ready line's addresses with what was asked.
func (b *Broker) checkListening(got map[string]string) error {
	want := map[string]string{"": b.Addr}
	if kafka := b.kafkaListeners(); len(kafka) > 1 {
		want = kafka
	}
	if !maps.Equal(got, want) {
		return fmt.Errorf("broker says it listens on %v, asked for %v", got, want)
	}
	return nil
}

// kafkaListeners is b.Listeners without the CONTROLLER listener, which
// carries the metadata quorum's Raft and is not in the ready line.
func (b *Broker) kafkaListeners() map[string]string {
	out := maps.Clone(b.Listeners)
	delete(out, controllerListener)
	return out
}

// freePorts picks n distinct free loopback ports: each is held until all
// are picked, so the kernel cannot hand out one of them twice, and none was
// handed out before in this process (claimPort).
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	ports := make([]int, 0, n)
	var held []net.Listener
	for len(ports) < n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("picking a free port: %v", err)
		}
		held = append(held, ln)
		if port := ln.Addr().(*net.TCPAddr).Port; claimPort(port) {
			ports = append(ports, port)
		}
	}
	for _, ln := range held {
		if err := ln.Close(); err != nil {
			t.Fatalf("releasing port %d: %v", ln.Addr().(*net.TCPAddr).Port, err)
		}
	}
	return ports
}

// handedOut are the ports freePorts gave to some test of this process: a
// broker stopped for a restart must find its port free again, so no other
// test gets it, even once the kernel offers it again.
var handedOut struct {
	sync.Mutex
	ports map[int]bool
}

// claimPort records port as handed out, unless it already was.
func claimPort(port int) bool {
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.ports == nil {
		handedOut.ports = map[int]bool{}
	}
	if handedOut.ports[port] {
		return false
	}
	handedOut.ports[port] = true
	return true
}

package e2e

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// The connection limits are dynamic broker configs, as in Kafka: set at run
// time with kafka-configs --entity-type brokers (here kadm), they apply to
// the next connection without a restart and leave the open ones alone; a
// restart keeps them; removed, the static value is back. The probes connect
// from 127.0.0.2, the admin client from 127.0.0.1, which the overrides spare.
func TestDynamicConnectionLimits(t *testing.T) {
	b := startBroker(t, t.TempDir())
	adm := newAdmin(t, b.Addr)
	node := brokerNodeID(t, adm)
	const probe = "127.0.0.2"
	first, admitted := dialProbe(t, probe, b.Addr)
	if !admitted {
		t.Fatal("a connection from 127.0.0.2 was refused with no limit set")
	}

	limits := []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "max.connections.per.ip", Value: kadm.StringPtr("2")},
		{Op: kadm.SetConfig, Name: "max.connections.per.ip.overrides", Value: kadm.StringPtr("127.0.0.1:1000")},
	}
	if err := alterBrokerConfigs(t, adm, limits, node); err != nil {
		t.Fatalf("setting max.connections.per.ip=2 on broker %d: %v", node, err)
	}
	second, _ := dialProbe(t, probe, b.Addr) // admitted before or after the change: the limit is 2
	waitForAdmission(t, probe, b.Addr, false, "max.connections.per.ip=2 with two connections open")
	if _, err := adm.BrokerMetadata(testContext(t, clientDeliveryTimeout)); err != nil {
		t.Fatalf("the admin client's connections, spared by the overrides: %v", err)
	}
	if _, err := first.Write(apiVersionsV0(8)); err != nil || !probeAnswered(first) {
		t.Fatalf("a connection open before the limit was set stopped being served (write: %v)", err)
	}
	closeConns([]net.Conn{first, second})
	waitForAdmission(t, probe, b.Addr, true, "the two connections closed")

	refuseProbe := []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "max.connections.per.ip.overrides", Value: kadm.StringPtr("127.0.0.1:1000,127.0.0.2:0")}}
	if err := alterBrokerConfigs(t, adm, refuseProbe); err != nil {
		t.Fatalf("setting cluster-wide overrides: %v", err)
	}
	// This broker's own overrides win over the cluster-wide ones: still
	// admitted once the change has had time to reach the listeners.
	time.Sleep(300 * time.Millisecond)
	if _, admitted := dialProbe(t, probe, b.Addr); !admitted {
		t.Fatal("the cluster-wide overrides replaced this broker's own")
	}
	unsetOwn := []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: "max.connections.per.ip.overrides"}}
	if err := alterBrokerConfigs(t, adm, unsetOwn, node); err != nil {
		t.Fatalf("removing this broker's overrides: %v", err)
	}
	waitForAdmission(t, probe, b.Addr, false, "the cluster-wide override 127.0.0.2:0")

	b.Stop()
	b.Restart()
	if _, admitted := dialProbe(t, probe, b.Addr); admitted {
		t.Fatal("after a restart, the dynamic override 127.0.0.2:0 no longer applies")
	}
	adm = newAdmin(t, b.Addr)
	unset := []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: "max.connections.per.ip.overrides"}}
	if err := alterBrokerConfigs(t, adm, unset); err != nil {
		t.Fatalf("removing the cluster-wide overrides: %v", err)
	}
	waitForAdmission(t, probe, b.Addr, true, "the cluster-wide overrides removed")
}

// waitForAdmission dials addr from the local address from until a
// connection is admitted (answered) or refused (closed unanswered), as want
// says, within 10 s: a dynamic config reaches the listeners a moment after
// the request that set it returns.
func waitForAdmission(t *testing.T, from, addr string, want bool, after string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, admitted := dialProbe(t, from, addr)
		c.Close()
		if admitted == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: connections from %s still admitted = %v after 10 s", after, from, !want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// dialProbe dials addr from the local address from, asks ApiVersions v0 and
// reports whether it was answered (admitted) or closed unanswered
// (refused). The test closes the connection.
func dialProbe(t *testing.T, from, addr string) (net.Conn, bool) {
	t.Helper()
	d := net.Dialer{Timeout: clientDialTimeout, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	writeAll(t, c, apiVersionsV0(7))
	return c, probeAnswered(c)
}

// probeAnswered reads one response frame from c within rawIOTimeout.
func probeAnswered(c net.Conn) bool {
	if err := c.SetReadDeadline(time.Now().Add(rawIOTimeout)); err != nil {
		return false
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return false
	}
	_, err := io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(size[:])))
	return err == nil
}

func closeConns(cs []net.Conn) {
	for _, c := range cs {
		c.Close()
	}
}

// max.connection.creation.rate (KIP-612) paces new connections past a
// burst: at 5 a second with a burst of 5 (two one-second quota windows),
// fifteen connections take at least two seconds, each is served, and the
// metrics count the ones held back.
func TestMaxConnectionCreationRate(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), "max.connection.creation.rate=5", "quota.window.num=2", "strata.metrics.listener=127.0.0.1:0")
	metricsURL := metricsBase(t, b) + "/metrics"
	start := time.Now()
	for i := range 15 {
		c, admitted := dialProbe(t, "127.0.0.1", b.Addr)
		c.Close()
		if !admitted {
			t.Fatalf("connection %d was not served", i)
		}
	}
	// The harness's own readiness check may have used the burst's first
	// tokens; ten past the burst at 5/s are two seconds either way.
	if took := time.Since(start); took < 1800*time.Millisecond {
		t.Fatalf("fifteen connections took %v; at 5/s past a burst of 5 they take at least 2 s", took)
	}
	// Each of the ten past the burst waits about 200 ms for its token unless
	// its own dial took that long; a margin for a slow machine.
	m := scrape(t, metricsURL)
	if paced, secs := m["strata_connections_paced_total"], m["strata_connection_pacing_seconds_total"]; paced < 5 || secs < 0.8 {
		t.Errorf("strata_connections_paced_total %v, strata_connection_pacing_seconds_total %v; want at least 5 and 0.8", paced, secs)
	}
}

// The listener-level limits are dynamic too (Kafka's ListenerConnectionQuota
// is reconfigurable): listener.name.plaintext.max.connection.creation.rate
// set on the broker paces that listener's next connections, and removed it
// paces none; one naming a listener the broker lacks, or a listener's TLS
// key, is refused.
func TestDynamicListenerConnectionLimits(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), "quota.window.num=2", "strata.metrics.listener=127.0.0.1:0")
	metricsURL := metricsBase(t, b) + "/metrics"
	adm := newAdmin(t, b.Addr)
	node := brokerNodeID(t, adm)
	paced := func() float64 { return scrape(t, metricsURL)["strata_connections_paced_total"] }
	probe := func() {
		c, admitted := dialProbe(t, "127.0.0.2", b.Addr)
		c.Close()
		if !admitted {
			t.Fatal("a paced connection was not served")
		}
	}

	rate := []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "listener.name.plaintext.max.connection.creation.rate", Value: kadm.StringPtr("2")}}
	if err := alterBrokerConfigs(t, adm, rate, node); err != nil {
		t.Fatalf("setting a listener's creation rate: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for paced() == 0 { // the change reaches the listener a moment after the answer
		if time.Now().After(deadline) {
			t.Fatal("no connection paced 10 s after the listener's rate was set to 2/s")
		}
		probe()
	}
	// The bucket is drained now: six more connections at 2/s take 3 s.
	start := time.Now()
	for range 6 {
		probe()
	}
	if took := time.Since(start); took < 2500*time.Millisecond {
		t.Fatalf("six connections at 2/s took %v, want about 3 s", took)
	}

	if err := alterBrokerConfigs(t, adm, []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: "listener.name.plaintext.max.connection.creation.rate"}}, node); err != nil {
		t.Fatalf("removing the listener's creation rate: %v", err)
	}
	deadline = time.Now().Add(10 * time.Second)
	for {
		before := paced()
		for range 5 {
			probe()
		}
		if paced() == before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("connections still paced 10 s after the listener's rate was removed")
		}
	}

	for _, bad := range []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "listener.name.external.max.connections", Value: kadm.StringPtr("5")},
		{Op: kadm.SetConfig, Name: "listener.name.plaintext.max.connections", Value: kadm.StringPtr("0")},
		{Op: kadm.SetConfig, Name: "listener.name.plaintext.ssl.client.auth", Value: kadm.StringPtr("required")},
	} {
		if err := alterBrokerConfigs(t, adm, []kadm.AlterConfig{bad}, node); err == nil {
			t.Errorf("setting %s=%s dynamically was accepted", bad.Name, *bad.Value)
		}
	}
}

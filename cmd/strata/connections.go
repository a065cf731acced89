package main

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/netip"
	"time"

	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/server"
)

// overrideLookupTimeout bounds the resolution of the host names of
// max.connections.per.ip.overrides and of ip quota entities.
const overrideLookupTimeout = 10 * time.Second

// resolveHost returns the addresses of a host name.
type resolveHost func(ctx context.Context, host string) ([]netip.Addr, error)

func systemResolver(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// serverConnLimits is c as the server applies it: the host names of
// max.connections.per.ip.overrides resolved (as Kafka does when it reads
// the config), every address of a name getting its count.
func serverConnLimits(ctx context.Context, c config.ConnectionLimits, burst time.Duration, resolve resolveHost) (server.ConnLimitsConfig, error) {
	overrides := make(map[netip.Addr]int, len(c.PerIPOverrides))
	for _, o := range c.PerIPOverrides {
		addrs, err := overrideAddrs(ctx, o.Host, resolve)
		if err != nil {
			return server.ConnLimitsConfig{}, err
		}
		for _, a := range addrs {
			a = a.Unmap()
			if prev, ok := overrides[a]; ok && prev != o.Count {
				return server.ConnLimitsConfig{}, fmt.Errorf("max.connections.per.ip.overrides gives %s two counts (%d, and %d through %s); list each address once", a, prev, o.Count, o.Host)
			}
			overrides[a] = o.Count
		}
	}
	var perListener map[string]server.ListenerLimits
	for name, ll := range c.PerListener {
		if perListener == nil {
			perListener = make(map[string]server.ListenerLimits, len(c.PerListener))
		}
		perListener[name] = server.ListenerLimits{MaxConnections: ll.Max, MaxCreationRate: unlimitedAsZero(ll.MaxCreationRate)}
	}
	return server.ConnLimitsConfig{
		PerListener:     perListener,
		MaxConnections:  c.Max,
		MaxPerIP:        c.MaxPerIP,
		OnlyOverrides:   c.MaxPerIP == 0,
		PerIPOverrides:  overrides,
		MaxCreationRate: unlimitedAsZero(c.MaxCreationRate),
		CreationBurst:   burst,
	}, nil
}

// unlimitedAsZero is a creation rate as the server takes it: Kafka's
// default, the Int maximum, means unlimited, which the server says with 0.
func unlimitedAsZero(rate int) int {
	if rate == math.MaxInt32 {
		return 0
	}
	return rate
}

// creationBurst is how long a burst of new connections
// max.connection.creation.rate lets through at once lasts at that rate:
// Kafka measures the rate over quota.window.num windows of
// quota.window.size.seconds, at least all but one of them.
func creationBurst(cfg *config.Broker) time.Duration {
	return time.Duration(cfg.QuotaWindowNum-1) * cfg.QuotaWindowSize
}

// newConnLimits builds the connection limits all listeners share from
// max.connections, max.connections.per.ip and its overrides.
func newConnLimits(ctx context.Context, c config.ConnectionLimits, burst time.Duration, resolve resolveHost) (*server.ConnLimits, error) {
	sc, err := serverConnLimits(ctx, c, burst, resolve)
	if err != nil {
		return nil, err
	}
	return server.NewConnLimits(sc)
}

// currentConnectionLimits are cfg's connection limits with the dynamic
// configs of the image (KIP-226: this broker's, then the cluster-wide).
func currentConnectionLimits(cfg *config.Broker, img *metadata.Image) (config.ConnectionLimits, error) {
	cluster, own := img.DynamicConfigsOf(cfg.NodeID)
	return cfg.WithDynamic(config.Dynamic{Default: cluster, Node: own}).ConnectionLimits()
}

// protectedListener reports whether max.connections spares the listener
// name: the inter-broker listener, when there are others, as Kafka's
// ConnectionQuotas does (a broker of one listener keeps its limit).
func protectedListener(cfg *config.Broker, name string) bool {
	return name == cfg.InterBrokerListener && len(cfg.Listeners) > 1
}

func overrideAddrs(ctx context.Context, host string, resolve resolveHost) ([]netip.Addr, error) {
	addrs, err := hostAddrs(ctx, host, resolve)
	if err != nil {
		return nil, fmt.Errorf("max.connections.per.ip.overrides: cannot resolve host %s (%v); give its IP address or fix the name", host, err)
	}
	return addrs, nil
}

// hostAddrs is the addresses host stands for: itself when it is an IP
// address, else what resolve finds for the name within
// overrideLookupTimeout (at least one).
func hostAddrs(ctx context.Context, host string, resolve resolveHost) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, overrideLookupTimeout)
	defer cancel()
	addrs, err := resolve(ctx, host)
	if err == nil && len(addrs) == 0 {
		err = fmt.Errorf("no address")
	}
	return addrs, err
}

package main

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"

	"github.com/strata-broker/strata/internal/quota"
)

// ipQuotaRates is the image's connection_creation_rate quotas of ip
// entities (KIP-612) as the server applies them: by address, and the
// default (nil when none). A host name's quota applies to each of its
// addresses, resolved now, as Kafka resolves the name when it applies the
// quota; an address named twice (in two spellings, or by a host name as
// well) gets the lower rate.
func ipQuotaRates(ctx context.Context, rates map[quota.Part]int, resolve resolveHost) (map[netip.Addr]int, *int, error) {
	var byAddr map[netip.Addr]int
	var def *int
	parts := slices.SortedFunc(maps.Keys(rates), func(a, b quota.Part) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name))
	})
	for _, p := range parts {
		rate := rates[p]
		if p.Kind == quota.Default {
			def = &rate
			continue
		}
		addrs, err := hostAddrs(ctx, p.Name, resolve)
		if err != nil {
			return nil, nil, fmt.Errorf("the connection_creation_rate quota of ip %s: cannot resolve the host (%v); set the quota on its IP address or fix the name", p.Name, err)
		}
		if byAddr == nil {
			byAddr = make(map[netip.Addr]int)
		}
		for _, a := range addrs {
			a = a.Unmap().WithZone("")
			if prev, ok := byAddr[a]; !ok || rate < prev {
				byAddr[a] = rate
			}
		}
	}
	return byAddr, def, nil
}

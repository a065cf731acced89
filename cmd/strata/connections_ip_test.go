package main

import (
	"context"
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/quota"
)

func TestIPQuotaRates(t *testing.T) {
	resolve := func(_ context.Context, host string) ([]netip.Addr, error) {
		switch host {
		case "app.example":
			return []netip.Addr{netip.MustParseAddr("10.0.0.7"), netip.MustParseAddr("::ffff:10.0.0.8")}, nil
		case "empty.example":
			return nil, nil
		}
		return nil, errors.New("no such host")
	}
	a := func(s string) netip.Addr { return netip.MustParseAddr(s) }
	five := 5
	for _, tc := range []struct {
		name    string
		rates   map[quota.Part]int
		want    map[netip.Addr]int
		wantDef *int
		err     string
	}{
		{name: "none"},
		{name: "an address and the default",
			rates: map[quota.Part]int{quota.NamedPart("127.0.0.1"): 10, quota.DefaultPart(): 5},
			want:  map[netip.Addr]int{a("127.0.0.1"): 10}, wantDef: &five},
		{name: "a mapped address counts as its IPv4 one",
			rates: map[quota.Part]int{quota.NamedPart("::ffff:127.0.0.1"): 3},
			want:  map[netip.Addr]int{a("127.0.0.1"): 3}},
		{name: "an address's zone does not count",
			rates: map[quota.Part]int{quota.NamedPart("fe80::1%eth0"): 4},
			want:  map[netip.Addr]int{a("fe80::1"): 4}},
		{name: "a host name stands for each of its addresses",
			rates: map[quota.Part]int{quota.NamedPart("app.example"): 2},
			want:  map[netip.Addr]int{a("10.0.0.7"): 2, a("10.0.0.8"): 2}},
		{name: "an address named twice gets the lower rate",
			rates: map[quota.Part]int{quota.NamedPart("app.example"): 2, quota.NamedPart("10.0.0.7"): 9, quota.NamedPart("::ffff:10.0.0.8"): 1},
			want:  map[netip.Addr]int{a("10.0.0.7"): 2, a("10.0.0.8"): 1}},
		{name: "a host that does not resolve",
			rates: map[quota.Part]int{quota.NamedPart("gone.example"): 2}, err: "ip gone.example: cannot resolve"},
		{name: "a host without an address",
			rates: map[quota.Part]int{quota.NamedPart("empty.example"): 2}, err: "ip empty.example: cannot resolve"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, def, err := ipQuotaRates(t.Context(), tc.rates, resolve)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(def, tc.wantDef) {
				t.Fatalf("ipQuotaRates = %v, %v, %v; want %v, %v", got, def, err, tc.want, tc.wantDef)
			}
		})
	}
}

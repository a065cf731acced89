package main

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/config"
)

func TestNewConnLimitsResolvesOverrides(t *testing.T) {
	hosts := map[string][]netip.Addr{
		"app-1": {netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("fd00::1")},
		"app-2": {netip.MustParseAddr("10.0.0.1")},
		"empty": nil,
	}
	resolve := func(_ context.Context, host string) ([]netip.Addr, error) {
		if a, ok := hosts[host]; ok {
			return a, nil
		}
		return nil, errors.New("no such host")
	}
	cases := []struct {
		overrides []config.HostLimit
		err       string
	}{
		{[]config.HostLimit{{Host: "127.0.0.1", Count: 3}, {Host: "app-1", Count: 5}}, ""},
		{[]config.HostLimit{{Host: "::ffff:10.0.0.1", Count: 5}, {Host: "app-1", Count: 5}}, ""}, // one address, one count
		{[]config.HostLimit{{Host: "app-1", Count: 5}, {Host: "app-2", Count: 6}}, "two counts"},
		{[]config.HostLimit{{Host: "nowhere", Count: 1}}, "cannot resolve host nowhere"},
		{[]config.HostLimit{{Host: "empty", Count: 1}}, "no address"},
	}
	for _, c := range cases {
		l, err := newConnLimits(context.Background(), config.ConnectionLimits{Max: 10, MaxPerIP: 2, PerIPOverrides: c.overrides}, time.Second, resolve)
		switch {
		case c.err == "" && (err != nil || l == nil):
			t.Errorf("%v: %v", c.overrides, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%v: err = %v, want one saying %q", c.overrides, err, c.err)
		}
	}
}

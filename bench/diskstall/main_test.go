package main

import (
	"testing"
	"time"
)

func TestEpisodes(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name   string
		stalls []stall
		want   []episode
		period time.Duration
	}{
		{"none", nil, nil, 0},
		{"one", []stall{{100 * ms, 12 * ms}}, []episode{{100 * ms, 112 * ms}}, 0},
		{
			"files caught by one pause are one episode, in any order",
			[]stall{{101 * ms, 11 * ms}, {100 * ms, 12 * ms}, {113 * ms, 6 * ms}},
			[]episode{{100 * ms, 119 * ms}},
			0,
		},
		{
			"a pause every 100 ms",
			[]stall{{100 * ms, 10 * ms}, {200 * ms, 12 * ms}, {301 * ms, 9 * ms}, {400 * ms, 15 * ms}},
			[]episode{{100 * ms, 110 * ms}, {200 * ms, 212 * ms}, {301 * ms, 310 * ms}, {400 * ms, 415 * ms}},
			100 * ms,
		},
		{
			"just past the gap starts a new episode",
			[]stall{{0, 5 * ms}, {7*ms + 1, 5 * ms}},
			[]episode{{0, 5 * ms}, {7*ms + 1, 12*ms + 1}},
			7*ms + 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := episodes(tt.stalls)
			if len(got) != len(tt.want) {
				t.Fatalf("episodes = %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("episodes = %v, want %v", got, tt.want)
				}
			}
			if p := medianPeriod(got); p != tt.period {
				t.Errorf("medianPeriod = %v, want %v", p, tt.period)
			}
		})
	}
}

func TestSummarizeStalledShare(t *testing.T) {
	ms := time.Millisecond
	lat := []time.Duration{ms, ms, 10 * ms, 20 * ms}
	stalls := []stall{{0, 10 * ms}, {100 * ms, 20 * ms}}
	r := summarize(lat, stalls, time.Second)
	if r.Syncs != 4 || r.Stalls != 2 || r.Episodes != 2 || r.EpisodePeriodMs != 100 || r.MaxMs != 20 {
		t.Fatalf("summarize = %+v", r)
	}
	if r.StalledShare < 0.0299 || r.StalledShare > 0.0301 {
		t.Errorf("StalledShare = %v, want 0.03", r.StalledShare)
	}
}

func TestCheckRefusesBadFlags(t *testing.T) {
	good := params{dir: "/tmp", files: 6, rateMBs: 100, writeBytes: 16 << 10, seconds: 5, stallMs: 5}
	if err := good.check(); err != nil {
		t.Fatalf("good params: %v", err)
	}
	for _, bad := range []func(*params){
		func(p *params) { p.dir = "" },
		func(p *params) { p.files = 0 },
		func(p *params) { p.rateMBs = 0 },
		func(p *params) { p.writeBytes = 100 },
		func(p *params) { p.seconds = 61 },
		func(p *params) { p.stallMs = 0 },
		func(p *params) { p.busy = -1 },
		func(p *params) { p.busy = 9 },
	} {
		p := good
		bad(&p)
		if err := p.check(); err == nil {
			t.Errorf("check(%+v) = nil, want an error", p)
		}
	}
}

package metadata

import (
	"errors"
	"testing"

	"github.com/strata-broker/strata/internal/quota"
)

func TestStoreAlterClientQuotas(t *testing.T) {
	ctx := t.Context()
	s := openStore(t, testOptions(t, t.TempDir(), ""))
	defer closeStore(t, s)
	type want = map[quota.Entity]map[string]float64

	callers := rates(1024, 2048)
	if err := s.AlterClientQuotas(ctx, []ClientQuotaAlteration{qAlt(qUserAlice, callers), qAlt(qClientDefault, rates(0, 10))}); err != nil {
		t.Fatal(err)
	}
	callers[produceRate] = 1 // the caller's map stays the caller's
	wantQuotas(want{qUserAlice: rates(1024, 2048), qClientDefault: rates(0, 10)})(t, s.Image())

	before := s.Image().Version
	for _, tc := range []struct {
		name string
		alts []ClientQuotaAlteration
		also error
	}{
		{"nothing", nil, nil},
		{"zero entity", []ClientQuotaAlteration{qAlt(quota.Entity{}, rates(1, 0))}, nil},
		{"empty user name", []ClientQuotaAlteration{qAlt(quota.Entity{User: quota.NamedPart("")}, rates(1, 0))}, nil},
		{"entity twice", []ClientQuotaAlteration{qAlt(qUserBob, rates(1, 0)), qAlt(qUserBob, nil, consumeRate)}, nil},
		{"no key", []ClientQuotaAlteration{qAlt(qUserBob, nil)}, nil},
		{"unknown key", []ClientQuotaAlteration{qAlt(qUserBob, map[string]float64{"connection_creation_rate": 10})}, quota.ErrInvalidKey},
		{"bad value", []ClientQuotaAlteration{qAlt(qUserBob, rates(-5, 0))}, quota.ErrInvalidValue},
		{"set and removed", []ClientQuotaAlteration{qAlt(qUserBob, rates(5, 0), produceRate)}, nil},
		{"good and bad", []ClientQuotaAlteration{qAlt(qUserBob, rates(5, 0)), qAlt(qUserAlice, nil, "bogus")}, quota.ErrInvalidKey},
	} {
		err := s.AlterClientQuotas(ctx, tc.alts)
		if !errors.Is(err, ErrInvalidClientQuota) || tc.also != nil && !errors.Is(err, tc.also) {
			t.Errorf("%s: %v, want ErrInvalidClientQuota (and %v)", tc.name, err, tc.also)
		}
	}
	if v := s.Image().Version; v != before {
		t.Errorf("refusals took log entries: version %d, was %d", v, before)
	}
	wantQuotas(want{qUserAlice: rates(1024, 2048), qClientDefault: rates(0, 10)})(t, s.Image())

	alter := func(alts ...ClientQuotaAlteration) {
		t.Helper()
		if err := s.AlterClientQuotas(ctx, alts); err != nil {
			t.Fatal(err)
		}
	}
	alter(qAlt(qUserAlice, rates(4096, 0), consumeRate), qAlt(qClientDefault, nil, produceRate)) // a key it lacks
	wantQuotas(want{qUserAlice: rates(4096, 0), qClientDefault: rates(0, 10)})(t, s.Image())
	alter(qAlt(qClientDefault, nil, consumeRate))
	wantQuotas(want{qUserAlice: rates(4096, 0)})(t, s.Image())
	alter(qAlt(qUserAlice, nil, produceRate), qAlt(qUserBob, nil, consumeRate))
	wantQuotas(nil)(t, s.Image())
}

// TestStoreClientQuotasSurviveRestart: quotas are in the quorum, not in
// memory: they come back after Close/Open, from the log alone or from a
// snapshot plus the log, removals included.
func TestStoreClientQuotasSurviveRestart(t *testing.T) {
	for _, mode := range []string{"log only", "snapshot then log"} {
		t.Run(mode, func(t *testing.T) {
			ctx := t.Context()
			o := testOptions(t, t.TempDir(), "")
			st := openStore(t, o)
			alter := func(alts ...ClientQuotaAlteration) {
				t.Helper()
				if err := st.AlterClientQuotas(ctx, alts); err != nil {
					t.Fatal(err)
				}
			}
			alter(qAlt(qUserAlice, rates(1024, 2048)), qAlt(qAliceAnyClient, rates(1, 0)))
			alter(qAlt(qUserDefault, rates(0, 7)))
			alter(qAlt(qAliceAnyClient, nil, produceRate)) // gone before the snapshot
			if mode == "snapshot then log" {
				if err := st.raft.Snapshot().Error(); err != nil {
					t.Fatalf("forced snapshot: %v", err)
				}
			}
			alter(qAlt(qUserAlice, nil, consumeRate), qAlt(qClientApp, rates(3, 0)))
			want := map[quota.Entity]map[string]float64{qUserAlice: rates(1024, 0), qUserDefault: rates(0, 7), qClientApp: rates(3, 0)}
			wantQuotas(want)(t, st.Image())
			before := st.Image()
			closeStore(t, st)

			st = openStore(t, o)
			defer closeStore(t, st)
			sameState(t, st.Image(), before)
			wantQuotas(want)(t, st.Image())
		})
	}
}

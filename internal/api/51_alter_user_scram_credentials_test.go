package api

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/sasl"
)

func TestPlanScramAlterations(t *testing.T) {
	salted256, err := sasl.SaltPassword(sasl.ScramSHA256, "pw", []byte("salt"), 4096)
	if err != nil {
		t.Fatal(err)
	}
	up := func(user string, mech int8, iterations int32, salted []byte) kmsg.AlterUserSCRAMCredentialsRequestUpsertion {
		u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
		u.Name, u.Mechanism, u.Iterations, u.Salt, u.SaltedPassword = user, mech, iterations, []byte("salt"), salted
		return u
	}
	del := func(user string, mech int8) kmsg.AlterUserSCRAMCredentialsRequestDeletion {
		d := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
		d.Name, d.Mechanism = user, mech
		return d
	}
	tests := []struct {
		name string
		dels []kmsg.AlterUserSCRAMCredentialsRequestDeletion
		ups  []kmsg.AlterUserSCRAMCredentialsRequestUpsertion
		want map[string]int16 // user → error code
	}{
		{"upsert", nil, []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{up("a", 1, 4096, salted256)}, map[string]int16{"a": 0}},
		{"delete one, upsert another mechanism", []kmsg.AlterUserSCRAMCredentialsRequestDeletion{del("a", 2)},
			[]kmsg.AlterUserSCRAMCredentialsRequestUpsertion{up("a", 1, 4096, salted256)}, map[string]int16{"a": 0}},
		{"empty user", nil, []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{up("", 1, 4096, salted256)}, map[string]int16{"": kerr.UnacceptableCredential.Code}},
		{"unknown mechanism", []kmsg.AlterUserSCRAMCredentialsRequestDeletion{del("a", 0)}, nil, map[string]int16{"a": kerr.UnsupportedSaslMechanism.Code}},
		{"too few iterations", nil, []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{up("a", 1, 4095, salted256)}, map[string]int16{"a": kerr.UnacceptableCredential.Code}},
		{"too many iterations", nil, []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{up("a", 1, 16385, salted256)}, map[string]int16{"a": kerr.UnacceptableCredential.Code}},
		{"salted password of the other hash (taken, as Kafka)", nil, []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{up("a", 2, 4096, salted256)}, map[string]int16{"a": 0}},
		{"empty salted password", nil, []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{up("a", 2, 4096, nil)}, map[string]int16{"a": kerr.UnacceptableCredential.Code}},
		{"same mechanism deleted and upserted", []kmsg.AlterUserSCRAMCredentialsRequestDeletion{del("a", 1)},
			[]kmsg.AlterUserSCRAMCredentialsRequestUpsertion{up("a", 1, 4096, salted256)}, map[string]int16{"a": kerr.DuplicateResource.Code}},
		{"one bad user leaves the other alone", nil, []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{up("a", 1, 100, salted256), up("b", 1, 4096, salted256)},
			map[string]int16{"a": kerr.UnacceptableCredential.Code, "b": 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
			req.Deletions, req.Upsertions = tt.dels, tt.ups
			got := planScramAlterations(req)
			if len(got) != len(tt.want) {
				t.Fatalf("%d alterations, want %d", len(got), len(tt.want))
			}
			for _, a := range got {
				if a.code != tt.want[a.user] {
					t.Errorf("user %q: code %d (%s), want %d", a.user, a.code, a.msg, tt.want[a.user])
				}
				if a.code == 0 && len(a.upserts)+len(a.deletions) == 0 {
					t.Errorf("user %q: accepted with nothing to do", a.user)
				}
			}
		})
	}
}

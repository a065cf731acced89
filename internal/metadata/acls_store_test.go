package metadata

import (
	"errors"
	"reflect"
	"testing"

	"github.com/strata-broker/strata/internal/acl"
)

func TestStoreAcls(t *testing.T) {
	ctx := t.Context()
	s := openStore(t, testOptions(t, t.TempDir(), ""))
	defer closeStore(t, s)

	caller := []acl.Binding{aclClusterAlter, aclTopicRead, aclTopicRead}
	if err := s.CreateAcls(ctx, caller); err != nil {
		t.Fatal(err)
	}
	caller[1].ResourceName = "scribbled" // the caller's slice stays the caller's
	wantAcls(aclTopicRead, aclClusterAlter)(t, s.Image())
	idx := s.Image().AclIndex()

	// Creating what is stored changes nothing, not even the index.
	if err := s.CreateAcls(ctx, []acl.Binding{aclTopicRead}); err != nil {
		t.Fatal(err)
	}
	if s.Image().AclIndex() != idx {
		t.Error("creating a stored binding rebuilt the index")
	}

	tooMany := make([]acl.Binding, MaxAclsPerCommand+1)
	for i := range tooMany {
		tooMany[i] = aclGroupRead
	}
	version := s.Image().Version
	for _, tc := range []struct {
		name string
		run  func() error
	}{
		{"create none", func() error { return s.CreateAcls(ctx, nil) }},
		{"create too many", func() error { return s.CreateAcls(ctx, tooMany) }},
		{"create a filter", func() error {
			return s.CreateAcls(ctx, []acl.Binding{aclWith(func(b *acl.Binding) { b.ResourceType = acl.ResourceAny })})
		}},
		{"create valid and invalid", func() error {
			return s.CreateAcls(ctx, []acl.Binding{aclGroupRead, aclWith(func(b *acl.Binding) { b.Host = "" })})
		}},
		{"create not UTF-8", func() error {
			return s.CreateAcls(ctx, []acl.Binding{aclWith(func(b *acl.Binding) { b.ResourceName = "\xff" })})
		}},
		{"delete too many", func() error { return s.DeleteAcls(ctx, tooMany) }},
		{"delete not UTF-8", func() error {
			return s.DeleteAcls(ctx, []acl.Binding{aclWith(func(b *acl.Binding) { b.ResourceName = "orders\xff" })})
		}},
	} {
		if err := tc.run(); !errors.Is(err, ErrInvalidAcl) {
			t.Errorf("%s: %v, want ErrInvalidAcl", tc.name, err)
		}
	}
	// What the Store refuses itself takes no log entry.
	if s.Image().Version != version {
		t.Errorf("refusals moved the version from %d to %d", version, s.Image().Version)
	}
	wantAcls(aclTopicRead, aclClusterAlter)(t, s.Image())

	// Nothing to delete is no change and takes no log entry.
	if err := s.DeleteAcls(ctx, nil); err != nil || s.Image().Version != version {
		t.Fatalf("delete nothing: %v, version %d (was %d)", err, s.Image().Version, version)
	}
	if err := s.DeleteAcls(ctx, []acl.Binding{aclTopicRead, aclGroupRead}); err != nil {
		t.Fatal(err)
	}
	wantAcls(aclClusterAlter)(t, s.Image())
	// Deleting again, as a proposer with a stale image would, is harmless.
	if err := s.DeleteAcls(ctx, []acl.Binding{aclTopicRead}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteAcls(ctx, []acl.Binding{aclClusterAlter}); err != nil {
		t.Fatal(err)
	}
	img := s.Image()
	if img.Acls() != nil || img.AclIndex() == nil || img.AclIndex().Len() != 0 {
		t.Fatalf("after deleting every binding: %+v, index of %d", img.Acls(), img.AclIndex().Len())
	}
}

// TestStoreAclsSurviveRestart: ACLs are in the quorum, not in memory: they
// come back after Close/Open, from the log alone or from a snapshot plus
// the log, deletions included, and can be changed after.
func TestStoreAclsSurviveRestart(t *testing.T) {
	for _, mode := range []string{"log only", "snapshot then log"} {
		t.Run(mode, func(t *testing.T) {
			ctx := t.Context()
			o := testOptions(t, t.TempDir(), "")
			st := openStore(t, o)
			create := func(bs ...acl.Binding) {
				t.Helper()
				if err := st.CreateAcls(ctx, bs); err != nil {
					t.Fatalf("create: %v", err)
				}
			}
			del := func(bs ...acl.Binding) {
				t.Helper()
				if err := st.DeleteAcls(ctx, bs); err != nil {
					t.Fatalf("delete: %v", err)
				}
			}
			unicode := aclWith(func(b *acl.Binding) { b.ResourceName, b.Principal = "ördërs \"q\" 🦀", "User:ü:x" })
			create(aclTopicRead, aclTopicWrite, unicode)
			create(aclGroupRead)
			del(aclTopicWrite) // gone before the snapshot
			if mode == "snapshot then log" {
				if err := st.raft.Snapshot().Error(); err != nil {
					t.Fatalf("forced snapshot: %v", err)
				}
			}
			// After the snapshot (if any): replayed from the log.
			create(aclClusterAlter, aclTopicPrefixed)
			del(aclGroupRead, aclTopicWrite)
			want := []acl.Binding{aclTopicRead, aclTopicPrefixed, unicode, aclClusterAlter}
			wantAcls(want...)(t, st.Image())
			before := st.Image()
			closeStore(t, st)

			st = openStore(t, o)
			defer closeStore(t, st)
			got := st.Image()
			sameState(t, got, before)
			wantAcls(want...)(t, got)
			del(aclTopicRead)
			create(aclGroupRead)
			wantAcls(aclGroupRead, aclTopicPrefixed, unicode, aclClusterAlter)(t, st.Image())
		})
	}
}

// TestLoadOfflineSeesAcls: the offline image holds the ACLs too, from the
// log alone or a snapshot plus the log.
func TestLoadOfflineSeesAcls(t *testing.T) {
	for _, mode := range []string{"log only", "snapshot then log"} {
		t.Run(mode, func(t *testing.T) {
			ctx := t.Context()
			o := testOptions(t, t.TempDir(), "")
			st := openStore(t, o)
			if err := st.CreateAcls(ctx, []acl.Binding{aclTopicRead, aclGroupRead}); err != nil {
				t.Fatal(err)
			}
			if mode == "snapshot then log" {
				if err := st.raft.Snapshot().Error(); err != nil {
					t.Fatalf("forced snapshot: %v", err)
				}
			}
			if err := st.CreateAcls(ctx, []acl.Binding{aclClusterAlter}); err != nil {
				t.Fatal(err)
			}
			if err := st.DeleteAcls(ctx, []acl.Binding{aclTopicRead}); err != nil {
				t.Fatal(err)
			}
			want := st.Image()
			closeStore(t, st)

			got, err := LoadOffline(o.Dir)
			if err != nil {
				t.Fatalf("LoadOffline: %v", err)
			}
			wantAcls(aclGroupRead, aclClusterAlter)(t, got.Image)
			if !reflect.DeepEqual(got.Image.AclIndex(), want.AclIndex()) {
				t.Error("the offline index differs from the store's")
			}
		})
	}
}

package metadata

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/acl"
)

// Valid bindings, in Acls order.
var (
	aclTopicRead = acl.Binding{ResourceType: acl.ResourceTopic, ResourceName: "orders", PatternType: acl.PatternLiteral,
		Principal: "User:alice", Host: "*", Operation: acl.OpRead, Permission: acl.PermissionAllow}
	aclTopicWrite = acl.Binding{ResourceType: acl.ResourceTopic, ResourceName: "orders", PatternType: acl.PatternLiteral,
		Principal: "User:alice", Host: "*", Operation: acl.OpWrite, Permission: acl.PermissionAllow}
	aclTopicPrefixed = acl.Binding{ResourceType: acl.ResourceTopic, ResourceName: "orders", PatternType: acl.PatternPrefixed,
		Principal: "User:bob", Host: "10.0.0.1", Operation: acl.OpRead, Permission: acl.PermissionDeny}
	aclGroupRead = acl.Binding{ResourceType: acl.ResourceGroup, ResourceName: "billing", PatternType: acl.PatternLiteral,
		Principal: "User:alice", Host: "*", Operation: acl.OpRead, Permission: acl.PermissionAllow}
	aclClusterAlter = acl.Binding{ResourceType: acl.ResourceCluster, ResourceName: "kafka-cluster", PatternType: acl.PatternLiteral,
		Principal: "User:admin", Host: "*", Operation: acl.OpAlter, Permission: acl.PermissionAllow}
)

func createAcls(bs ...acl.Binding) *createAclsCmd { return &createAclsCmd{Bindings: toWireAcls(bs)} }
func deleteAcls(bs ...acl.Binding) *deleteAclsCmd { return &deleteAclsCmd{Bindings: toWireAcls(bs)} }

// aclWith is aclTopicRead changed by edit.
func aclWith(edit func(*acl.Binding)) acl.Binding {
	b := aclTopicRead
	edit(&b)
	return b
}

// aclInvariantErr checks the ACL invariants of Image.
func aclInvariantErr(img *Image) error {
	if img.acls == nil || img.aclIndex == nil {
		return errors.New("nil ACL set or index")
	}
	for b := range img.acls {
		if err := validateAcl(b); err != nil {
			return err
		}
	}
	if len(img.acls) == 0 && img.aclIndex != emptyAclIndex {
		return errors.New("an image without ACLs has its own index")
	}
	if want := acl.NewIndex(img.Acls()); !reflect.DeepEqual(img.aclIndex, want) {
		return errors.New("the ACL index is not that of the image's bindings")
	}
	return nil
}

// wantAcls checks that img holds exactly want.
func wantAcls(want ...acl.Binding) func(*testing.T, *Image) {
	return func(t *testing.T, img *Image) {
		t.Helper()
		model := map[acl.Binding]bool{}
		for _, b := range want {
			model[b] = true
		}
		if err := sameAclsAs(img, model); err != nil {
			t.Error(err)
		}
	}
}

// sameAclsAs compares img's bindings with a plain set, through the
// exported accessors only.
func sameAclsAs(img *Image, model map[acl.Binding]bool) error {
	got := img.Acls()
	if len(got) != len(model) {
		return fmt.Errorf("Acls() = %+v, want the %d of %+v", got, len(model), model)
	}
	for i, b := range got {
		if !model[b] {
			return fmt.Errorf("Acls() holds %+v, which is not stored", b)
		}
		if i > 0 && compareAcls(got[i-1], b) >= 0 {
			return fmt.Errorf("Acls() out of order at %d: %+v", i, got)
		}
	}
	if want := acl.NewIndex(got); !reflect.DeepEqual(img.AclIndex(), want) {
		return errors.New("AclIndex() is not the index of Acls()")
	}
	return nil
}

func TestApplyAcls(t *testing.T) {
	withRead := func(t *testing.T) *Image { return build(t, createAcls(aclTopicRead)) }
	withThree := func(t *testing.T) *Image {
		return build(t, createAcls(aclTopicRead, aclGroupRead), createAcls(aclClusterAlter))
	}
	tooMany := make([]acl.Binding, MaxAclsPerCommand+1)
	for i := range tooMany {
		tooMany[i] = aclTopicRead
	}
	tests := []applyCase{
		{name: "create one", cmd: createAcls(aclTopicRead), check: wantAcls(aclTopicRead)},
		{name: "create several", cmd: createAcls(aclClusterAlter, aclTopicRead, aclGroupRead),
			check: wantAcls(aclTopicRead, aclGroupRead, aclClusterAlter)},
		{name: "create adds to the stored", setup: withRead, cmd: createAcls(aclTopicWrite),
			check: wantAcls(aclTopicRead, aclTopicWrite)},
		{name: "create what is stored is no change", setup: withRead, cmd: createAcls(aclTopicRead),
			check: wantAcls(aclTopicRead)},
		{name: "create twice in one command stores it once", cmd: createAcls(aclTopicRead, aclTopicRead),
			check: wantAcls(aclTopicRead)},
		{name: "create stored and new", setup: withRead, cmd: createAcls(aclTopicRead, aclTopicPrefixed),
			check: wantAcls(aclTopicRead, aclTopicPrefixed)},
		{name: "create the most at once", cmd: createAcls(tooMany[1:]...), check: wantAcls(aclTopicRead)},
		{name: "create non-ASCII strings", cmd: createAcls(aclWith(func(b *acl.Binding) {
			b.ResourceName, b.Principal = "ördërs-🦀", "User:ünïcode"
		}))},
		// Every field tells bindings apart.
		{name: "create differing in one field", setup: withRead, cmd: createAcls(
			aclWith(func(b *acl.Binding) { b.ResourceType = acl.ResourceGroup }),
			aclWith(func(b *acl.Binding) { b.ResourceName = "Orders" }),
			aclWith(func(b *acl.Binding) { b.PatternType = acl.PatternPrefixed }),
			aclWith(func(b *acl.Binding) { b.Principal = "User:Alice" }),
			aclWith(func(b *acl.Binding) { b.Host = "10.0.0.1" }),
			aclWith(func(b *acl.Binding) { b.Operation = acl.OpDescribe }),
			aclWith(func(b *acl.Binding) { b.Permission = acl.PermissionDeny })),
			check: func(t *testing.T, img *Image) {
				if n := len(img.Acls()); n != 8 {
					t.Errorf("%d bindings, want 8: %+v", n, img.Acls())
				}
			}},

		{name: "create none", cmd: createAcls(), wantErr: ErrInvalidAcl},
		{name: "create empty list", cmd: &createAclsCmd{Bindings: []wireAcl{}}, wantErr: ErrInvalidAcl},
		{name: "create too many", cmd: createAcls(tooMany...), wantErr: ErrInvalidAcl},
		{name: "create unknown resource type", cmd: createAcls(aclWith(func(b *acl.Binding) { b.ResourceType = acl.ResourceUnknown })), wantErr: ErrInvalidAcl},
		{name: "create any resource type", cmd: createAcls(aclWith(func(b *acl.Binding) { b.ResourceType = acl.ResourceAny })), wantErr: ErrInvalidAcl},
		{name: "create unknown pattern", cmd: createAcls(aclWith(func(b *acl.Binding) { b.PatternType = acl.PatternUnknown })), wantErr: ErrInvalidAcl},
		{name: "create any pattern", cmd: createAcls(aclWith(func(b *acl.Binding) { b.PatternType = acl.PatternAny })), wantErr: ErrInvalidAcl},
		{name: "create match pattern", cmd: createAcls(aclWith(func(b *acl.Binding) { b.PatternType = acl.PatternMatch })), wantErr: ErrInvalidAcl},
		{name: "create unknown operation", cmd: createAcls(aclWith(func(b *acl.Binding) { b.Operation = acl.OpUnknown })), wantErr: ErrInvalidAcl},
		{name: "create any operation", cmd: createAcls(aclWith(func(b *acl.Binding) { b.Operation = acl.OpAny })), wantErr: ErrInvalidAcl},
		{name: "create unknown permission", cmd: createAcls(aclWith(func(b *acl.Binding) { b.Permission = acl.PermissionUnknown })), wantErr: ErrInvalidAcl},
		{name: "create any permission", cmd: createAcls(aclWith(func(b *acl.Binding) { b.Permission = acl.PermissionAny })), wantErr: ErrInvalidAcl},
		{name: "create resource name not UTF-8", cmd: createAcls(aclWith(func(b *acl.Binding) { b.ResourceName = "ord\xffers" })), wantErr: ErrInvalidAcl},
		{name: "create principal not UTF-8", cmd: createAcls(aclWith(func(b *acl.Binding) { b.Principal = "User:\xc3" })), wantErr: ErrInvalidAcl},
		{name: "create host not UTF-8", cmd: createAcls(aclWith(func(b *acl.Binding) { b.Host = "\xff" })), wantErr: ErrInvalidAcl},
		// All or nothing: the valid bindings are not stored either
		// (applyChecked checks that the image is unchanged).
		{name: "create valid ones with an invalid one", setup: withRead,
			cmd: createAcls(aclGroupRead, aclWith(func(b *acl.Binding) { b.Operation = acl.OpAny }), aclClusterAlter), wantErr: ErrInvalidAcl},

		{name: "delete one", setup: withThree, cmd: deleteAcls(aclGroupRead), check: wantAcls(aclTopicRead, aclClusterAlter)},
		{name: "delete all", setup: withThree, cmd: deleteAcls(aclClusterAlter, aclTopicRead, aclGroupRead),
			check: func(t *testing.T, img *Image) {
				wantAcls()(t, img)
				if img.AclIndex() != emptyAclIndex {
					t.Error("an image whose ACLs are all deleted keeps an index of its own")
				}
			}},
		{name: "delete what is not stored is ignored", setup: withThree, cmd: deleteAcls(aclTopicWrite),
			check: wantAcls(aclTopicRead, aclGroupRead, aclClusterAlter)},
		{name: "delete from no ACLs", cmd: deleteAcls(aclTopicRead), check: wantAcls()},
		{name: "delete stored and not stored", setup: withThree, cmd: deleteAcls(aclTopicWrite, aclGroupRead, aclTopicPrefixed),
			check: wantAcls(aclTopicRead, aclClusterAlter)},
		{name: "delete twice in one command", setup: withThree, cmd: deleteAcls(aclGroupRead, aclGroupRead),
			check: wantAcls(aclTopicRead, aclClusterAlter)},
		{name: "delete differing in one field is ignored", setup: withRead, cmd: deleteAcls(
			aclWith(func(b *acl.Binding) { b.ResourceType = acl.ResourceGroup }),
			aclWith(func(b *acl.Binding) { b.ResourceName = "Orders" }),
			aclWith(func(b *acl.Binding) { b.PatternType = acl.PatternPrefixed }),
			aclWith(func(b *acl.Binding) { b.Principal = "User:Alice" }),
			aclWith(func(b *acl.Binding) { b.Host = "10.0.0.1" }),
			aclWith(func(b *acl.Binding) { b.Operation = acl.OpDescribe }),
			aclWith(func(b *acl.Binding) { b.Permission = acl.PermissionDeny })),
			check: wantAcls(aclTopicRead)},
		// A filter is not a binding: it matches nothing stored.
		{name: "delete a filter deletes nothing", setup: withRead, cmd: deleteAcls(aclWith(func(b *acl.Binding) {
			b.ResourceType, b.PatternType, b.Operation, b.Permission = acl.ResourceAny, acl.PatternAny, acl.OpAny, acl.PermissionAny
		})), check: wantAcls(aclTopicRead)},
		{name: "delete the most at once", setup: withRead, cmd: deleteAcls(tooMany[1:]...), check: wantAcls()},

		{name: "delete none", setup: withRead, cmd: deleteAcls(), wantErr: ErrInvalidAcl},
		{name: "delete too many", setup: withRead, cmd: deleteAcls(tooMany...), wantErr: ErrInvalidAcl},
		{name: "delete not UTF-8", setup: withRead,
			cmd: deleteAcls(aclTopicRead, aclWith(func(b *acl.Binding) { b.Principal = "User:\xff" })), wantErr: ErrInvalidAcl},
	}
	runApplyCases(t, tests)
}

// TestAclsOrder pins the order of Image.Acls and that its slice is the
// caller's.
func TestAclsOrder(t *testing.T) {
	b := func(rt acl.ResourceType, name string, pt acl.PatternType, principal, host string, op acl.Operation, perm acl.Permission) acl.Binding {
		return acl.Binding{ResourceType: rt, ResourceName: name, PatternType: pt, Principal: principal, Host: host, Operation: op, Permission: perm}
	}
	want := []acl.Binding{ // each differs from the one before in one field, the last that differs first
		b(acl.ResourceTopic, "a", acl.PatternLiteral, "User:a", "*", acl.OpRead, acl.PermissionDeny),
		b(acl.ResourceTopic, "a", acl.PatternLiteral, "User:a", "*", acl.OpRead, acl.PermissionAllow),
		b(acl.ResourceTopic, "a", acl.PatternLiteral, "User:a", "*", acl.OpWrite, acl.PermissionDeny),
		b(acl.ResourceTopic, "a", acl.PatternLiteral, "User:a", "h", acl.OpRead, acl.PermissionDeny),
		b(acl.ResourceTopic, "a", acl.PatternLiteral, "User:b", "*", acl.OpRead, acl.PermissionDeny),
		b(acl.ResourceTopic, "a", acl.PatternPrefixed, "User:a", "*", acl.OpRead, acl.PermissionDeny),
		b(acl.ResourceTopic, "b", acl.PatternLiteral, "User:a", "*", acl.OpRead, acl.PermissionDeny),
		b(acl.ResourceGroup, "a", acl.PatternLiteral, "User:a", "*", acl.OpRead, acl.PermissionDeny),
	}
	shuffled := slices.Clone(want)
	slices.Reverse(shuffled)
	shuffled[1], shuffled[5] = shuffled[5], shuffled[1]
	img := build(t, createAcls(shuffled[:4]...), createAcls(shuffled[4:]...))
	got := img.Acls()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Acls() =\n%+v\nwant\n%+v", got, want)
	}
	got[0].ResourceName = "scribbled"
	if again := img.Acls(); !reflect.DeepEqual(again, want) {
		t.Fatalf("writing to the result changed the image: %+v", again)
	}
	if got := emptyImage().Acls(); got != nil {
		t.Errorf("Acls() of no ACLs = %+v, want nil", got)
	}
}

// TestAclImagesAreCopyOnWrite: an image holds the bindings it was built
// with, whatever is applied to it later or to a sibling, or written to the
// command it came from.
func TestAclImagesAreCopyOnWrite(t *testing.T) {
	cmd := createAcls(aclTopicRead)
	v1 := build(t, cmd)
	cmd.Bindings[0].ResourceName = "scribbled"
	v2 := then(t, v1, createAcls(aclGroupRead))
	v3 := then(t, v2, deleteAcls(aclTopicRead))
	v4 := then(t, v3, deleteAcls(aclGroupRead))
	sibling := then(t, v1, createAcls(aclClusterAlter))
	for name, tc := range map[string]struct {
		img  *Image
		want []acl.Binding
	}{
		"v1":      {v1, []acl.Binding{aclTopicRead}},
		"v2":      {v2, []acl.Binding{aclTopicRead, aclGroupRead}},
		"v3":      {v3, []acl.Binding{aclGroupRead}},
		"v4":      {v4, nil},
		"sibling": {sibling, []acl.Binding{aclTopicRead, aclClusterAlter}},
	} {
		if got := tc.img.Acls(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: Acls() = %+v, want %+v", name, got, tc.want)
		}
		if err := aclInvariantErr(tc.img); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestAclIndexIsSharedUntilTheAclsChange: the index is built by the command
// that changes the bindings and shared by every image after it that does
// not, including ACL commands that add or remove nothing.
func TestAclIndexIsSharedUntilTheAclsChange(t *testing.T) {
	if emptyImage().AclIndex() == nil || (&Image{}).AclIndex() == nil {
		t.Fatal("an image without ACLs has a nil index")
	}
	v1 := build(t, createAcls(aclTopicRead))
	idx := v1.AclIndex()
	if idx == nil || idx == emptyAclIndex {
		t.Fatal("creating a binding built no index")
	}
	steps := []struct {
		name    string
		cmd     command
		changed bool
	}{
		{"create a topic", createCmd("foo", 1, 1), false},
		{"SCRAM credentials", alterScram("alice", upsert(ScramSHA256, 1)), false},
		{"broker configs", &setBrokerConfigsCmd{Configs: map[string]string{"a": "b"}}, false},
		{"controller change", &controllerChangeCmd{NodeID: 2}, false},
		{"create a stored binding", createAcls(aclTopicRead), false},
		{"delete a binding not stored", deleteAcls(aclGroupRead), false},
		{"create a binding", createAcls(aclGroupRead), true},
		{"create it again", createAcls(aclGroupRead, aclTopicRead), false},
		{"delete a binding", deleteAcls(aclTopicRead), true},
		{"delete a topic", &deleteTopicCmd{Name: "foo", ID: tid(1)}, false},
		{"delete the last binding", deleteAcls(aclGroupRead, aclTopicRead), true},
		{"delete it again", deleteAcls(aclGroupRead), false},
	}
	img := v1
	for _, s := range steps {
		prev := img
		img = then(t, img, s.cmd)
		if img.Version == prev.Version {
			t.Fatalf("%s: version did not move", s.name)
		}
		if changed := img.AclIndex() != prev.AclIndex(); changed != s.changed {
			t.Errorf("%s: index rebuilt %v, want %v", s.name, changed, s.changed)
		}
		if err := aclInvariantErr(img); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
	}
	if v1.AclIndex() != idx || !reflect.DeepEqual(v1.Acls(), []acl.Binding{aclTopicRead}) {
		t.Error("later commands changed the first image")
	}
}

// TestAclCommandWireForm pins the log form of the commands: logs written
// today must decode, field for field, forever.
func TestAclCommandWireForm(t *testing.T) {
	const binding = `{"resource_type":2,"resource_name":"orders","pattern_type":3,"principal":"User:alice","host":"*","operation":3,"permission":3}`
	for _, tc := range []struct {
		cmd  command
		wire string
	}{
		{createAcls(aclTopicRead), "\x01{\"create_acls\":{\"bindings\":[" + binding + "]}}"},
		{deleteAcls(aclTopicRead), "\x01{\"delete_acls\":{\"bindings\":[" + binding + "]}}"},
	} {
		data, err := encodeCommand(tc.cmd)
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != tc.wire {
			t.Errorf("encoded\n%q\nwant\n%q", data, tc.wire)
		}
		got, err := decodeCommand([]byte(tc.wire))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tc.cmd) {
			t.Errorf("decoded %#v\nwant %#v", got, tc.cmd)
		}
	}
	for _, bad := range []string{
		"\x01{\"create_acls\":{\"bindings\":[{\"resource_type\":2,\"extra\":1}]}}",
		"\x01{\"create_acls\":{\"bindings\":[{\"resource_type\":300}]}}",
		"\x01{\"delete_acls\":{\"bindings\":[{\"operation\":\"READ\"}]}}",
		"\x01{\"create_acls\":{\"bindings\":[]},\"delete_acls\":{\"bindings\":[]}}",
		"\x01{\"create_acls\":{\"bindings\":{}}}",
	} {
		if _, err := decodeCommand([]byte(bad)); !errors.Is(err, ErrInvalidCommand) {
			t.Errorf("decodeCommand(%q) = %v, want ErrInvalidCommand", bad, err)
		}
	}
}

// genWireAcl draws any binding that JSON can carry: every int8 code and
// any UTF-8 string.
func genWireAcl() *rapid.Generator[wireAcl] {
	return rapid.Custom(func(t *rapid.T) wireAcl {
		return wireAcl{
			ResourceType: rapid.Int8().Draw(t, "resource_type"), ResourceName: rapid.String().Draw(t, "resource_name"),
			PatternType: rapid.Int8().Draw(t, "pattern_type"), Principal: rapid.String().Draw(t, "principal"),
			Host: rapid.String().Draw(t, "host"), Operation: rapid.Int8().Draw(t, "operation"),
			Permission: rapid.Int8().Draw(t, "permission"),
		}
	})
}

// TestAclCodecRoundTripsEveryField: commands and snapshots give back every
// field exactly, whatever its code or its (UTF-8) string.
func TestAclCodecRoundTripsEveryField(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ws := rapid.SliceOfN(genWireAcl(), 1, 4).Draw(t, "bindings")
		for _, cmd := range []command{&createAclsCmd{Bindings: ws}, &deleteAclsCmd{Bindings: ws}} {
			data, err := encodeCommand(cmd)
			if err != nil {
				t.Fatal(err)
			}
			got, err := decodeCommand(data)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, cmd) {
				t.Fatalf("round trip: got %#v, want %#v", got, cmd)
			}
			for i, w := range ws {
				if toWireAcl(w.binding()) != w {
					t.Fatalf("binding %d: wire → binding → wire changed it", i)
				}
			}
		}
	})
	// Strings JSON escapes, and an image holding them.
	var bs []acl.Binding
	for _, s := range []string{"", "quote \" backslash \\ slash /", "<html> & </html>", "\u2028\u2029", "\x00\x01\x1f\x7f",
		"ünïcode 🦀", "\ufffd", strings.Repeat("x", 4096)} {
		bs = append(bs, aclWith(func(b *acl.Binding) { b.ResourceName, b.Principal, b.Host = "n"+s, "User:"+s, "h"+s }))
	}
	var valid []acl.Binding
	for _, b := range bs {
		if validateAcl(b) == nil {
			valid = append(valid, b)
		}
	}
	if len(valid) < len(bs)/2 {
		t.Fatalf("only %d of %d bindings are valid: this test tests little", len(valid), len(bs))
	}
	img := build(t, createAcls(valid...))
	roundTrip(t, img)
	data, err := encodeCommand(createAcls(valid...))
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeCommand(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, createAcls(valid...)) {
		t.Fatalf("round trip: got %#v", got)
	}
}

// TestAclInvalidUTF8WouldChangeInTheLog pins why strings that are not UTF-8
// are refused: JSON replaces their bad bytes, so the log would name another
// binding, maybe a stored one.
func TestAclInvalidUTF8WouldChangeInTheLog(t *testing.T) {
	bad := aclWith(func(b *acl.Binding) { b.ResourceName = "a\xffb" })
	data, err := encodeCommand(deleteAcls(bad))
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeCommand(data)
	if err != nil {
		t.Fatal(err)
	}
	if name := got.(*deleteAclsCmd).Bindings[0].ResourceName; name != "a\ufffdb" {
		t.Fatalf("the log holds %q: if JSON kept the bytes, this refusal would no longer be needed", name)
	}
	stored := aclWith(func(b *acl.Binding) { b.ResourceName = "a\ufffdb" })
	img := build(t, createAcls(stored))
	if _, err := applyCommand(img, deleteAcls(bad), 2); !errors.Is(err, ErrInvalidAcl) {
		t.Fatalf("deleting %q: %v, want ErrInvalidAcl (it would delete %q)", bad.ResourceName, err, stored.ResourceName)
	}
}

// aclModel is the naive model of the image's bindings.
type aclModel map[acl.Binding]bool

// broken returns every rule cmd breaks, each as its error; none means cmd
// must be applied.
func (m aclModel) broken(cmd command) []error {
	var ws []wireAcl
	create := false
	switch c := cmd.(type) {
	case *createAclsCmd:
		ws, create = c.Bindings, true
	case *deleteAclsCmd:
		ws = c.Bindings
	}
	var out []error
	if len(ws) == 0 || len(ws) > MaxAclsPerCommand {
		out = append(out, ErrInvalidAcl)
	}
	for _, w := range ws {
		b := w.binding()
		if !utf8.ValidString(b.ResourceName) || !utf8.ValidString(b.Principal) || !utf8.ValidString(b.Host) {
			out = append(out, ErrInvalidAcl)
		}
		if create && b.Validate() != nil {
			out = append(out, ErrInvalidAcl)
		}
	}
	return out
}

func (m aclModel) apply(cmd command) aclModel {
	next := aclModel{}
	for b := range m {
		next[b] = true
	}
	switch c := cmd.(type) {
	case *createAclsCmd:
		for _, w := range c.Bindings {
			next[w.binding()] = true
		}
	case *deleteAclsCmd:
		for _, w := range c.Bindings {
			delete(next, w.binding())
		}
	}
	return next
}

// genAclBinding draws bindings over a small space, so that the same one
// comes back often; mostly valid ones (about one in four is changed in one
// field, which is often enough to make it invalid).
func genAclBinding() *rapid.Generator[acl.Binding] {
	valid := []acl.Binding{aclTopicRead, aclTopicWrite, aclTopicPrefixed, aclGroupRead, aclClusterAlter}
	return rapid.Custom(func(t *rapid.T) acl.Binding {
		b := rapid.SampledFrom(valid).Draw(t, "binding")
		// rapid draws small numbers more often: 0..20 keep b as it is.
		switch rapid.IntRange(0, 27).Draw(t, "mutation") {
		case 21:
			b.ResourceType = acl.ResourceType(rapid.Int8Range(0, 8).Draw(t, "resource_type"))
		case 22:
			b.PatternType = acl.PatternType(rapid.Int8Range(0, 5).Draw(t, "pattern_type"))
		case 23:
			b.Operation = acl.Operation(rapid.Int8Range(0, 15).Draw(t, "operation"))
		case 24:
			b.Permission = acl.Permission(rapid.Int8Range(0, 4).Draw(t, "permission"))
		case 25:
			b.ResourceName = rapid.SampledFrom([]string{"orders", "Orders", "", "a\xff", "ü"}).Draw(t, "resource_name")
		case 26:
			b.Principal = rapid.SampledFrom([]string{"User:alice", "User:*", "alice", "User:\xff"}).Draw(t, "principal")
		case 27:
			b.Host = rapid.SampledFrom([]string{"*", "10.0.0.1", "", "\xff"}).Draw(t, "host")
		}
		return b
	})
}

// genAclCommand draws create and delete commands of up to three bindings,
// seldom none.
func genAclCommand() *rapid.Generator[command] {
	return rapid.Custom(func(t *rapid.T) command {
		n := rapid.SampledFrom([]int{1, 2, 3, 1, 2, 3, 0}).Draw(t, "n")
		bs := rapid.SliceOfN(genAclBinding(), n, n).Draw(t, "bindings")
		if rapid.Bool().Draw(t, "create") {
			return createAcls(bs...)
		}
		return deleteAcls(bs...)
	})
}

// TestAclsAgainstModel applies random create and delete sequences to an
// image and to a plain set: a command is applied iff it breaks no rule, and
// the two always hold the same bindings, with the index of exactly them,
// also after a snapshot round trip.
func TestAclsAgainstModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		img, model := emptyImage(), aclModel{}
		outcomes := map[string]int{}
		for i := range rapid.IntRange(1, 40).Draw(t, "n") {
			cmd := genAclCommand().Draw(t, fmt.Sprintf("cmd%d", i))
			if len(model) > 0 && rapid.IntRange(0, 2).Draw(t, fmt.Sprintf("aim%d", i)) == 0 {
				// Delete some of what is stored, so that deletes remove.
				stored := slices.SortedFunc(maps.Keys(model), compareAcls)
				cmd = deleteAcls(rapid.SliceOfN(rapid.SampledFrom(stored), 1, 3).Draw(t, fmt.Sprintf("stored%d", i))...)
			}
			broken := model.broken(cmd)
			next, err := applyCommand(img, cmd, uint64(i+1))
			switch {
			case len(broken) == 0 && err != nil:
				t.Fatalf("%#v refused: %v", cmd, err)
			case len(broken) > 0 && err == nil:
				t.Fatalf("%#v applied, but it breaks %v", cmd, broken)
			case err != nil:
				if !errors.Is(err, ErrInvalidAcl) {
					t.Fatalf("%#v refused with %v, want ErrInvalidAcl", cmd, err)
				}
				if next != nil {
					t.Fatal("a refused command returned an image")
				}
				outcomes["refused"]++
				continue
			}
			nextModel := model.apply(cmd)
			if rebuilt, changed := next.AclIndex() != img.AclIndex(), !maps.Equal(nextModel, model); rebuilt != changed {
				t.Fatalf("%#v: index rebuilt %v, bindings changed %v", cmd, rebuilt, changed)
			}
			outcomes[fmt.Sprintf("%T changed=%v", cmd, !maps.Equal(nextModel, model))]++
			model, img = nextModel, next
			if err := aclInvariantErr(img); err != nil {
				t.Fatal(err)
			}
			if err := sameAclsAs(img, model); err != nil {
				t.Fatal(err)
			}
			restored, err := snapshotRoundTrip(img)
			if err != nil {
				t.Fatal(err)
			}
			if err := sameAclsAs(restored, model); err != nil {
				t.Fatalf("after a snapshot round trip: %v", err)
			}
		}
		t.Logf("outcomes: %v", outcomes)
	})
}

func TestSnapshotCarriesAcls(t *testing.T) {
	img := build(t, createCmd("foo", 1, 1), alterScram("alice", upsert(ScramSHA256, 1)),
		createAcls(aclClusterAlter, aclTopicRead), createAcls(aclGroupRead))
	data := encodeNewest(t, img)
	// In Acls order: the bytes are a function of the image.
	want := `"acls":[{"resource_type":2,"resource_name":"orders","pattern_type":3,"principal":"User:alice","host":"*","operation":3,"permission":3},` +
		`{"resource_type":3,"resource_name":"billing",`
	if !bytes.Contains(data, []byte(want)) {
		t.Errorf("snapshot without ordered ACLs: %s", data)
	}
	roundTrip(t, img)
	restored, err := decodeSnapshot(data)
	if err != nil {
		t.Fatal(err)
	}
	wantAcls(aclTopicRead, aclGroupRead, aclClusterAlter)(t, restored)
	wantScram(map[string]map[string]ScramCredential{"alice": {ScramSHA256: scramCred(ScramSHA256, 1)}})(t, restored)
}

// snapshotV3 was written by the v3 encoder (before ACLs): snapshotV2's
// state plus one SCRAM credential.
const snapshotV3 = "\x03{\"cluster_id\":\"AAAAAAAAAAAAAAAAAAAAAA\",\"controller_id\":3,\"version\":10,\"broker_configs\":{\"x\":\"y\"}," +
	"\"topics\":[{\"Name\":\"foo\",\"ID\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1],\"Partitions\":[{\"Index\":0,\"Leader\":1,\"LeaderEpoch\":0,\"Replicas\":[1],\"ISR\":[1]}]," +
	"\"Configs\":{\"cleanup.policy\":\"delete\"}}],\"remote_segments\":[{\"id\":[170,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1]," +
	"\"topic_id\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1],\"topic\":\"foo\",\"partition\":0,\"start\":0,\"end\":10," +
	"\"leader_epochs\":[{\"epoch\":0,\"start\":0}],\"size_bytes\":10,\"max_timestamp_ms\":10,\"state\":\"COPY_STARTED\"}],\"pending_remote_deletes\":null," +
	"\"scram_credentials\":[{\"user\":\"alice\",\"credentials\":[{\"mechanism\":\"SCRAM-SHA-256\",\"salt\":\"AQEBAQEBAQEBAQEBAQEBAQ==\"," +
	"\"stored_key\":\"AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI=\",\"server_key\":\"AwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwM=\",\"iterations\":4097}]}]}"

func TestDecodeSnapshotV3StillDecodes(t *testing.T) {
	img, err := decodeSnapshot([]byte(snapshotV3))
	if err != nil {
		t.Fatal(err)
	}
	if img.Version != 10 || len(img.Topics) != 1 || len(img.RemoteSegments(tid(1), 0)) != 1 || img.BrokerConfigs["x"] != "y" {
		t.Fatalf("decoded %+v", img)
	}
	wantScram(map[string]map[string]ScramCredential{"alice": {ScramSHA256: scramCred(ScramSHA256, 1)}})(t, img)
	if img.acls == nil || img.Acls() != nil || img.AclIndex() != emptyAclIndex {
		t.Fatalf("acls = %v, index %p: want empty, not nil, and the empty index", img.acls, img.AclIndex())
	}
	checkImageInvariants(t, img)
	if _, err := decodeSnapshot([]byte("\x03{\"acls\":[]}")); !errors.Is(err, ErrInvalidCommand) {
		t.Errorf("v3 with v4 fields: %v, want ErrInvalidCommand", err)
	}
	for _, old := range []string{snapshotV2, "\x01{}"} {
		img, err := decodeSnapshot([]byte(old))
		if err != nil {
			t.Fatal(err)
		}
		if img.acls == nil || img.AclIndex() != emptyAclIndex {
			t.Errorf("%.2q: no ACL set or index", old)
		}
	}
}

// TestFSMRestoresV3SnapshotThenWritesNewest: a node whose newest snapshot
// is v3 restores it, takes ACLs, and snapshots them in the newest layout.
func TestFSMRestoresV3SnapshotThenWritesNewest(t *testing.T) {
	got := restoreApplyResnapshot(t, snapshotV3, createAcls(aclTopicRead, aclGroupRead), 11)
	if len(got.Topics) != 1 || len(got.RemoteSegments(tid(1), 0)) != 1 || len(got.ScramUsers()) != 1 {
		t.Errorf("v3 state lost: %+v", got)
	}
	wantAcls(aclTopicRead, aclGroupRead)(t, got)
}

func TestDecodeSnapshotRejectsBadAclData(t *testing.T) {
	good, other := toWireAcl(aclTopicRead), toWireAcl(aclGroupRead)
	for name, tc := range map[string]struct {
		acls []wireAcl
		want error
	}{
		"binding twice":         {[]wireAcl{good, other, good}, ErrInvalidCommand},
		"unknown resource type": {[]wireAcl{good, toWireAcl(aclWith(func(b *acl.Binding) { b.ResourceType = acl.ResourceUnknown }))}, ErrInvalidAcl},
		"match pattern":         {[]wireAcl{toWireAcl(aclWith(func(b *acl.Binding) { b.PatternType = acl.PatternMatch }))}, ErrInvalidAcl},
		"any operation":         {[]wireAcl{toWireAcl(aclWith(func(b *acl.Binding) { b.Operation = acl.OpAny }))}, ErrInvalidAcl},
		"any permission":        {[]wireAcl{toWireAcl(aclWith(func(b *acl.Binding) { b.Permission = acl.PermissionAny }))}, ErrInvalidAcl},
	} {
		s := imageSnapshotV4{Acls: tc.acls}
		if _, err := decodeSnapshot(mustJSON(t, snapshotFormatV4, s)); !errors.Is(err, tc.want) {
			t.Errorf("%s: decodeSnapshot: %v, want %v", name, err, tc.want)
		}
	}
	// The same snapshot with valid bindings is accepted: the cases above
	// are refused for what they break, not for their shape.
	ok := imageSnapshotV4{Acls: []wireAcl{good, other}}
	if _, err := decodeSnapshot(mustJSON(t, snapshotFormatV4, ok)); err != nil {
		t.Errorf("valid bindings: %v", err)
	}
}

package metadata

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/strata-broker/strata/internal/acl"
)

// MaxAclsPerCommand bounds the bindings of one CreateAcls or DeleteAcls,
// as Kafka's controller bounds the records of one user operation
// (MAX_RECORDS_PER_USER_OP): a larger change is refused whole
// (ErrInvalidAcl), never applied in part.
const MaxAclsPerCommand = 10_000

// emptyAclIndex is the index of no binding, shared by every image without
// ACLs; an Index is immutable, so sharing it is safe.
var emptyAclIndex = acl.NewIndex(nil)

// Acls returns the stored ACL bindings, sorted by resource type, resource
// name, pattern type, principal, host, operation and permission; nil when
// there is none. The slice is the caller's.
func (img *Image) Acls() []acl.Binding {
	return slices.SortedFunc(maps.Keys(img.acls), compareAcls)
}

// AclIndex returns the index of exactly the bindings of Acls, built once
// when a command changed them and shared by every later image that did not
// change them; never nil.
func (img *Image) AclIndex() *acl.Index {
	if img.aclIndex == nil { // an Image literal built outside this package
		return emptyAclIndex
	}
	return img.aclIndex
}

// withAcls sets the bindings of img, a fresh image not yet published, to
// set, which becomes img's own, and builds their index.
func (img *Image) withAcls(set map[acl.Binding]struct{}) {
	img.acls = set
	img.aclIndex = newAclIndex(set)
}

// newAclIndex builds the index of set from its bindings in Acls order, so
// that the same set always makes the same index.
func newAclIndex(set map[acl.Binding]struct{}) *acl.Index {
	if len(set) == 0 {
		return emptyAclIndex
	}
	return acl.NewIndex(slices.SortedFunc(maps.Keys(set), compareAcls))
}

// compareAcls is the order of Image.Acls and of snapshots.
func compareAcls(a, b acl.Binding) int {
	return cmp.Or(
		cmp.Compare(a.ResourceType, b.ResourceType),
		strings.Compare(a.ResourceName, b.ResourceName),
		cmp.Compare(a.PatternType, b.PatternType),
		strings.Compare(a.Principal, b.Principal),
		strings.Compare(a.Host, b.Host),
		cmp.Compare(a.Operation, b.Operation),
		cmp.Compare(a.Permission, b.Permission),
	)
}

// aclStringsErr refuses a binding whose strings are not UTF-8: JSON would
// replace the bad bytes, so the log and snapshots would name another
// binding (one that may well be stored).
func aclStringsErr(b acl.Binding) error {
	for _, s := range []string{b.ResourceName, b.Principal, b.Host} {
		if !utf8.ValidString(s) {
			return fmt.Errorf("%w: %q is not UTF-8", ErrInvalidAcl, s)
		}
	}
	return nil
}

// validateAcl checks that b may be stored: acl.Binding.Validate and UTF-8.
func validateAcl(b acl.Binding) error {
	if err := b.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidAcl, err)
	}
	return aclStringsErr(b)
}

func validateAclCount(verb string, n int) error {
	if n == 0 || n > MaxAclsPerCommand {
		return fmt.Errorf("%w: %s %d bindings, want 1..%d", ErrInvalidAcl, verb, n, MaxAclsPerCommand)
	}
	return nil
}

// validateCreateAcls is every check of a createAclsCmd; none depends on the
// image, so the Store runs it before proposing too.
func validateCreateAcls(c *createAclsCmd) error {
	if err := validateAclCount("create", len(c.Bindings)); err != nil {
		return err
	}
	for _, w := range c.Bindings {
		if err := validateAcl(w.binding()); err != nil {
			return err
		}
	}
	return nil
}

// validateDeleteAcls is every check of a deleteAclsCmd. It does not run
// acl.Binding.Validate: a binding that cannot be stored is simply not
// stored, and whatever is stored stays deletable even if a later version
// made its rules stricter.
func validateDeleteAcls(c *deleteAclsCmd) error {
	if err := validateAclCount("delete", len(c.Bindings)); err != nil {
		return err
	}
	for _, w := range c.Bindings {
		if err := aclStringsErr(w.binding()); err != nil {
			return err
		}
	}
	return nil
}

// applyCreateAcls stores every binding of c, all or nothing; one already
// stored is no change (Kafka dedupes identical ACLs). A command that adds
// nothing keeps the previous bindings and index.
func applyCreateAcls(img *Image, c *createAclsCmd, index uint64) (*Image, error) {
	if err := validateCreateAcls(c); err != nil {
		return nil, err
	}
	next := img.with(index)
	var set map[acl.Binding]struct{} // nil until a binding is new
	for _, w := range c.Bindings {
		b := w.binding()
		if _, ok := img.acls[b]; ok {
			continue
		}
		if set == nil {
			set = copyMap(img.acls, len(c.Bindings))
		}
		set[b] = struct{}{}
	}
	if set != nil {
		next.withAcls(set)
	}
	return next, nil
}

// applyDeleteAcls removes every binding of c that is stored and ignores the
// others: the proposer resolved them from filters against an image that may
// be stale, so deleting twice is harmless. A command that removes nothing
// keeps the previous bindings and index.
func applyDeleteAcls(img *Image, c *deleteAclsCmd, index uint64) (*Image, error) {
	if err := validateDeleteAcls(c); err != nil {
		return nil, err
	}
	next := img.with(index)
	var set map[acl.Binding]struct{} // nil until a binding is removed
	for _, w := range c.Bindings {
		b := w.binding()
		if _, ok := img.acls[b]; !ok {
			continue
		}
		if set == nil {
			set = copyMap(img.acls, 0)
		}
		delete(set, b)
	}
	if set != nil {
		next.withAcls(set)
	}
	return next, nil
}

// wireAcl is an acl.Binding as commands and snapshots store it, with its own
// tags and Kafka's int8 codes (as AccessControlEntryRecord), so that
// renaming a field or giving a type of package acl a text form never
// changes what is in a log or a snapshot.
type wireAcl struct {
	ResourceType int8   `json:"resource_type"`
	ResourceName string `json:"resource_name"`
	PatternType  int8   `json:"pattern_type"`
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	Operation    int8   `json:"operation"`
	Permission   int8   `json:"permission"`
}

func toWireAcl(b acl.Binding) wireAcl {
	return wireAcl{
		ResourceType: int8(b.ResourceType), ResourceName: b.ResourceName, PatternType: int8(b.PatternType),
		Principal: b.Principal, Host: b.Host, Operation: int8(b.Operation), Permission: int8(b.Permission),
	}
}

func (w wireAcl) binding() acl.Binding {
	return acl.Binding{
		ResourceType: acl.ResourceType(w.ResourceType), ResourceName: w.ResourceName, PatternType: acl.PatternType(w.PatternType),
		Principal: w.Principal, Host: w.Host, Operation: acl.Operation(w.Operation), Permission: acl.Permission(w.Permission),
	}
}

func toWireAcls(bindings []acl.Binding) []wireAcl {
	out := make([]wireAcl, len(bindings))
	for i, b := range bindings {
		out[i] = toWireAcl(b)
	}
	return out
}

// encodeAcls returns img's bindings in snapshot order, that of Acls.
func encodeAcls(img *Image) []wireAcl {
	return toWireAcls(img.Acls())
}

// restoreAcls adds a snapshot's bindings to img, checking each as a create
// would: a snapshot is a gateway.
func restoreAcls(img *Image, ws []wireAcl) error {
	if len(ws) == 0 {
		return nil
	}
	set := make(map[acl.Binding]struct{}, len(ws))
	for _, w := range ws {
		b := w.binding()
		if err := validateAcl(b); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		if _, dup := set[b]; dup {
			return fmt.Errorf("snapshot: %w: ACL %+v twice", ErrInvalidCommand, b)
		}
		set[b] = struct{}{}
	}
	img.withAcls(set)
	return nil
}

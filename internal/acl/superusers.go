package acl

import "strings"

// ParseSuperUsers parses the super.users setting: principals separated by
// semicolons, each trimmed of surrounding spaces, empty entries skipped (as
// StandardAuthorizer reads it). An entry that is not "Type:name" with both
// parts non-empty is an error (*Error). On success the map is never nil.
func ParseSuperUsers(s string) (map[string]bool, error) {
	users := make(map[string]bool)
	for entry := range strings.SplitSeq(s, ";") {
		p := strings.TrimSpace(entry)
		if p == "" {
			continue
		}
		if !validPrincipal(p) {
			return nil, invalid("super.users: expected a string in format principalType:principalName but got " + clip(p))
		}
		users[p] = true
	}
	return users, nil
}

package api

import (
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka's broker checks the shape of an AlterConfigs or
// IncrementalAlterConfigs request before it authorizes or applies
// anything (ConfigAdminManager.preprocess), and answers INVALID_REQUEST
// for a resource named twice (each copy), a config named twice in one
// resource, and a null value on any operation but DELETE (AlterConfigs
// has no DELETE: a null value there is refused too). The checks here are
// those, in that order; an unknown IncrementalAlterConfigs operation is
// INVALID_REQUEST too, as Kafka answers it for a BROKER resource.

// configResource names one resource of a request.
type configResource struct {
	typ  kmsg.ConfigResourceType
	name string
}

// repeatedResourceRefusal is the message for a resource the request names
// more than once.
func repeatedResourceRefusal(r configResource) string {
	return fmt.Sprintf("%s resource %q appears more than once in the request; each resource must appear at most once",
		r.typ, r.name)
}

// shapeRefusal is INVALID_REQUEST and why, for resource r of a request
// (repeated: the request names it again) with changes; 0 for a resource
// of a sound shape.
func shapeRefusal(r configResource, repeated bool, changes []configChange) (int16, string) {
	if repeated {
		return kerr.InvalidRequest.Code, repeatedResourceRefusal(r)
	}
	if why := configChangesRefusal(changes); why != "" {
		return kerr.InvalidRequest.Code, why
	}
	return 0, ""
}

// configChange is one change a request makes to a resource's configs.
type configChange struct {
	name string
	op   int8
	null bool // no value given
}

// configChangesRefusal is why a resource's changes are malformed: a config
// named twice, a null value on an operation other than DELETE, or an
// operation IncrementalAlterConfigs does not have. It is "" for changes of
// a sound shape.
func configChangesRefusal(changes []configChange) string {
	var twice, valueless []string
	seen := make(map[string]bool, len(changes))
	for _, c := range changes {
		if seen[c.name] && !slices.Contains(twice, c.name) {
			twice = append(twice, c.name)
		}
		seen[c.name] = true
		if c.null && c.op != opDelete {
			valueless = append(valueless, c.name)
		}
	}
	switch {
	case len(twice) > 0:
		return "duplicate config keys: " + strings.Join(twice, ", ") + " (name each config once per resource)"
	case len(valueless) > 0:
		return "null value not supported for: " + strings.Join(valueless, ", ") + " (only DELETE takes no value)"
	}
	for _, c := range changes {
		if c.op < opSet || c.op > opSubtract {
			return fmt.Sprintf("unknown operation %d on config %s; use SET (0), DELETE (1), APPEND (2) or SUBTRACT (3)", c.op, c.name)
		}
	}
	return ""
}

// incrementalChanges are the changes of an IncrementalAlterConfigs
// resource.
func incrementalChanges(cs []kmsg.IncrementalAlterConfigsRequestResourceConfig) []configChange {
	out := make([]configChange, len(cs))
	for i, c := range cs {
		out[i] = configChange{name: c.Name, op: int8(c.Op), null: c.Value == nil}
	}
	return out
}

// legacyChanges are the changes of an AlterConfigs resource: each sets its
// config.
func legacyChanges(cs []kmsg.AlterConfigsRequestResourceConfig) []configChange {
	out := make([]configChange, len(cs))
	for i, c := range cs {
		out[i] = configChange{name: c.Name, op: opSet, null: c.Value == nil}
	}
	return out
}

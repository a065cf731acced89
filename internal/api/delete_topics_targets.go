package api

import (
	"fmt"

	"github.com/strata-broker/strata/internal/metadata"
)

// deleteTarget is a topic a DeleteTopics names: by name (every version),
// or by id (v6, with a null name).
type deleteTarget struct {
	name *string
	id   [16]byte
}

// deleteTargetRefusals are Kafka's refusals, INVALID_REQUEST each, of
// the targets of one DeleteTopics before any is deleted
// (ControllerApis.deleteTopics): neither a name nor an id, both, a name
// or an id given twice, and a name whose topic's id the request gives
// too. deletable resolves a name to its topic's id, ok only for a topic
// the principal may delete (so that a refusal never tells another's
// topic id). A target refused for none of these is "".
func deleteTargetRefusals(targets []deleteTarget, deletable func(name string) ([16]byte, bool)) []string {
	type key struct {
		byName bool
		name   string
		id     [16]byte
	}
	keys := make([]key, len(targets))
	for i, t := range targets {
		keys[i] = key{byName: t.name != nil, id: t.id}
		if t.name != nil {
			keys[i].name = *t.name
		}
	}
	twice := repeated(keys)
	refusals := make([]string, len(targets))
	byID := make(map[[16]byte]int)
	for i, t := range targets {
		switch {
		case t.name == nil && t.id == [16]byte{}:
			refusals[i] = "neither a topic name nor a topic id is given"
		case t.name != nil && t.id != [16]byte{}:
			refusals[i] = fmt.Sprintf("topic %s is given with a topic id; give a name or an id, not both", *t.name)
		case twice[i] && t.name != nil:
			refusals[i] = fmt.Sprintf("topic %s appears more than once in the request", *t.name)
		case twice[i]:
			refusals[i] = fmt.Sprintf("topic id %s appears more than once in the request", metadata.UUIDString(t.id))
		case t.name == nil:
			byID[t.id] = i
		}
	}
	for i, t := range targets {
		if refusals[i] != "" || t.name == nil {
			continue
		}
		id, ok := deletable(*t.name)
		j, given := byID[id]
		if !ok || !given {
			continue
		}
		refusals[i] = fmt.Sprintf("topic %s is also given by its id in the request", *t.name)
		refusals[j] = fmt.Sprintf("topic id %s is also given by its name, %s, in the request", metadata.UUIDString(id), *t.name)
	}
	return refusals
}

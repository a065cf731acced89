package assignor

import (
	"slices"

	"github.com/strata-broker/strata/internal/base"
)

// Assignment is the partitions of each topic a member owns or is to own:
// each topic's partitions ascending, without duplicates; a topic with no
// partition has no entry.
type Assignment map[base.TopicID][]int32

// Member is one member of a group, as an assignor sees it.
type Member struct {
	ID string
	// Subscribed is the ids of the existing topics the member subscribes
	// to (by name or by regular expression), ascending.
	Subscribed []base.TopicID
	// Current is the member's target assignment of the previous group
	// epoch (empty for a new member): what an assignor keeps when it can.
	Current Assignment
}

// Topic is the metadata of one subscribed topic.
type Topic struct {
	Name       string
	Partitions int32
}

// Spec is an assignor's input: the members, ascending by ID, and every
// topic one of them subscribes to.
type Spec struct {
	Members []Member
	Topics  map[base.TopicID]Topic
}

// Assignor computes a group's target assignment (KIP-848's server-side
// assignors). Assign is a pure function of the Spec: the same Spec gives
// the same assignment. Its result has an entry for every member (an empty
// Assignment for a member that gets nothing); every partition of a
// subscribed topic goes to exactly one member subscribed to that topic.
type Assignor interface {
	Name() string
	Assign(Spec) map[string]Assignment
}

// Contains reports whether a holds partition p of topic.
func (a Assignment) Contains(topic base.TopicID, p int32) bool {
	_, ok := slices.BinarySearch(a[topic], p)
	return ok
}

// Size is the number of partitions in a.
func (a Assignment) Size() int {
	n := 0
	for _, ps := range a {
		n += len(ps)
	}
	return n
}

// Equal reports whether a and b hold the same partitions.
func (a Assignment) Equal(b Assignment) bool {
	if len(a) != len(b) {
		return false
	}
	for t, ps := range a {
		if !slices.Equal(ps, b[t]) {
			return false
		}
	}
	return true
}

// Clone is a deep copy of a.
func (a Assignment) Clone() Assignment {
	c := make(Assignment, len(a))
	for t, ps := range a {
		c[t] = slices.Clone(ps)
	}
	return c
}

package group

import (
	"fmt"
	"hash/fnv"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
)

// churnedTopics is the property test's view: the harness's topics, and
// "t" and "u", which its steps delete and create again. Each incarnation
// of those has an id of its own (its number); 0 is deleted.
type churnedTopics map[string]int

// churnedNames are the topics a property step deletes and creates.
var churnedNames = []string{"t", "u"}

func (v churnedTopics) Topic(name string) (base.TopicID, int32, bool) {
	if !slices.Contains(churnedNames, name) {
		return harnessTopics.Topic(name)
	}
	n := v[name]
	return base.TopicID{name[0], byte(n)}, 4, n > 0
}

func (v churnedTopics) TopicName(id base.TopicID) (string, bool) {
	for _, name := range churnedNames {
		if got, _, ok := v.Topic(name); ok && got == id {
			return name, true
		}
	}
	return harnessTopics.TopicName(id)
}

func (v churnedTopics) Names() []string {
	names := harnessTopics.Names()
	for _, name := range churnedNames {
		if v[name] > 0 {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

func (v churnedTopics) Version() int64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d;", harnessTopics.Version())
	for _, name := range churnedNames {
		fmt.Fprintf(h, "%s=%d;", name, v[name])
	}
	return int64(h.Sum64() >> 1)
}

// churnStep deletes one of the churned topics, creates it (again, with a
// new id) or both, and sometimes lets a Tick run; after one, no group
// holds an offset of a deleted topic.
func churnStep(rt *rapid.T, h *harness, m *model) {
	name := rapid.SampledFrom(churnedNames).Draw(rt, "churnTopic")
	switch {
	case m.topics[name] == 0:
		m.created++
		m.topics[name] = m.created
	case rapid.Bool().Draw(rt, "recreate"):
		m.created++
		m.topics[name] = m.created
	default:
		m.topics[name] = 0
	}
	if !rapid.Bool().Draw(rt, "tick") {
		return
	}
	h.advance(0)
	for id, g := range h.c.groups {
		for _, tp := range g.offsetPartitions() {
			if m.topics[tp.Topic] == 0 && slices.Contains(churnedNames, tp.Topic) {
				rt.Fatalf("group %s holds an offset of %s, deleted", id, tp)
			}
		}
	}
}

// view is the topics as they are now, a copy: the coordinator compares
// the view it last saw with the current one.
func (m *model) view() TopicsView { return churnedTopics(maps.Clone(m.topics)) }

// commit hands the coordinator a commit unless it names a deleted topic:
// the broker refuses those (UNKNOWN_TOPIC_OR_PARTITION) before they reach
// the coordinator.
func (m *model) commit(h *harness, req kmsg.Request, client string) {
	var topics []string
	switch r := req.(type) {
	case *kmsg.OffsetCommitRequest:
		for _, t := range r.Topics {
			topics = append(topics, t.Topic)
		}
	case *kmsg.TxnOffsetCommitRequest:
		for _, t := range r.Topics {
			topics = append(topics, t.Topic)
		}
	}
	view := m.view()
	for _, name := range topics {
		if _, _, ok := view.Topic(name); !ok {
			return
		}
	}
	h.do(req, client)
}

package group

import (
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
)

// churnedNames are the topics a property step deletes and creates again;
// each incarnation has an id of its own (its number, 0 when deleted).
var churnedNames = []string{"t", "u"}

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
func (m *model) view() TopicsView {
	v := maps.Clone(harnessTopics)
	for name, n := range m.topics {
		if n > 0 {
			v[name] = viewTopic{base.TopicID{name[0], byte(n)}, 4}
		}
	}
	return v
}

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

package group

import (
	"maps"
	"slices"
	"time"
)

// resolveRegexes keeps the group's regular expressions resolved against
// view (Kafka resolves them on the coordinator since KIP-848): an
// expression a member subscribes with is resolved when it is new or the
// metadata changed since (view.Version), and its record written when the
// topics it matches change; one no member uses any more is deleted. It
// reports whether a resolution changed, which changes the subscriptions.
// Internal topics match as any other: Kafka resolves against every topic
// (the client decides whether to consume what it is assigned).
func (w *consumerWrite) resolveRegexes(view TopicsView, now time.Time) bool {
	changed := false
	for _, expr := range slices.Sorted(maps.Keys(w.cg.regexes)) {
		if w.cg.regexUsers[expr] == 0 {
			w.write(regularExpressionKey(w.id, expr), nil)
			delete(w.cg.regexChecked, expr)
			changed = true
		}
	}
	version := view.Version()
	for _, expr := range slices.Sorted(maps.Keys(w.cg.regexUsers)) {
		prev, resolved := w.cg.regexes[expr]
		if resolved && w.cg.regexChecked[expr] == version {
			continue
		}
		re, err := compileTopicRegex(expr)
		if err != nil {
			continue // refused when it was subscribed; a stored one that no longer compiles matches nothing
		}
		var topics []string
		for _, name := range view.Names() {
			if re.MatchString(name) {
				topics = append(topics, name)
			}
		}
		slices.Sort(topics)
		if !resolved || !slices.Equal(topics, prev.Topics) {
			w.write(regularExpressionKey(w.id, expr), regularExpressionValue(regularExpression{Topics: topics, MetadataVersion: version, TimestampMs: now.UnixMilli()}))
			changed = true
		}
		w.cg.regexChecked[expr] = version
	}
	return changed
}

package api

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

func TestPageTopicPartitions(t *testing.T) {
	counts := map[string]int32{"a": 3, "b": 2, "c": 4, "empty": 0}
	count := func(name string) (int32, bool) { n, ok := counts[name]; return n, ok }
	page := func(name string, from, to int32) topicPage {
		return topicPage{name: name, exists: true, from: from, to: to}
	}
	for _, tc := range []struct {
		name        string
		names       []string
		cursor      *topicCursor
		limit       int32
		listUnknown bool
		pages       []topicPage
		next        *topicCursor
	}{
		{"all fit", []string{"a", "b"}, nil, 10, true, []topicPage{page("a", 0, 3), page("b", 0, 2)}, nil},
		{"limit inside a topic", []string{"a", "b"}, nil, 4, true, []topicPage{page("a", 0, 3), page("b", 0, 1)}, &topicCursor{"b", 1}},
		{"limit between topics", []string{"a", "b"}, nil, 3, true, []topicPage{page("a", 0, 3)}, &topicCursor{"b", 0}},
		{"limit before an unknown topic", []string{"a", "x"}, nil, 3, true, []topicPage{page("a", 0, 3)}, &topicCursor{"x", 0}},
		{"from the cursor", []string{"b", "c"}, &topicCursor{"b", 1}, 10, true, []topicPage{page("b", 1, 2), page("c", 0, 4)}, nil},
		{"cursor past the end", []string{"b", "c"}, &topicCursor{"b", 7}, 10, true, []topicPage{page("b", 2, 2), page("c", 0, 4)}, nil},
		{"negative cursor partition", []string{"b"}, &topicCursor{"b", -3}, 10, true, []topicPage{page("b", 0, 2)}, nil},
		{"cursor names another topic", []string{"c"}, &topicCursor{"b", 1}, 10, true, []topicPage{page("c", 0, 4)}, nil},
		{"unknown named", []string{"a", "x"}, nil, 10, true, []topicPage{page("a", 0, 3), {name: "x"}}, nil},
		{"unknown not named", []string{"a", "x"}, nil, 10, false, []topicPage{page("a", 0, 3)}, nil},
		{"no partitions", []string{"empty", "a"}, nil, 2, true, []topicPage{page("empty", 0, 0), page("a", 0, 2)}, &topicCursor{"a", 2}},
		{"zero limit", []string{"a"}, nil, 0, true, nil, &topicCursor{"a", 0}},
		{"negative limit", []string{"a", "x"}, nil, -1, true, nil, nil},
		{"nothing", nil, nil, 10, true, nil, nil},
	} {
		pages, next := pageTopicPartitions(tc.names, count, tc.cursor, tc.limit, tc.listUnknown)
		if !slices.Equal(pages, tc.pages) || !equalCursors(next, tc.next) {
			t.Errorf("%s: pageTopicPartitions = %+v, %+v; want %+v, %+v", tc.name, pages, next, tc.pages, tc.next)
		}
	}
}

func equalCursors(a, b *topicCursor) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// TestPageTopicPartitionsWalk: following the cursors page after page, as a
// client does, lists every partition of every topic once, in order, each
// page within its limit.
func TestPageTopicPartitionsWalk(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		counts := rapid.SliceOfN(rapid.Int32Range(0, 6), 0, 6).Draw(t, "partition counts")
		names := make([]string, len(counts))
		for i := range names {
			names[i] = string(rune('a' + i))
		}
		count := func(name string) (int32, bool) { return counts[name[0]-'a'], true }
		limit := rapid.Int32Range(1, 5).Draw(t, "limit")
		var want, got []topicCursor
		for i, n := range counts {
			for p := range n {
				want = append(want, topicCursor{names[i], p})
			}
		}
		var cursor *topicCursor
		for pageNo := 0; ; pageNo++ {
			if pageNo > len(want)+len(names)+1 {
				t.Fatalf("the walk does not end")
			}
			rest := names
			if cursor != nil {
				rest = names[slices.Index(names, cursor.topic):]
			}
			pages, next := pageTopicPartitions(rest, count, cursor, limit, true)
			size := int32(0)
			for _, pg := range pages {
				for p := pg.from; p < pg.to; p++ {
					got = append(got, topicCursor{pg.name, p})
				}
				size += pg.to - pg.from
			}
			if size > limit {
				t.Fatalf("a page of %d partitions, limit %d", size, limit)
			}
			if next == nil {
				break
			}
			cursor = next
		}
		if !slices.Equal(got, want) {
			t.Fatalf("the walk listed %v, want %v", got, want)
		}
	})
}

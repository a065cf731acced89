package api

// topicPage is one topic's part of a DescribeTopicPartitions answer: its
// partitions [from, to), or only its name when it does not exist.
type topicPage struct {
	name     string
	exists   bool
	from, to int32
}

// topicCursor names a topic's partition: where a page begins, or the first
// one it left out.
type topicCursor struct {
	topic     string
	partition int32
}

// defaultPagePartitions is max.request.partition.size.limit's default, for
// a Handler whose Config was not loaded (tests).
const defaultPagePartitions = 2000

// pageTopicPartitions lays out one DescribeTopicPartitions page as Kafka's
// metadata cache does. names are the topics to describe, sorted and none
// before the cursor's; count is a topic's partition count (false: it does
// not exist). The cursor's topic begins at the cursor's partition, every
// other at 0, and the page holds at most limit partitions. When the limit
// falls inside a topic, next is that topic's first partition left out;
// when it falls between topics, the following topic's partition 0 (whether
// or not it exists); nil when the page holds everything. A topic that does
// not exist is listed only when listUnknown (the client named it).
func pageTopicPartitions(names []string, count func(string) (int32, bool), cursor *topicCursor, limit int32, listUnknown bool) (pages []topicPage, next *topicCursor) {
	remaining := limit
	for _, name := range names {
		if remaining == 0 {
			return pages, &topicCursor{topic: name}
		}
		if remaining < 0 {
			continue // a negative limit answers nothing, as Kafka's
		}
		n, ok := count(name)
		if !ok {
			if listUnknown {
				pages = append(pages, topicPage{name: name})
			}
			continue
		}
		from := int32(0)
		if cursor != nil && cursor.topic == name {
			from = min(max(cursor.partition, 0), n)
		}
		to := min(n, from+remaining)
		pages = append(pages, topicPage{name: name, exists: true, from: from, to: to})
		if to < n {
			return pages, &topicCursor{topic: name, partition: to}
		}
		remaining -= to - from
	}
	return pages, nil
}

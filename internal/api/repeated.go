package api

// repeated says, for each of keys, whether another entry of keys equals
// it. Kafka refuses every copy of a topic, partition or config resource
// that one admin request names more than once (INVALID_REQUEST) rather
// than act on it twice.
func repeated[K comparable](keys []K) []bool {
	count := make(map[K]int, len(keys))
	for _, k := range keys {
		count[k]++
	}
	out := make([]bool, len(keys))
	for i, k := range keys {
		out[i] = count[k] > 1
	}
	return out
}

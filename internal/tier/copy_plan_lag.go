package tier

// CopyLag is KIP-1241's upload delay: a rolled segment stays local-only
// for a while, so that consumers reading near the end of the log are
// served from local disk and the newest data is not held twice (locally
// and remotely) just before local retention would drop it anyway.
//
// Each check is off when its limit is 0. With both off a rolled segment is
// eligible at once. Otherwise it is eligible as soon as ANY enabled check
// passes:
//
//   - time: nowMs - the segment's max timestamp >= Ms. The max timestamp
//     is the record time (CreateTime or LogAppendTime), as retention.ms
//     uses it; a segment whose records a producer stamped in the future
//     waits until that time passes (or for the size check).
//   - size: the bytes of the log after the segment (every later local
//     segment, the active one included) >= Bytes.
//
// Segments are uploaded in offset order, so a segment still inside the lag
// holds back every later one (PlanCopies stops there): the tier stays
// contiguous.
type CopyLag struct {
	Ms    int64 // remote.copy.lag.ms; 0 = no time check
	Bytes int64 // remote.copy.lag.bytes; 0 = no size check
}

// Passed reports whether seg may be uploaded now, given bytesAfter, the
// size of the local log after it.
func (l CopyLag) Passed(seg LocalSegment, bytesAfter int64, nowMs int64) bool {
	if l.Ms <= 0 && l.Bytes <= 0 {
		return true
	}
	return l.Ms > 0 && nowMs-seg.MaxTimestampMs >= l.Ms ||
		l.Bytes > 0 && bytesAfter >= l.Bytes
}

// bytesAfter returns, for each local segment, the bytes of the segments
// after it: after[i] is the sum of SizeBytes over local[i+1:].
func bytesAfter(local []LocalSegment) []int64 {
	after := make([]int64, len(local))
	for i := len(local) - 2; i >= 0; i-- {
		after[i] = after[i+1] + local[i+1].SizeBytes
	}
	return after
}

package base

// Stamp is a max timestamp and where it is, as ListOffsets -3 answers: the
// timestamp and the offset given with it. Ok is false when there is none
// (an empty log).
type Stamp struct {
	Ts     int64
	Offset Offset
	Ok     bool
}

// Later returns whichever of s and o has the larger timestamp, and on a
// tie the one at the earlier offset: -3 answers the earliest offset having
// the max timestamp (KIP-734).
func (s Stamp) Later(o Stamp) Stamp {
	if o.Ok && (!s.Ok || o.Ts > s.Ts || o.Ts == s.Ts && o.Offset < s.Offset) {
		return o
	}
	return s
}

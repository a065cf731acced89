package base

// Stamp is a max timestamp and where it is, as ListOffsets -3 answers: the
// timestamp and the offset given with it. Ok is false when there is none
// (an empty log).
type Stamp struct {
	Ts     int64
	Offset Offset
	Ok     bool
}

// Beats reports whether s is a better answer than o: o is none, or s has
// the larger timestamp, or the same one at an earlier offset (-3 answers
// the earliest offset having the max timestamp, KIP-734).
func (s Stamp) Beats(o Stamp) bool {
	return s.Ok && (!o.Ok || s.Ts > o.Ts || s.Ts == o.Ts && s.Offset < o.Offset)
}

// Later returns whichever of s and o is the better answer (Beats); s on a
// tie.
func (s Stamp) Later(o Stamp) Stamp {
	if o.Beats(s) {
		return o
	}
	return s
}

package assignor

import (
	"fmt"
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

// bigSpec is 1,000 members and 10 topics of 1,000 partitions. With
// heterogeneous set, member i subscribes to the topics j with i%10 != j
// (each topic has 900 subscribers), else to all of them.
func bigSpec(heterogeneous bool) Spec {
	spec := Spec{Topics: map[base.TopicID]Topic{}}
	var all []base.TopicID
	for j := range 10 {
		id := tid(byte(j + 1))
		spec.Topics[id] = Topic{Name: fmt.Sprint(j), Partitions: 1000}
		all = append(all, id)
	}
	for i := range 1000 {
		s := all
		if heterogeneous {
			s = append(append([]base.TopicID{}, all[:i%10]...), all[i%10+1:]...)
		}
		spec.Members = append(spec.Members, Member{ID: fmt.Sprintf("member-%04d", i), Subscribed: s})
	}
	return spec
}

// rejoin is spec after a stable assignment by a, with the first member
// gone and a new one in its place: the common rebalance.
func rejoin(a Assignor, spec Spec) Spec {
	spec = withCurrent(spec, a.Assign(spec))
	spec.Members[0] = Member{ID: "member-0000-new", Subscribed: spec.Members[0].Subscribed}
	return spec
}

// skewed is spec with its first member holding every partition of the
// topics it subscribes to: the most that balancing can have to move.
func skewed(spec Spec) Spec {
	current := Assignment{}
	for _, id := range spec.Members[0].Subscribed {
		for p := range spec.Topics[id].Partitions {
			current[id] = append(current[id], p)
		}
	}
	spec.Members[0].Current = current
	return spec
}

func benchmark(b *testing.B, a Assignor, spec Spec) {
	for b.Loop() {
		a.Assign(spec)
	}
}

func BenchmarkUniform(b *testing.B) {
	b.Run("fresh", func(b *testing.B) { benchmark(b, Uniform{}, bigSpec(false)) })
	b.Run("rejoin", func(b *testing.B) { benchmark(b, Uniform{}, rejoin(Uniform{}, bigSpec(false))) })
	b.Run("heterogeneous-fresh", func(b *testing.B) { benchmark(b, Uniform{}, bigSpec(true)) })
	b.Run("heterogeneous-rejoin", func(b *testing.B) { benchmark(b, Uniform{}, rejoin(Uniform{}, bigSpec(true))) })
	b.Run("heterogeneous-skewed", func(b *testing.B) { benchmark(b, Uniform{}, skewed(bigSpec(true))) })
}

func BenchmarkRange(b *testing.B) {
	b.Run("fresh", func(b *testing.B) { benchmark(b, Range{}, bigSpec(false)) })
	b.Run("rejoin", func(b *testing.B) { benchmark(b, Range{}, rejoin(Range{}, bigSpec(false))) })
}

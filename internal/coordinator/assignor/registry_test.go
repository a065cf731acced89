package assignor

import (
	"slices"
	"testing"
)

func TestByName(t *testing.T) {
	for _, name := range Names() {
		a, ok := ByName(name)
		if !ok || a.Name() != name {
			t.Fatalf("ByName(%q) = %v, %v", name, a, ok)
		}
	}
	if !slices.Equal(Names(), []string{"range", "uniform"}) {
		t.Fatalf("Names() = %v", Names())
	}
	for _, name := range []string{"", "Uniform", "sticky", "cooperative-sticky"} {
		if _, ok := ByName(name); ok {
			t.Fatalf("ByName(%q) found an assignor", name)
		}
	}
}

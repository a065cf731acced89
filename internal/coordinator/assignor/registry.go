package assignor

// ByName is the assignor called name, if there is one.
func ByName(name string) (Assignor, bool) {
	switch name {
	case RangeName:
		return Range{}, true
	case UniformName:
		return Uniform{}, true
	}
	return nil, false
}

// Names is the names of the assignors, ascending: what the group
// coordinator advertises.
func Names() []string { return []string{RangeName, UniformName} }

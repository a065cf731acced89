package e2e

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// requestFiller gives a kmsg request random field values that favour what
// breaks a handler: the extremes of each integer type and the values Kafka
// gives a meaning (-1 latest, -2 earliest, -3 max timestamp, -1001 and the
// like), names that exist next to names that do not, the same name twice in
// one request, empty and null arrays, record batches that are valid and
// ones that are not. A field keeps the default kmsg gives it one time in
// three, so that requests get past their first check often enough to reach
// the code behind it.
type requestFiller struct {
	rng   *rand.Rand
	names []string   // topics, groups, ids, config keys and values, principals
	ids   [][16]byte // topic ids that exist
	batch []byte     // a valid record batch
}

// maxFillDepth bounds nesting; kmsg's types are finite, this only keeps
// arrays of arrays small.
const maxFillDepth = 6

// fillRequest randomizes req's fields; its version stays as set.
func (f *requestFiller) fillRequest(req kmsg.Request) {
	f.fill(reflect.ValueOf(req).Elem(), 0)
}

func (f *requestFiller) fill(v reflect.Value, depth int) {
	t := v.Type()
	for i := range t.NumField() {
		field := t.Field(i)
		if !field.IsExported() || field.Name == "Version" || field.Type == reflect.TypeFor[kmsg.Tags]() {
			continue
		}
		if f.rng.IntN(3) == 0 {
			continue // kmsg's default
		}
		f.value(v.Field(i), field.Name, depth)
	}
}

// value sets v (a field named name) to a random value of its kind.
func (f *requestFiller) value(v reflect.Value, name string, depth int) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(f.rng.IntN(2) == 0)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(f.integer(v.Type().Bits(), name))
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(f.integer(v.Type().Bits(), name)) & (math.MaxUint64 >> (64 - v.Type().Bits())))
	case reflect.Float64:
		v.SetFloat(pickFrom(f.rng, []float64{0, -1, 0.5, 1, math.MaxFloat64, math.NaN(), math.Inf(1)}))
	case reflect.String:
		v.SetString(f.name())
	case reflect.Pointer:
		if f.rng.IntN(4) == 0 {
			v.SetZero() // null
			return
		}
		p := reflect.New(v.Type().Elem())
		f.value(p.Elem(), name, depth)
		v.Set(p)
	case reflect.Array:
		if v.Type() == reflect.TypeFor[[16]byte]() {
			v.Set(reflect.ValueOf(f.uuid()))
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes(f.bytes())
			return
		}
		f.slice(v, name, depth)
	case reflect.Struct:
		defaultOf(v)
		if depth < maxFillDepth {
			f.fill(v, depth+1)
		}
	}
}

// slice makes v null, empty or a few elements long, each element starting
// from kmsg's defaults.
func (f *requestFiller) slice(v reflect.Value, name string, depth int) {
	n := pickFrom(f.rng, []int{-1, 0, 1, 1, 2, 3})
	if n < 0 || depth >= maxFillDepth {
		v.SetZero()
		return
	}
	s := reflect.MakeSlice(v.Type(), n, n)
	for i := range n {
		f.value(s.Index(i), name, depth+1)
	}
	v.Set(s)
}

// defaultOf applies kmsg's Default to a nested struct, as its NewXxx does.
func defaultOf(v reflect.Value) {
	if !v.CanAddr() {
		return
	}
	if m := v.Addr().MethodByName("Default"); m.IsValid() && m.Type().NumIn() == 0 {
		m.Call(nil)
	}
}

// integer is an edge of a bits-wide integer, a value Kafka gives a meaning,
// or a small number (a partition index, a count). A field named as a wait
// in milliseconds is kept short most of the time, so that long polls end
// within the test's read deadline.
func (f *requestFiller) integer(bits int, name string) int64 {
	if isWait(name) && f.rng.IntN(5) != 0 {
		return f.rng.Int64N(int64(randomRequestWait / time.Millisecond / 2))
	}
	lo, hi := -(int64(1) << (bits - 1)), int64(1)<<(bits-1)-1
	switch f.rng.IntN(4) {
	case 0:
		return pickFrom(f.rng, []int64{lo, hi, lo + 1, hi - 1})
	case 1:
		return clampInt(pickFrom(f.rng, []int64{-1, -2, -3, -4, -5, -1001, -1000}), lo, hi)
	default:
		return clampInt(f.rng.Int64N(12)-1, lo, hi)
	}
}

// isWait reports whether a field name reads as a timeout or wait.
func isWait(name string) bool {
	for _, w := range []string{"Millis", "Timeout", "MaxWait", "Interval"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

func clampInt(n, lo, hi int64) int64 { return min(max(n, lo), hi) }

// name is a name the broker knows (topic, group, config key) or one it
// does not, empty, or long.
func (f *requestFiller) name() string {
	switch f.rng.IntN(6) {
	case 0:
		return ""
	case 1:
		b := make([]byte, 1+f.rng.IntN(300))
		for i := range b {
			b[i] = byte(f.rng.IntN(256))
		}
		return string(b)
	default:
		return pickFrom(f.rng, f.names)
	}
}

// bytes is null, empty, garbage, a valid record batch or one with a byte
// flipped.
func (f *requestFiller) bytes() []byte {
	switch f.rng.IntN(6) {
	case 0:
		return nil
	case 1:
		return []byte{}
	case 2:
		b := make([]byte, f.rng.IntN(100))
		for i := range b {
			b[i] = byte(f.rng.IntN(256))
		}
		return b
	case 3:
		b := append([]byte(nil), f.batch...)
		b[f.rng.IntN(len(b))] ^= byte(1 + f.rng.IntN(255))
		return b
	default:
		return append([]byte(nil), f.batch...)
	}
}

// uuid is zero, an existing topic id or a random one.
func (f *requestFiller) uuid() [16]byte {
	switch f.rng.IntN(3) {
	case 0:
		return [16]byte{}
	case 1:
		if len(f.ids) > 0 {
			return pickFrom(f.rng, f.ids)
		}
	}
	var id [16]byte
	for i := range id {
		id[i] = byte(f.rng.IntN(256))
	}
	return id
}

func pickFrom[T any](rng *rand.Rand, from []T) T { return from[rng.IntN(len(from))] }

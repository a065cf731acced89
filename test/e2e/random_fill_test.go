package e2e

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
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
	names []string // config keys and values, principals, hosts, protocols
	// topics, groups and transactional ids that exist; a field whose name
	// says which it holds takes from its list most of the time.
	topics, groups, txns []string
	ids                  [][16]byte // topic ids that exist
	batch                []byte     // a valid record batch
	// learned holds values of the broker's answers by field name (member
	// ids, generations, producer ids and epochs): a request field of the
	// same name takes one half the time, so that a JoinGroup's member id
	// reaches a later SyncGroup and Heartbeat.
	learned map[string][]reflect.Value
}

// maxLearned bounds the values kept for one field name.
const maxLearned = 16

// learn keeps the integer and string fields of resp (error codes,
// messages and throttles aside) for later requests.
func (f *requestFiller) learn(resp kmsg.Response) {
	if f.learned == nil {
		f.learned = map[string][]reflect.Value{}
	}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		t := v.Type()
		for i := range t.NumField() {
			field, fv := t.Field(i), v.Field(i)
			switch {
			case !field.IsExported() || field.Type == reflect.TypeFor[kmsg.Tags]():
			case fv.Kind() == reflect.Struct:
				walk(fv)
			case fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.Struct:
				for j := range fv.Len() {
					walk(fv.Index(j))
				}
			case fv.Kind() == reflect.String || fv.CanInt():
				switch field.Name {
				case "ErrorCode", "ErrorMessage", "ThrottleMillis", "Version":
					continue
				}
				kept := append(f.learned[field.Name], fv)
				if len(kept) > maxLearned {
					kept = kept[1:]
				}
				f.learned[field.Name] = kept
			}
		}
	}
	walk(reflect.ValueOf(resp).Elem())
}

// recall sets v, a field named name, to a value an answer held in a field
// of that name and type, and reports whether it did.
func (f *requestFiller) recall(v reflect.Value, name string) bool {
	var fits []reflect.Value
	for _, l := range f.learned[name] {
		if l.Type() == v.Type() {
			fits = append(fits, l)
		}
	}
	if len(fits) == 0 {
		return false
	}
	v.Set(pickFrom(f.rng, fits))
	return true
}

// maxFillDepth bounds nesting; kmsg's types are finite, this only keeps
// arrays of arrays small.
const maxFillDepth = 6

// request is a random request of key at version v: half the time, when
// the version sweep has a fill for key (sweepFills), that valid request with
// one to three fields made random; otherwise every field random.
func (f *requestFiller) request(sweep *sweepState, key, v int16) kmsg.Request {
	req := kmsg.RequestForKey(key)
	req.SetVersion(v)
	if fill := sweepFills[key]; fill != nil && f.rng.IntN(2) == 0 {
		fill(sweep, req, v)
		f.mutate(req, 1+f.rng.IntN(3))
	} else {
		f.fillRequest(req)
	}
	return req
}

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
	if (v.Kind() == reflect.String || v.CanInt()) && f.rng.IntN(2) == 0 && f.recall(v, name) {
		return
	}
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
		v.SetString(f.name(name))
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
// does not, empty, or long. A field named for topics, groups or
// transactional ids mostly gets one of those.
func (f *requestFiller) name(field string) string {
	for _, hint := range []struct {
		word string
		from []string
	}{{"Topic", f.topics}, {"Group", f.groups}, {"Transactional", f.txns}} {
		if strings.Contains(field, hint.word) && len(hint.from) > 0 && f.rng.IntN(3) != 0 {
			return pickFrom(f.rng, hint.from)
		}
	}
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
		return pickFrom(f.rng, slices.Concat(f.names, f.topics, f.groups, f.txns))
	}
}

// mutate sets n fields of req, anywhere in it, to random values: a valid
// request with one thing wrong reaches further into a handler than a
// random one.
func (f *requestFiller) mutate(req kmsg.Request, n int) {
	var fields []namedValue
	collectFields(reflect.ValueOf(req).Elem(), &fields)
	if len(fields) == 0 {
		return
	}
	for range n {
		field := pickFrom(f.rng, fields)
		f.value(field.v, field.name, maxFillDepth-2)
	}
}

// namedValue is a settable field and its name.
type namedValue struct {
	v    reflect.Value
	name string
}

// collectFields lists the fields of struct v that mutate may set: leaves,
// and arrays as a whole next to their elements' fields. Nested structs are
// walked, not listed.
func collectFields(v reflect.Value, out *[]namedValue) {
	t := v.Type()
	for i := range t.NumField() {
		field := t.Field(i)
		if !field.IsExported() || field.Name == "Version" || field.Type == reflect.TypeFor[kmsg.Tags]() {
			continue
		}
		fv := v.Field(i)
		switch {
		case fv.Kind() == reflect.Struct:
			collectFields(fv, out)
			continue
		case fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.Struct:
			for j := range fv.Len() {
				collectFields(fv.Index(j), out)
			}
		}
		*out = append(*out, namedValue{fv, field.Name})
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

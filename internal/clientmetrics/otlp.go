package clientmetrics

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Kind is what a sample measures. The zero value is invalid.
type Kind uint8

const (
	// KindGauge is a value at a point in time (an OTLP gauge).
	KindGauge Kind = iota + 1
	// KindCounter is a monotonic sum.
	KindCounter
	// KindUpDownCounter is a non-monotonic sum.
	KindUpDownCounter
)

func (k Kind) String() string {
	switch k {
	case KindGauge:
		return "gauge"
	case KindCounter:
		return "counter"
	case KindUpDownCounter:
		return "updowncounter"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Attribute is one attribute of a sample, its value rendered as a string.
type Attribute struct {
	Key   string
	Value string
}

// Sample is one data point of a pushed gauge or sum.
type Sample struct {
	Name string
	Unit string
	Kind Kind
	// Delta is set for a sum whose points are deltas since the previous
	// push; a cumulative sum, and every gauge, leave it unset.
	Delta bool
	// Attributes are the resource's attributes and the data point's,
	// sorted by key, with unique keys: the data point's win.
	Attributes []Attribute
	// Value is the point's value; an integer point is converted (exact up
	// to 2^53).
	Value             float64
	StartTimeUnixNano uint64
	TimeUnixNano      uint64
}

// Limits on what one payload may decode to: attributes of the resource
// are copied into each of its samples, so a small payload could otherwise
// ask for a large allocation.
const (
	maxSamples    = 1 << 16
	maxAttributes = 1 << 18 // over all samples
)

// DecodeMetrics decodes an OTLP MetricsData (opentelemetry-proto
// metrics/v1) into its gauge and sum data points, in payload order.
// Histograms, exponential histograms and summaries are skipped, as are
// scope attributes, exemplars, metrics without a name and points flagged
// as having no recorded value. Malformed input is an error wrapping
// ErrMalformedMetrics; so is a sum with an unspecified temporality, which
// OTLP forbids, and a payload beyond the limits on samples and attributes.
//
// The decoder streams: it keeps no list of sub-messages, so memory is
// bounded by the samples it returns, whatever the payload holds.
func DecodeMetrics(b []byte) ([]Sample, error) {
	d := &otlpDecoder{}
	err := fields(b, func(f field) error {
		if f.is(1, protowire.BytesType) {
			return d.resourceMetrics(f.bytes)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return d.samples, nil
}

type otlpDecoder struct {
	samples    []Sample
	attributes int // attributes in samples
}

// resourceMetrics decodes a ResourceMetrics. Its resource may come after
// its scope metrics, so a first pass reads the resource and a second the
// metrics.
func (d *otlpDecoder) resourceMetrics(b []byte) error {
	var resource []Attribute
	err := fields(b, func(f field) error {
		if !f.is(1, protowire.BytesType) { // Resource
			return nil
		}
		return fields(f.bytes, func(f field) error {
			if !f.is(1, protowire.BytesType) {
				return nil
			}
			if len(resource) == maxAttributes {
				return malformed("more than %d resource attributes", maxAttributes)
			}
			kv, err := decodeKeyValue(f.bytes, 0)
			resource = append(resource, kv)
			return err
		})
	})
	if err != nil {
		return err
	}
	resource = mergeAttributes(nil, resource)
	return fields(b, func(f field) error {
		if !f.is(2, protowire.BytesType) { // ScopeMetrics
			return nil
		}
		return fields(f.bytes, func(f field) error {
			if f.is(2, protowire.BytesType) {
				return d.metric(f.bytes, resource)
			}
			return nil
		})
	})
}

// The fields of the OTLP Metric data oneof.
const (
	fieldGauge                protowire.Number = 5
	fieldSum                  protowire.Number = 7
	fieldHistogram            protowire.Number = 9
	fieldExponentialHistogram protowire.Number = 10
	fieldSummary              protowire.Number = 11
)

func isDataField(f field) bool {
	switch f.num {
	case fieldGauge, fieldSum, fieldHistogram, fieldExponentialHistogram, fieldSummary:
		return f.typ == protowire.BytesType
	}
	return false
}

// metric decodes a Metric. Of its data oneof the last field wins; several
// occurrences of that field since the last other one merge, as protobuf
// merges messages. A first pass finds the name and which run of data
// fields wins; later passes read that run.
func (d *otlpDecoder) metric(b []byte, resource []Attribute) error {
	var name, unit string
	var data dataRun
	i := 0
	err := fields(b, func(f field) error {
		defer func() { i++ }()
		var err error
		switch {
		case f.is(1, protowire.BytesType):
			name, err = f.str()
		case f.is(2, protowire.BytesType):
			_, err = f.str() // description: checked, not kept
		case f.is(3, protowire.BytesType):
			unit, err = f.str()
		case isDataField(f) && f.num != data.num:
			data = dataRun{num: f.num, from: i}
		}
		return err
	})
	if err != nil || name == "" {
		return err
	}
	proto := Sample{Name: name, Unit: unit}
	switch data.num {
	case fieldGauge:
		proto.Kind = KindGauge
		return data.each(b, func(gauge []byte) error { return d.points(gauge, proto, resource) })
	case fieldSum:
		if err := sumKind(b, data, &proto); err != nil {
			return err
		}
		return data.each(b, func(sum []byte) error { return d.points(sum, proto, resource) })
	}
	return nil
}

// dataRun is the winning run of a Metric's data oneof: the fields num
// from the from-th field of the Metric on.
type dataRun struct {
	num  protowire.Number
	from int
}

// each calls fn with each message of the run in the Metric b.
func (r dataRun) each(b []byte, fn func([]byte) error) error {
	i := 0
	return fields(b, func(f field) error {
		defer func() { i++ }()
		if i >= r.from && f.is(r.num, protowire.BytesType) {
			return fn(f.bytes)
		}
		return nil
	})
}

// OTLP AggregationTemporality values.
const (
	temporalityDelta      = 1
	temporalityCumulative = 2
)

// sumKind sets the kind and temporality of the sum run data of the Metric
// b into s; of repeated values the last wins.
func sumKind(b []byte, data dataRun, s *Sample) error {
	var temporality uint64
	var monotonic bool
	err := data.each(b, func(sum []byte) error {
		return fields(sum, func(f field) error {
			switch {
			case f.is(2, protowire.VarintType):
				temporality = f.u64
			case f.is(3, protowire.VarintType):
				monotonic = f.u64 != 0
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	if temporality != temporalityDelta && temporality != temporalityCumulative {
		return malformed("sum %q has aggregation temporality %d", s.Name, temporality)
	}
	s.Delta = temporality == temporalityDelta
	s.Kind = KindUpDownCounter
	if monotonic {
		s.Kind = KindCounter
	}
	return nil
}

// points decodes the data points (field 1) of a Gauge or Sum message.
func (d *otlpDecoder) points(b []byte, proto Sample, resource []Attribute) error {
	return fields(b, func(f field) error {
		if f.is(1, protowire.BytesType) {
			return d.point(f.bytes, proto, resource)
		}
		return nil
	})
}

// flagNoRecordedValue is DataPointFlags.FLAG_NO_RECORDED_VALUE_MASK.
const flagNoRecordedValue = 1

// point decodes a NumberDataPoint into a sample like proto.
func (d *otlpDecoder) point(b []byte, proto Sample, resource []Attribute) error {
	s := proto
	var attrs []Attribute
	var flags uint64
	err := fields(b, func(f field) error {
		switch {
		case f.is(2, protowire.Fixed64Type):
			s.StartTimeUnixNano = f.u64
		case f.is(3, protowire.Fixed64Type):
			s.TimeUnixNano = f.u64
		case f.is(4, protowire.Fixed64Type): // as_double
			s.Value = math.Float64frombits(f.u64)
		case f.is(6, protowire.Fixed64Type): // as_int, an sfixed64
			s.Value = float64(int64(f.u64))
		case f.is(7, protowire.BytesType):
			if d.attributes+len(resource)+len(attrs) >= maxAttributes {
				return malformed("more than %d attributes over all data points", maxAttributes)
			}
			kv, err := decodeKeyValue(f.bytes, 0)
			attrs = append(attrs, kv)
			return err
		case f.is(8, protowire.VarintType):
			flags = f.u64
		}
		return nil
	})
	if err != nil || flags&flagNoRecordedValue != 0 {
		return err
	}
	if len(d.samples) == maxSamples {
		return malformed("more than %d data points", maxSamples)
	}
	if d.attributes+len(resource)+len(attrs) > maxAttributes {
		return malformed("more than %d attributes over all data points", maxAttributes)
	}
	s.Attributes = mergeAttributes(resource, attrs)
	d.attributes += len(s.Attributes)
	d.samples = append(d.samples, s)
	return nil
}

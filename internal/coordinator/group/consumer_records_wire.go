package group

import "github.com/strata-broker/strata/internal/coordinator/recordwire"

// The wire types of the consumer and share group records
// (consumer_records.go, share_records.go): recordwire's reader, with the
// reads these records share, and its writers.

// recordReader decodes one key or value (recordwire.Reader); its errors
// wrap ErrBadRecord.
type recordReader struct{ *recordwire.Reader }

func newRecordReader(record string, src []byte) *recordReader {
	return &recordReader{recordwire.NewReader(ErrBadRecord, record, src)}
}

// newValueReader reads the value version: Kafka refuses a version outside
// the schema's valid versions, and every consumer value has only the newest.
func newValueReader(record string, value []byte) *recordReader {
	r := newRecordReader(record, value)
	if v := r.Int16("version"); r.Err() == nil && v != consumerValueVersion {
		r.Fail("value version %d (Kafka's newest is %d)", v, consumerValueVersion)
	}
	return r
}

// tags is recordwire's Tags, with a recordReader for each known field.
func (r *recordReader) tags(known func(tag uint32, field *recordReader) bool) {
	if known == nil {
		r.Tags(nil)
		return
	}
	r.Tags(func(tag uint32, f *recordwire.Reader) bool { return known(tag, &recordReader{f}) })
}

// The writers, by their names here.
type recordTag = recordwire.Tag

var (
	appendTags           = recordwire.AppendTags
	checkString          = recordwire.CheckString
	appendString         = recordwire.AppendString
	appendNullableString = recordwire.AppendNullableString
	appendStringList     = recordwire.AppendStringList
	appendInt32List      = recordwire.AppendInt32List
)

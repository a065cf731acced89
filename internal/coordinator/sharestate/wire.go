package sharestate

import "github.com/strata-broker/strata/internal/coordinator/recordwire"

// maxKeyStringBytes is Kafka's limit on a string of a non-flexible key
// (its length is an int16).
const maxKeyStringBytes = recordwire.MaxStringBytes

// recordReader decodes one key or value (recordwire.Reader); its errors
// wrap ErrBadRecord.
type recordReader struct{ *recordwire.Reader }

func newRecordReader(what string, src []byte) *recordReader {
	return &recordReader{recordwire.NewReader(ErrBadRecord, what, src)}
}

// tags is recordwire's Tags, with a recordReader for each known field.
func (r *recordReader) tags(known func(tag uint32, field *recordReader) bool) {
	if known == nil {
		r.Tags(nil)
		return
	}
	r.Tags(func(tag uint32, f *recordwire.Reader) bool { return known(tag, &recordReader{f}) })
}

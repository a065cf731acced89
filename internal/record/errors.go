package record

import "fmt"

// Kafka error codes this package answers with (values as in kerr and the
// Kafka protocol). They travel to clients per partition, in the response.
const (
	CodeCorruptMessage              int16 = 2
	CodeMessageTooLarge             int16 = 10
	CodeInvalidTimestamp            int16 = 32
	CodeUnsupportedForMessageFormat int16 = 43
	CodeInvalidRecord               int16 = 87
)

// Error is a batch rejected with a Kafka error code. Msg says which check
// failed, for logs and for the produce response's error message. Records,
// when set, are the records that failed a per-record check (KIP-467): the
// produce response lists them, and clients fail those records with the
// error and the batch's others as collateral.
type Error struct {
	Code    int16
	Msg     string
	Records []RecordError
}

// RecordError is one record of a refused batch and why: Index is its
// position in the batch (its offset delta).
type RecordError struct {
	Index int32
	Msg   string
}

// RecordsError is the error of a batch refused with code for the records
// errs names (at least one).
func RecordsError(code int16, errs []RecordError) *Error {
	msg := fmt.Sprintf("record %d: %s", errs[0].Index, errs[0].Msg)
	if len(errs) > 1 {
		msg = fmt.Sprintf("%d records refused; the first, %s", len(errs), msg)
	}
	return &Error{Code: code, Msg: msg, Records: errs}
}

func (e *Error) Error() string {
	return fmt.Sprintf("record: %s: %s", codeName(e.Code), e.Msg)
}

func codeName(code int16) string {
	switch code {
	case CodeCorruptMessage:
		return "CORRUPT_MESSAGE"
	case CodeMessageTooLarge:
		return "MESSAGE_TOO_LARGE"
	case CodeInvalidTimestamp:
		return "INVALID_TIMESTAMP"
	case CodeUnsupportedForMessageFormat:
		return "UNSUPPORTED_FOR_MESSAGE_FORMAT"
	case CodeInvalidRecord:
		return "INVALID_RECORD"
	}
	return fmt.Sprintf("error code %d", code)
}

func newError(code int16, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

func corrupt(format string, args ...any) *Error {
	return newError(CodeCorruptMessage, format, args...)
}

func invalid(format string, args ...any) *Error {
	return newError(CodeInvalidRecord, format, args...)
}

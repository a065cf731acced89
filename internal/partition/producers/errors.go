package producers

import "fmt"

// Kafka error codes this package returns.
const (
	CodeOutOfOrderSequenceNumber     int16 = 45
	CodeInvalidProducerEpoch         int16 = 47
	CodeInvalidTxnState              int16 = 48
	CodeTransactionCoordinatorFenced int16 = 52
	CodeInvalidRecord                int16 = 87
)

// CodeError is an error a client receives as a per-partition Kafka error code.
type CodeError struct {
	Code int16
	Msg  string
}

func (e *CodeError) Error() string { return fmt.Sprintf("kafka error %d: %s", e.Code, e.Msg) }

// Is matches any *CodeError with the same code, so that
// errors.Is(err, ErrOutOfOrderSequence) holds whatever the message.
func (e *CodeError) Is(target error) bool {
	t, ok := target.(*CodeError)
	return ok && t.Code == e.Code
}

// Sentinels for errors.Is; the errors returned carry a specific message.
var (
	ErrOutOfOrderSequence   = &CodeError{Code: CodeOutOfOrderSequenceNumber, Msg: "OUT_OF_ORDER_SEQUENCE_NUMBER"}
	ErrInvalidProducerEpoch = &CodeError{Code: CodeInvalidProducerEpoch, Msg: "INVALID_PRODUCER_EPOCH"}
	// ErrInvalidTxnState: a producer with an open transaction sent a
	// batch outside it.
	ErrInvalidTxnState = &CodeError{Code: CodeInvalidTxnState, Msg: "INVALID_TXN_STATE"}
	// ErrTransactionCoordinatorFenced: a marker came from a coordinator
	// older than the one that wrote the producer's last marker.
	ErrTransactionCoordinatorFenced = &CodeError{Code: CodeTransactionCoordinatorFenced, Msg: "TRANSACTION_COORDINATOR_FENCED"}
	ErrInvalidRecord                = &CodeError{Code: CodeInvalidRecord, Msg: "INVALID_RECORD"}
)

func codeErrorf(code int16, format string, args ...any) error {
	return &CodeError{Code: code, Msg: fmt.Sprintf(format, args...)}
}

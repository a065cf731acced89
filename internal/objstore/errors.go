package objstore

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
)

var (
	// ErrNotFound: there is no object under the key.
	ErrNotFound = errors.New("object not found")
	// ErrInvalidKey: the key (or List/DeletePrefix prefix) breaks the rules
	// of ValidateKey. Nothing was done.
	ErrInvalidKey = errors.New("invalid object key")
	// ErrInvalidArgument: a negative size or offset, or a PutFile path that
	// is not a regular file. Nothing was done.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrInvalidRange: GetRange's offset is past the end of the object.
	ErrInvalidRange = errors.New("range past the end of the object")
	// ErrSizeMismatch: Put's body held fewer or more bytes than its size.
	// Nothing was stored.
	ErrSizeMismatch = errors.New("body length differs from the declared size")
	// ErrTransient marks an error that may go away if the operation is
	// retried later: throttling, a server-side 5xx, a timeout, a dropped
	// connection. Test with IsTransient, which also recognises such errors
	// that were not marked.
	ErrTransient = errors.New("transient object-store error")
)

// IsTransient reports whether err is worth retrying later with the same
// arguments: it is marked ErrTransient, or it is a network timeout, a
// refused or reset connection, a truncated body, or the caller's deadline.
// A cancelled context, ErrNotFound and the argument errors are not
// transient: retrying cannot change them.
func IsTransient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, ErrTransient) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	return isNetworkTransient(err)
}

// isNetworkTransient recognises the errors of a connection that failed or
// was cut: the request may not have reached the server, or its answer was
// lost.
func isNetworkTransient(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	for _, target := range []error{
		io.ErrUnexpectedEOF,
		syscall.ECONNREFUSED,
		syscall.ECONNRESET,
		syscall.ECONNABORTED,
		syscall.EPIPE,
		syscall.ETIMEDOUT,
		syscall.EHOSTUNREACH,
		syscall.ENETUNREACH,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

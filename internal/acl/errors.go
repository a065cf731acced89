package acl

import "unicode/utf8"

// Error is a binding or filter that Kafka would refuse. Message is the
// error_message to answer with INVALID_REQUEST, in Kafka's words where Kafka
// has them, so that clients and operators who match on them keep working.
type Error struct {
	Message string
}

func (e *Error) Error() string { return "acl: " + e.Message }

func invalid(message string) *Error { return &Error{Message: message} }

// clip bounds client-supplied text that goes into a message (a principal or
// resource name may be 32 KiB on the wire).
func clip(s string) string {
	const maxLen = 128
	if len(s) <= maxLen {
		return s
	}
	end := maxLen
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + "..."
}

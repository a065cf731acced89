package sasl

import (
	"strconv"
	"unicode/utf8"
)

// Kafka error codes a session returns.
const (
	CodeUnsupportedMechanism int16 = 33 // UNSUPPORTED_SASL_MECHANISM
	CodeIllegalState         int16 = 34 // ILLEGAL_SASL_STATE
	CodeAuthenticationFailed int16 = 58 // SASL_AUTHENTICATION_FAILED
)

// Error is a failed step: Code is the Kafka error code to answer with,
// Message the error_message, worded as Kafka words it. A message never
// reveals whether a user exists beyond what Kafka reveals (a SCRAM exchange
// for an unknown user fails at its first message).
type Error struct {
	Code    int16
	Message string
}

func (e *Error) Error() string {
	return "sasl: " + codeName(e.Code) + ": " + e.Message
}

func codeName(code int16) string {
	switch code {
	case CodeUnsupportedMechanism:
		return "UNSUPPORTED_SASL_MECHANISM"
	case CodeIllegalState:
		return "ILLEGAL_SASL_STATE"
	case CodeAuthenticationFailed:
		return "SASL_AUTHENTICATION_FAILED"
	}
	return "error code " + strconv.Itoa(int(code))
}

// Messages that are Kafka's own words, so that clients and operators who
// match on them keep working.
const (
	msgInvalidUserOrPassword = "Authentication failed: Invalid username or password"
	msgAuthzidMismatch       = "Authentication failed: Client requested an authorization id that is different from username"
	msgAlreadyFailed         = "SASL authentication already failed on this connection"
)

func authFailed(message string) *Error {
	return &Error{Code: CodeAuthenticationFailed, Message: message}
}

func illegalState(message string) *Error {
	return &Error{Code: CodeIllegalState, Message: message}
}

// invalidScramCredentials is Kafka's answer to every SCRAM credential
// failure (unknown user, wrong proof, unusable stored credential): the
// SaslServerAuthenticator replaces the SaslException's text with this so
// that nothing about the user leaks.
func invalidScramCredentials(mechanism string) *Error {
	return authFailed("Authentication failed during authentication due to invalid credentials with SASL mechanism " + mechanism)
}

// clip bounds client-supplied text that goes into a message (a mechanism
// name may be 32 KiB on the wire).
func clip(s string) string {
	const maxLen = 64
	if len(s) <= maxLen {
		return s
	}
	end := maxLen
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + "..."
}

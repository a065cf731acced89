// Package oauth validates the bearer tokens of SASL/OAUTHBEARER (RFC 7628)
// as Kafka's broker does: JSON Web Tokens in the compact JWS form, either
// unsecured (alg "none", Kafka's default OAuthBearerUnsecuredValidator, for
// development) or signed with a key of a JSON Web Key Set (KIP-768,
// OAuthBearerValidatorCallbackHandler). Validation is a pure function of
// the token, the keys, the options and the time; fetching the key set is
// the caller's (KeySetSource wraps one).
package oauth

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// maxTokenBytes bounds a token: a JWT of a real identity provider is a
// few kilobytes.
const maxTokenBytes = 32 << 10

// jws is a compact JWS split into its parts.
type jws struct {
	header       jwsHeader
	claims       map[string]any // numbers as json.Number
	signingInput string         // header.payload, as sent
	signature    []byte
}

// jwsHeader is the part of a JOSE header validation reads.
type jwsHeader struct {
	Alg string `json:"alg"`
	Kid string `json:"kid"`
}

// parseJWS splits and decodes a compact JWS (RFC 7515 §7.1): three
// base64url parts, the first two JSON objects.
func parseJWS(token string) (jws, error) {
	if len(token) > maxTokenBytes {
		return jws{}, invalid("the token is %d bytes, over the limit of %d", len(token), maxTokenBytes)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return jws{}, invalid("the token has %d dot-separated parts, a compact JWS has 3", len(parts))
	}
	var out jws
	header, err := decodePart(parts[0])
	if err != nil {
		return jws{}, invalid("the token's header is not base64url: %v", err)
	}
	if err := json.Unmarshal(header, &out.header); err != nil {
		return jws{}, invalid("the token's header is not a JSON object: %v", err)
	}
	payload, err := decodePart(parts[1])
	if err != nil {
		return jws{}, invalid("the token's payload is not base64url: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	if err := dec.Decode(&out.claims); err != nil || out.claims == nil {
		return jws{}, invalid("the token's payload is not a JSON object")
	}
	if out.signature, err = decodePart(parts[2]); err != nil {
		return jws{}, invalid("the token's signature is not base64url: %v", err)
	}
	out.signingInput = parts[0] + "." + parts[1]
	return out, nil
}

// decodePart decodes base64url without padding (RFC 7515 §2), tolerating
// the padding some encoders add.
func decodePart(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

// invalid is an invalid_token Error.
func invalid(format string, args ...any) *Error {
	return &Error{Status: StatusInvalidToken, Message: fmt.Sprintf(format, args...)}
}

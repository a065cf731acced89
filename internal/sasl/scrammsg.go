package sasl

import (
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The SCRAM client messages of RFC 5802 §7, parsed strictly. Parsers keep
// the parts that enter the AuthMessage exactly as sent, and answer every
// syntax error with a message that names what was wrong, never the
// client's bytes.

// clientFirstMessage is a parsed client-first-message:
//
//	gs2-header client-first-message-bare
//	gs2-header = ("n" / "y") "," ["a=" saslname] ","
//	client-first-message-bare = "n=" saslname ",r=" c-nonce ["," extensions]
type clientFirstMessage struct {
	gs2Header string // as sent, e.g. "n,,"
	authzid   string // decoded; "" if the header has none
	bare      string // client-first-message-bare, as sent
	user      string // decoded saslname; never ""
	nonce     string // c-nonce: non-empty, printable
	tokenAuth bool   // the extension tokenauth=true (KIP-48 delegation tokens)
}

// clientFinalMessage is a parsed client-final-message:
//
//	"c=" base64(gs2-header) ",r=" nonce ["," extensions] ",p=" base64(proof)
type clientFinalMessage struct {
	channelBinding string // c=, still base64, as sent
	nonce          string
	withoutProof   string // client-final-message-without-proof, as sent
	proof          []byte // the mechanism's digest size
}

func malformedFirst(what string) *Error {
	return authFailed("Authentication failed: invalid SCRAM client first message: " + what)
}

func malformedFinal(what string) *Error {
	return authFailed("Authentication failed: invalid SCRAM client final message: " + what)
}

// mandatoryExtension answers "m=": RFC 5802 requires failing on a
// mandatory extension, since the server cannot know what it means.
func mandatoryExtension() *Error {
	return authFailed("Authentication failed: SCRAM mandatory extension (m=) is not supported")
}

func parseClientFirst(token []byte) (clientFirstMessage, error) {
	s := string(token)
	if !utf8.ValidString(s) {
		return clientFirstMessage{}, malformedFirst("not valid UTF-8")
	}
	if strings.HasPrefix(s, "p=") {
		return clientFirstMessage{}, authFailed("Authentication failed: SCRAM channel binding (p=) is not supported")
	}
	// "y" (the client could bind but thinks the server cannot) is
	// accepted: this server offers no -PLUS mechanism, so there is no
	// downgrade to detect (RFC 5802 §6).
	if len(s) < 2 || (s[0] != 'n' && s[0] != 'y') || s[1] != ',' {
		return clientFirstMessage{}, malformedFirst(`GS2 header must start with "n," or "y,"`)
	}
	authzField, bare, ok := strings.Cut(s[2:], ",")
	if !ok {
		return clientFirstMessage{}, malformedFirst("GS2 header is not terminated by ','")
	}
	var m clientFirstMessage
	if authzField != "" {
		encoded, ok := strings.CutPrefix(authzField, "a=")
		if !ok {
			return clientFirstMessage{}, malformedFirst(`GS2 authorization identity must start with "a="`)
		}
		authzid, err := decodeSaslName(encoded)
		if err != "" {
			return clientFirstMessage{}, malformedFirst("authorization identity " + err)
		}
		m.authzid = authzid
	}
	m.gs2Header = s[:len(s)-len(bare)]
	m.bare = bare

	fields := strings.Split(bare, ",")
	if strings.HasPrefix(fields[0], "m=") {
		return clientFirstMessage{}, mandatoryExtension()
	}
	encodedUser, ok := strings.CutPrefix(fields[0], "n=")
	if !ok {
		return clientFirstMessage{}, malformedFirst(`expected the username attribute "n=" after the GS2 header`)
	}
	user, err := decodeSaslName(encodedUser)
	if err != "" {
		return clientFirstMessage{}, malformedFirst("username " + err)
	}
	m.user = user
	if len(fields) < 2 {
		return clientFirstMessage{}, malformedFirst(`missing the nonce attribute "r="`)
	}
	nonce, ok := strings.CutPrefix(fields[1], "r=")
	if !ok {
		return clientFirstMessage{}, malformedFirst(`expected the nonce attribute "r=" after the username`)
	}
	if !printableNonce(nonce) {
		return clientFirstMessage{}, malformedFirst("nonce must be non-empty printable ASCII without ','")
	}
	m.nonce = nonce
	for _, f := range fields[2:] {
		key, value, err := parseExtension(f)
		if err != "" {
			return clientFirstMessage{}, malformedFirst(err)
		}
		if key == "m" {
			return clientFirstMessage{}, mandatoryExtension()
		}
		// Kafka reads the flag with Boolean.parseBoolean: case-insensitive.
		if key == "tokenauth" && strings.EqualFold(value, "true") {
			m.tokenAuth = true
		}
	}
	return m, nil
}

func parseClientFinal(token []byte, proofBytes int) (clientFinalMessage, error) {
	s := string(token)
	if !utf8.ValidString(s) {
		return clientFinalMessage{}, malformedFinal("not valid UTF-8")
	}
	cut := strings.LastIndexByte(s, ',')
	if cut < 0 {
		return clientFinalMessage{}, malformedFinal(`expected "c=", "r=" and "p=" attributes`)
	}
	encodedProof, ok := strings.CutPrefix(s[cut+1:], "p=")
	if !ok {
		return clientFinalMessage{}, malformedFinal(`the proof "p=" must be the last attribute`)
	}
	proof, ok := decodeBase64(encodedProof)
	if !ok {
		return clientFinalMessage{}, malformedFinal("proof is not canonical base64")
	}
	if len(proof) != proofBytes {
		return clientFinalMessage{}, malformedFinal(fmt.Sprintf("proof is %d bytes, want %d", len(proof), proofBytes))
	}
	m := clientFinalMessage{withoutProof: s[:cut], proof: proof}

	fields := strings.Split(m.withoutProof, ",")
	if m.channelBinding, ok = strings.CutPrefix(fields[0], "c="); !ok {
		return clientFinalMessage{}, malformedFinal(`expected the channel binding attribute "c=" first`)
	}
	if len(fields) < 2 {
		return clientFinalMessage{}, malformedFinal(`missing the nonce attribute "r="`)
	}
	if m.nonce, ok = strings.CutPrefix(fields[1], "r="); !ok {
		return clientFinalMessage{}, malformedFinal(`expected the nonce attribute "r=" after the channel binding`)
	}
	for _, f := range fields[2:] {
		key, _, err := parseExtension(f)
		switch {
		case err != "":
			return clientFinalMessage{}, malformedFinal(err)
		case key == "m":
			return clientFinalMessage{}, mandatoryExtension()
		case key == "p":
			return clientFinalMessage{}, malformedFinal(`the proof "p=" must appear once, last`)
		}
	}
	return m, nil
}

// decodeSaslName undoes RFC 5802's saslname escaping: "=2C" is ',' and
// "=3D" is '='; any other '=' is malformed, as are NUL and an empty name.
// It returns what was wrong, or "".
func decodeSaslName(s string) (string, string) {
	if s == "" {
		return "", "is empty"
	}
	if !strings.ContainsAny(s, "=\x00") {
		return s, ""
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		switch {
		case s[i] == 0:
			return "", "contains NUL"
		case strings.HasPrefix(s[i:], "=2C"):
			b.WriteByte(',')
			i += 3
		case strings.HasPrefix(s[i:], "=3D"):
			b.WriteByte('=')
			i += 3
		case s[i] == '=':
			return "", `has an '=' that is not "=2C" or "=3D"`
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String(), ""
}

// parseExtension parses one attr-val of an extension list: a key of ASCII
// letters (Kafka's extensions, like tokenauth, are longer than the RFC's one
// letter), '=', and a non-empty value without NUL. It returns what was
// wrong, or "".
func parseExtension(f string) (key, value, err string) {
	key, value, ok := strings.Cut(f, "=")
	if !ok || key == "" || value == "" {
		return "", "", "an extension must be key=value"
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
			return "", "", "an extension key must be ASCII letters"
		}
	}
	if strings.IndexByte(value, 0) >= 0 {
		return "", "", "an extension value contains NUL"
	}
	return key, value, ""
}

// printableNonce reports whether s is RFC 5802 "printable": non-empty,
// %x21-2B / %x2D-7E.
func printableNonce(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == ',' {
			return false
		}
	}
	return true
}

// decodeBase64 decodes padded standard base64 and accepts only the
// canonical encoding: Go's decoder skips CR and LF and tolerates non-zero
// padding bits, which would let one proof be sent in many spellings.
func decodeBase64(s string) ([]byte, bool) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || base64.StdEncoding.EncodeToString(b) != s {
		return nil, false
	}
	return b, true
}

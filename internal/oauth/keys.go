package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
)

// KeySet is a parsed JSON Web Key Set (RFC 7517 §5): the public keys a
// signed token may be verified with. It is never modified once parsed.
type KeySet struct {
	keys []jwk
}

// jwk is one usable public key.
type jwk struct {
	kid string
	alg string // "" when the key does not restrict it
	pub crypto.PublicKey
}

// Len is the number of usable keys.
func (s KeySet) Len() int { return len(s.keys) }

// wireJWK is a key as the set holds it.
type wireJWK struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// ParseKeySet parses a JWKS document. Keys Strata cannot verify with
// (symmetric ones, encryption keys, unknown types or curves) are skipped,
// as a JWKS client skips them; a document with no usable key, or a usable
// key type whose parameters are malformed, is an error.
func ParseKeySet(data []byte) (KeySet, error) {
	var doc struct {
		Keys []wireJWK `json:"keys"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return KeySet{}, fmt.Errorf("oauth: the key set is not a JWKS JSON document: %w", err)
	}
	var set KeySet
	for i, w := range doc.Keys {
		if w.Use != "" && w.Use != "sig" {
			continue
		}
		var pub crypto.PublicKey
		var err error
		switch w.Kty {
		case "RSA":
			pub, err = rsaKey(w)
		case "EC":
			pub, err = ecKey(w)
		default:
			continue
		}
		if errors.Is(err, errSkipKey) {
			continue
		}
		if err != nil {
			return KeySet{}, fmt.Errorf("oauth: key %d (kid %q) of the key set: %w", i, w.Kid, err)
		}
		set.keys = append(set.keys, jwk{kid: w.Kid, alg: w.Alg, pub: pub})
	}
	if len(set.keys) == 0 {
		return KeySet{}, errors.New("oauth: the key set has no RSA or EC signing key")
	}
	return set, nil
}

// errSkipKey marks a key of a kind Strata does not verify with.
var errSkipKey = errors.New("unsupported key")

func rsaKey(w wireJWK) (*rsa.PublicKey, error) {
	n, err := decodePart(w.N)
	if err != nil || len(n) == 0 {
		return nil, errors.New("its modulus n is not base64url")
	}
	e, err := decodePart(w.E)
	if err != nil || len(e) == 0 || len(e) > 4 {
		return nil, errors.New("its exponent e is not a base64url integer of at most 4 bytes")
	}
	exp := int(new(big.Int).SetBytes(e).Int64())
	key := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: exp}
	if key.N.BitLen() < 2048 || exp < 3 || exp%2 == 0 {
		return nil, fmt.Errorf("an RSA key of %d bits with exponent %d is too weak to verify with", key.N.BitLen(), exp)
	}
	return key, nil
}

func ecKey(w wireJWK) (*ecdsa.PublicKey, error) {
	var curve elliptic.Curve
	switch w.Crv {
	case "P-256":
		curve = elliptic.P256()
	case "P-384":
		curve = elliptic.P384()
	case "P-521":
		curve = elliptic.P521()
	default:
		return nil, errSkipKey
	}
	size := (curve.Params().BitSize + 7) / 8
	x, errX := decodePart(w.X)
	y, errY := decodePart(w.Y)
	if errX != nil || errY != nil || len(x) != size || len(y) != size {
		return nil, fmt.Errorf("its coordinates are not base64url integers of %d bytes", size)
	}
	// The uncompressed point encoding checks that the point is on the curve.
	point := append(append([]byte{4}, x...), y...)
	key, err := ecdsa.ParseUncompressedPublicKey(curve, point)
	if err != nil {
		return nil, fmt.Errorf("its point is not on %s", w.Crv)
	}
	return key, nil
}

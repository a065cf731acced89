package oauth

import (
	"testing"
	"time"
)

// FuzzValidate feeds arbitrary tokens to both validators: they never
// panic, a refusal is an *Error with a status, and an accepted token has
// a principal and has not expired (the claims were checked).
func FuzzValidate(f *testing.F) {
	f.Add("eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIiwiZXhwIjoxODAwMDAzNjAwfQ.")
	f.Add("eyJhbGciOiJSUzI1NiIsImtpZCI6InIxIn0.eyJzdWIiOiJhIiwiZXhwIjoxODAwMDAzNjAwfQ.c2ln")
	f.Add("a.b.c")
	f.Add("..")
	f.Add("eyJhbGciOiJub25lIn0.W10.")
	f.Add("eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIiwiZXhwIjoiMSJ9.")
	keys := fuzzKeys(f)
	f.Fuzz(func(t *testing.T, token string) {
		for _, validate := range []func() (Token, error){
			func() (Token, error) { return ValidateUnsecured(token, Options{ScopeClaim: "scope"}, testNow) },
			func() (Token, error) { return ValidateSigned(token, keys, Options{}, testNow) },
		} {
			got, err := validate()
			if err != nil {
				oe, ok := err.(*Error)
				if !ok || oe.Status == "" || oe.Message == "" {
					t.Fatalf("refused with %T %v, want an *Error with a status", err, err)
				}
				continue
			}
			if got.Principal == "" || !got.Expires.After(testNow.Add(-time.Nanosecond)) {
				t.Fatalf("accepted %+v", got)
			}
		}
	})
}

func fuzzKeys(f *testing.F) KeySet {
	k := testKeys()
	keys, err := ParseKeySet(jwksOfTB(f, rsaJWK("r1", &k.rsa.PublicKey), ecJWK("e1", &k.p256.PublicKey)))
	if err != nil {
		f.Fatal(err)
	}
	return keys
}

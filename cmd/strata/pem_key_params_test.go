package main

import (
	"bytes"
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"hash"
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/testpki"
)

// pbes2Key is how encryptPKCS8 writes a key: the choices a key file makes,
// and the damage a test does to it.
type pbes2Key struct {
	cipher     asn1.ObjectIdentifier
	keyLen     int // the cipher's
	prf        asn1.ObjectIdentifier
	prfHash    func() hash.Hash
	iterations int
	kdfKeyLen  int // 0: not written
	// Damage, after the key is encrypted right.
	scheme, kdf asn1.ObjectIdentifier // instead of PBES2, PBKDF2
	ivLen       int                   // instead of the block size
	pad         func(plain []byte, blockSize int) []byte
	data        func([]byte) []byte
	trailing    bool
}

// encryptPKCS8 encrypts plain (PKCS#8 DER) with password as k says.
func encryptPKCS8(t *testing.T, plain []byte, password string, k pbes2Key) []byte {
	t.Helper()
	salt := []byte("0123456789abcdef")
	// The iteration counts decryptPKCS8 refuses are not worth deriving.
	key, err := pbkdf2.Key(k.prfHash, password, salt, max(1, min(k.iterations, 1000)), k.keyLen)
	if err != nil {
		t.Fatal(err)
	}
	var block cipher.Block
	if k.keyLen == 24 && k.cipher.Equal(oidDESEDE3CBC) {
		block, err = des.NewTripleDESCipher(key)
	} else {
		block, err = aes.NewCipher(key)
	}
	if err != nil {
		t.Fatal(err)
	}
	pad := k.pad
	if pad == nil {
		pad = func(p []byte, bs int) []byte {
			n := bs - len(p)%bs
			return append(p, bytes.Repeat([]byte{byte(n)}, n)...)
		}
	}
	padded := pad(bytes.Clone(plain), block.BlockSize())
	iv := make([]byte, block.BlockSize())
	data := make([]byte, len(padded))
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(data, padded)
	if k.data != nil {
		data = k.data(data)
	}
	if k.ivLen != 0 {
		iv = make([]byte, k.ivLen)
	}
	marshal := func(v any) asn1.RawValue {
		der, err := asn1.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return asn1.RawValue{FullBytes: der}
	}
	kdfParams := pbkdf2Params{Salt: salt, Iterations: k.iterations, KeyLength: k.kdfKeyLen}
	if k.prf != nil {
		kdfParams.PRF = pkix.AlgorithmIdentifier{Algorithm: k.prf, Parameters: asn1.NullRawValue}
	}
	scheme, kdf := oidPBES2, oidPBKDF2
	if k.scheme != nil {
		scheme = k.scheme
	}
	if k.kdf != nil {
		kdf = k.kdf
	}
	params := pbes2Params{
		KeyDerivation: pkix.AlgorithmIdentifier{Algorithm: kdf, Parameters: marshal(kdfParams)},
		Encryption:    pkix.AlgorithmIdentifier{Algorithm: k.cipher, Parameters: marshal(iv)},
	}
	der, err := asn1.Marshal(encryptedPrivateKeyInfo{Algorithm: pkix.AlgorithmIdentifier{Algorithm: scheme, Parameters: marshal(params)}, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	if k.trailing {
		der = append(der, 0)
	}
	return der
}

// TestDecryptPKCS8 decrypts each cipher and PRF of PBES2, and refuses a
// key file whose parameters or padding are wrong with the reason.
func TestDecryptPKCS8(t *testing.T) {
	pki, err := testpki.New()
	if err != nil {
		t.Fatal(err)
	}
	plain, err := x509.MarshalPKCS8PrivateKey(pki.Server.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	aes256 := pbes2Key{cipher: oidAES256CBC, keyLen: 32, prf: oidHMACSHA256, prfHash: sha256.New, iterations: 1000}
	with := func(change func(*pbes2Key)) pbes2Key {
		k := aes256
		change(&k)
		return k
	}
	for name, k := range map[string]pbes2Key{
		"AES-256, HMAC-SHA256":     aes256,
		"AES-128, SHA1 by default": {cipher: oidAES128CBC, keyLen: 16, prfHash: sha1.New, iterations: 1000},
		"AES-192, HMAC-SHA1":       {cipher: oidAES192CBC, keyLen: 24, prf: oidHMACSHA1, prfHash: sha1.New, iterations: 1000},
		"3DES, HMAC-SHA224":        {cipher: oidDESEDE3CBC, keyLen: 24, prf: oidHMACSHA224, prfHash: sha256.New224, iterations: 1000},
		"AES-256, HMAC-SHA384":     with(func(k *pbes2Key) { k.prf, k.prfHash = oidHMACSHA384, sha512.New384 }),
		"AES-256, HMAC-SHA512":     with(func(k *pbes2Key) { k.prf, k.prfHash = oidHMACSHA512, sha512.New }),
		"key length written":       with(func(k *pbes2Key) { k.kdfKeyLen = 32 }),
		"one iteration":            with(func(k *pbes2Key) { k.iterations = 1 }),
	} {
		t.Run(name, func(t *testing.T) {
			key, err := decryptPKCS8(encryptPKCS8(t, plain, "pw", k), "pw")
			if err != nil {
				t.Fatal(err)
			}
			if !pki.Server.PrivateKey.(interface{ Equal(crypto.PrivateKey) bool }).Equal(key) {
				t.Fatal("decrypted another key")
			}
		})
	}

	for name, tc := range map[string]struct {
		key  pbes2Key
		want string
	}{
		"trailing bytes":         {with(func(k *pbes2Key) { k.trailing = true }), "is not an encrypted PKCS#8 private key"},
		"not PBES2":              {with(func(k *pbes2Key) { k.scheme = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 1, 3} }), "not PBES2"},
		"not PBKDF2":             {with(func(k *pbes2Key) { k.kdf = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 11591, 4, 11} }), "not PBKDF2"},
		"another cipher":         {with(func(k *pbes2Key) { k.cipher = asn1.ObjectIdentifier{1, 2, 840, 113549, 3, 2} }), "use AES-CBC"},
		"another PRF":            {with(func(k *pbes2Key) { k.prf = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 5} }), "use HMAC-SHA256"},
		"no iteration":           {with(func(k *pbes2Key) { k.iterations = 0 }), "asks for 0 PBKDF2 iterations"},
		"too many iterations":    {with(func(k *pbes2Key) { k.iterations = maxPBKDF2Iterations + 1 }), "PBKDF2 iterations"},
		"another key length":     {with(func(k *pbes2Key) { k.kdfKeyLen = 16 }), "a 16-byte key for a 32-byte cipher"},
		"a short IV":             {with(func(k *pbes2Key) { k.ivLen = 8 }), "initialization vector"},
		"no data":                {with(func(k *pbes2Key) { k.data = func([]byte) []byte { return nil } }), "wrong length"},
		"data not of blocks":     {with(func(k *pbes2Key) { k.data = func(d []byte) []byte { return d[:len(d)-1] } }), "wrong length"},
		"padding beyond a block": {with(func(k *pbes2Key) { k.pad = padBeyondBlock }), errWrongKeyPassword.Error()},
		"padding bytes differ":   {with(func(k *pbes2Key) { k.pad = padBytesDiffer }), errWrongKeyPassword.Error()},
		"not a private key": {with(func(k *pbes2Key) {
			k.pad = func(_ []byte, bs int) []byte { return bytes.Repeat([]byte{byte(bs)}, 2*bs) }
		}), errWrongKeyPassword.Error()},
	} {
		t.Run(name, func(t *testing.T) {
			key, err := decryptPKCS8(encryptPKCS8(t, plain, "pw", tc.key), "pw")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("decryptPKCS8 = %T, %v; want an error with %q", key, err, tc.want)
			}
			if tc.want == errWrongKeyPassword.Error() && !errors.Is(err, errWrongKeyPassword) {
				t.Fatalf("%v is not errWrongKeyPassword", err)
			}
		})
	}
}

// padBeyondBlock pads with more than a block of bytes that each say so.
func padBeyondBlock(p []byte, bs int) []byte {
	n := bs - len(p)%bs + bs
	return append(p, bytes.Repeat([]byte{byte(n)}, n)...)
}

// padBytesDiffer pads with bytes of which only the last gives the count
// (a P-256 key's 138 bytes leave six to pad).
func padBytesDiffer(p []byte, bs int) []byte {
	n := bs - len(p)%bs
	p = append(p, make([]byte, n-1)...)
	return append(p, byte(n))
}

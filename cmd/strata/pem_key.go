package main

import (
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
	"fmt"
	"hash"
)

// Encrypted PKCS#8 private keys (PEM "ENCRYPTED PRIVATE KEY", RFC 5958)
// protected with PBES2 (RFC 8018): PBKDF2 with HMAC-SHA1 or SHA-2, then
// AES-CBC or 3DES-CBC, what `openssl pkcs8 -topk8 -v2 aes-256-cbc` and
// Java write, and what Kafka's PEM keystores take with ssl.key.password
// (KIP-651).

var (
	oidPBES2      = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidHMACSHA1   = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}
	oidHMACSHA224 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 8}
	oidHMACSHA256 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidHMACSHA384 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 10}
	oidHMACSHA512 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 11}
	oidAES128CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 2}
	oidAES192CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 22}
	oidAES256CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
	oidDESEDE3CBC = asn1.ObjectIdentifier{1, 2, 840, 113549, 3, 7}
)

type encryptedPrivateKeyInfo struct {
	Algorithm pkix.AlgorithmIdentifier
	Data      []byte
}

type pbes2Params struct {
	KeyDerivation pkix.AlgorithmIdentifier
	Encryption    pkix.AlgorithmIdentifier
}

type pbkdf2Params struct {
	Salt       []byte
	Iterations int
	KeyLength  int                      `asn1:"optional"`
	PRF        pkix.AlgorithmIdentifier `asn1:"optional"`
}

// errWrongKeyPassword is a decryption that did not give a private key.
var errWrongKeyPassword = errors.New("cannot be decrypted with ssl.key.password: the password is wrong")

// maxPBKDF2Iterations bounds the work a key file can ask for.
const maxPBKDF2Iterations = 10_000_000

// decryptPKCS8 decrypts an encrypted PKCS#8 private key with password.
func decryptPKCS8(der []byte, password string) (any, error) {
	var info encryptedPrivateKeyInfo
	if rest, err := asn1.Unmarshal(der, &info); err != nil || len(rest) > 0 {
		return nil, errors.New("is not an encrypted PKCS#8 private key")
	}
	if !info.Algorithm.Algorithm.Equal(oidPBES2) {
		return nil, fmt.Errorf("is encrypted with %v, not PBES2; re-encrypt it with openssl pkcs8 -topk8 -v2 aes-256-cbc", info.Algorithm.Algorithm)
	}
	var params pbes2Params
	if _, err := asn1.Unmarshal(info.Algorithm.Parameters.FullBytes, &params); err != nil {
		return nil, errors.New("has unreadable PBES2 parameters")
	}
	block, keyLen, err := pbes2Cipher(params.Encryption.Algorithm)
	if err != nil {
		return nil, err
	}
	if !params.KeyDerivation.Algorithm.Equal(oidPBKDF2) {
		return nil, fmt.Errorf("derives its key with %v, not PBKDF2", params.KeyDerivation.Algorithm)
	}
	var kdf pbkdf2Params
	if _, err := asn1.Unmarshal(params.KeyDerivation.Parameters.FullBytes, &kdf); err != nil {
		return nil, errors.New("has unreadable PBKDF2 parameters")
	}
	if kdf.Iterations < 1 || kdf.Iterations > maxPBKDF2Iterations {
		return nil, fmt.Errorf("asks for %d PBKDF2 iterations", kdf.Iterations)
	}
	prf, err := pbkdf2PRF(kdf.PRF.Algorithm)
	if err != nil {
		return nil, err
	}
	if kdf.KeyLength != 0 && kdf.KeyLength != keyLen {
		return nil, fmt.Errorf("has a %d-byte key for a %d-byte cipher", kdf.KeyLength, keyLen)
	}
	key, err := pbkdf2.Key(prf, password, kdf.Salt, kdf.Iterations, keyLen)
	if err != nil {
		return nil, err
	}
	c, err := block(key)
	if err != nil {
		return nil, err
	}
	var iv []byte
	if _, err := asn1.Unmarshal(params.Encryption.Parameters.FullBytes, &iv); err != nil || len(iv) != c.BlockSize() {
		return nil, errors.New("has no usable initialization vector")
	}
	data := info.Data
	if len(data) == 0 || len(data)%c.BlockSize() != 0 {
		return nil, errors.New("has encrypted data of a wrong length")
	}
	plain := make([]byte, len(data))
	cipher.NewCBCDecrypter(c, iv).CryptBlocks(plain, data)
	plain, ok := unpad(plain, c.BlockSize())
	if !ok {
		return nil, errWrongKeyPassword
	}
	priv, err := x509.ParsePKCS8PrivateKey(plain)
	if err != nil {
		return nil, errWrongKeyPassword
	}
	return priv, nil
}

func pbes2Cipher(oid asn1.ObjectIdentifier) (func([]byte) (cipher.Block, error), int, error) {
	switch {
	case oid.Equal(oidAES128CBC):
		return aes.NewCipher, 16, nil
	case oid.Equal(oidAES192CBC):
		return aes.NewCipher, 24, nil
	case oid.Equal(oidAES256CBC):
		return aes.NewCipher, 32, nil
	case oid.Equal(oidDESEDE3CBC):
		return des.NewTripleDESCipher, 24, nil
	}
	return nil, 0, fmt.Errorf("is encrypted with cipher %v; use AES-CBC (openssl pkcs8 -topk8 -v2 aes-256-cbc)", oid)
}

func pbkdf2PRF(oid asn1.ObjectIdentifier) (func() hash.Hash, error) {
	switch {
	case len(oid) == 0 || oid.Equal(oidHMACSHA1):
		return sha1.New, nil
	case oid.Equal(oidHMACSHA224):
		return sha256.New224, nil
	case oid.Equal(oidHMACSHA256):
		return sha256.New, nil
	case oid.Equal(oidHMACSHA384):
		return sha512.New384, nil
	case oid.Equal(oidHMACSHA512):
		return sha512.New, nil
	}
	return nil, fmt.Errorf("derives its key with PRF %v; use HMAC-SHA256", oid)
}

// unpad strips PKCS#7 padding; ok is false when it is not valid (a wrong
// password, most likely).
func unpad(b []byte, blockSize int) ([]byte, bool) {
	n := int(b[len(b)-1])
	if n == 0 || n > blockSize || n > len(b) {
		return nil, false
	}
	for _, p := range b[len(b)-n:] {
		if int(p) != n {
			return nil, false
		}
	}
	return b[:len(b)-n], true
}

package testpki

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
)

// EncryptedServerKeyPEM is the server's private key as encrypted PKCS#8
// PEM (-----BEGIN ENCRYPTED PRIVATE KEY-----): PBES2 with PBKDF2-HMAC-SHA256
// and AES-256-CBC, as `openssl pkcs8 -topk8 -v2 aes-256-cbc` writes it.
func (p *PKI) EncryptedServerKeyPEM(password string) ([]byte, error) {
	plain, err := x509.MarshalPKCS8PrivateKey(p.Server.PrivateKey)
	if err != nil {
		return nil, err
	}
	salt, iv := make([]byte, 16), make([]byte, aes.BlockSize)
	if _, err := rand.Read(salt); err != nil {
		return nil, err
	}
	if _, err := rand.Read(iv); err != nil {
		return nil, err
	}
	const iterations = 2048
	key, err := pbkdf2.Key(sha256.New, password, salt, iterations, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	pad := aes.BlockSize - len(plain)%aes.BlockSize
	for range pad {
		plain = append(plain, byte(pad))
	}
	data := make([]byte, len(plain))
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(data, plain)

	type kdfParams struct {
		Salt       []byte
		Iterations int
		PRF        pkix.AlgorithmIdentifier
	}
	kdf, err := asn1.Marshal(kdfParams{Salt: salt, Iterations: iterations,
		PRF: pkix.AlgorithmIdentifier{Algorithm: asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}, Parameters: asn1.NullRawValue}})
	if err != nil {
		return nil, err
	}
	ivDER, err := asn1.Marshal(iv)
	if err != nil {
		return nil, err
	}
	params, err := asn1.Marshal(struct {
		KDF, Cipher pkix.AlgorithmIdentifier
	}{
		KDF:    pkix.AlgorithmIdentifier{Algorithm: asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}, Parameters: asn1.RawValue{FullBytes: kdf}},
		Cipher: pkix.AlgorithmIdentifier{Algorithm: asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}, Parameters: asn1.RawValue{FullBytes: ivDER}},
	})
	if err != nil {
		return nil, err
	}
	der, err := asn1.Marshal(struct {
		Algorithm pkix.AlgorithmIdentifier
		Data      []byte
	}{
		Algorithm: pkix.AlgorithmIdentifier{Algorithm: asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}, Parameters: asn1.RawValue{FullBytes: params}},
		Data:      data,
	})
	if err != nil {
		return nil, err
	}
	return pemBlock("ENCRYPTED PRIVATE KEY", der), nil
}

package mls

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/hpke"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/banterbot/banter/discord/dave/mls/tls"
)

// Cipher suite 2, MLS_128_DHKEMP256_AES128GCM_SHA256_P256 (RFC 9420 §17.1),
// is the only suite DAVE uses; every helper below is fixed to it.
const (
	// ProtocolVersion is mls10.
	ProtocolVersion uint16 = 1
	// CipherSuite is MLS_128_DHKEMP256_AES128GCM_SHA256_P256.
	CipherSuite uint16 = 2
	// HashSize is Nh for SHA-256.
	HashSize      = 32
	aeadKeySize   = 16
	aeadNonceSize = 12
)

var (
	errSignature = errors.New("mls: invalid signature")
	errPublicKey = errors.New("mls: invalid public key")
)

var hpkeKEM = hpke.DHKEM(ecdh.P256())

func hpkeSuite() (hpke.KDF, hpke.AEAD) { return hpke.HKDFSHA256(), hpke.AES128GCM() }

func label(l string) []byte { return []byte("MLS 1.0 " + l) }

// ExpandWithLabel is RFC 9420 §5.1:
// HKDF-Expand(secret, KDFLabel{u16 length, "MLS 1.0 "+label, context}, length).
func ExpandWithLabel(secret []byte, lbl string, context []byte, length int) []byte {
	info := tls.AppendU16(nil, uint16(length))
	info = tls.AppendVec(info, label(lbl))
	info = tls.AppendVec(info, context)
	out, err := hkdf.Expand(sha256.New, secret, string(info), length)
	if err != nil {
		panic("mls: hkdf expand: " + err.Error()) // only on length > 255*32
	}
	return out
}

// DeriveSecret is ExpandWithLabel(secret, label, "", Nh).
func DeriveSecret(secret []byte, lbl string) []byte {
	return ExpandWithLabel(secret, lbl, nil, HashSize)
}

// DeriveTreeSecret is ExpandWithLabel(secret, label, u32 generation, length) (RFC 9420 §9.1).
func DeriveTreeSecret(secret []byte, lbl string, generation uint32, length int) []byte {
	return ExpandWithLabel(secret, lbl, tls.AppendU32(nil, generation), length)
}

// Extract is HKDF-Extract(salt, ikm) with SHA-256.
func Extract(salt, ikm []byte) []byte {
	out, err := hkdf.Extract(sha256.New, ikm, salt)
	if err != nil {
		panic("mls: hkdf extract: " + err.Error())
	}
	return out
}

// MAC is HMAC-SHA256.
func MAC(key, data []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(data)
	return m.Sum(nil)
}

// Hash is SHA-256.
func Hash(data []byte) []byte {
	h := sha256.Sum256(data)
	return h[:]
}

// RefHash is RFC 9420 §5.2: SHA256(RefHashInput{label<V>, value<V>}).
func RefHash(lbl string, value []byte) []byte {
	b := tls.AppendVec(nil, []byte(lbl))
	b = tls.AppendVec(b, value)
	return Hash(b)
}

func signContent(lbl string, content []byte) []byte {
	b := tls.AppendVec(nil, label(lbl))
	return tls.AppendVec(b, content)
}

// SignWithLabel is RFC 9420 §5.1.2: a DER ECDSA P-256/SHA-256 signature over
// SignContent{"MLS 1.0 "+label, content}.
func SignWithLabel(priv *ecdsa.PrivateKey, lbl string, content []byte) ([]byte, error) {
	h := sha256.Sum256(signContent(lbl, content))
	sig, err := ecdsa.SignASN1(rand.Reader, priv, h[:])
	if err != nil {
		return nil, fmt.Errorf("mls: sign %s: %w", lbl, err)
	}
	return sig, nil
}

// VerifyWithLabel checks a SignWithLabel signature made by the 65-byte
// uncompressed P-256 key pub.
func VerifyWithLabel(pub []byte, lbl string, content, sig []byte) error {
	pk, err := ParseSignaturePublicKey(pub)
	if err != nil {
		return err
	}
	h := sha256.Sum256(signContent(lbl, content))
	if !ecdsa.VerifyASN1(pk, h[:], sig) {
		return fmt.Errorf("%w: %s", errSignature, lbl)
	}
	return nil
}

// ParseSignaturePublicKey parses a 65-byte uncompressed P-256 point.
func ParseSignaturePublicKey(pub []byte) (*ecdsa.PublicKey, error) {
	pk, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), pub)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errPublicKey, err)
	}
	return pk, nil
}

// ParseSignaturePrivateKey parses a 32-byte P-256 scalar.
func ParseSignaturePrivateKey(priv []byte) (*ecdsa.PrivateKey, error) {
	k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), priv)
	if err != nil {
		return nil, fmt.Errorf("mls: signature private key: %w", err)
	}
	return k, nil
}

// GenerateSignatureKey makes a fresh P-256 signing key.
func GenerateSignatureKey() (*ecdsa.PrivateKey, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("mls: generate signature key: %w", err)
	}
	return k, nil
}

// SignaturePublicKey returns the 65-byte uncompressed encoding of k's public key.
func SignaturePublicKey(k *ecdsa.PrivateKey) []byte {
	b, err := k.PublicKey.Bytes()
	if err != nil {
		panic("mls: P-256 public key encoding: " + err.Error())
	}
	return b
}

// HPKEPrivateKey parses a 32-byte P-256 HPKE private key.
func HPKEPrivateKey(priv []byte) (hpke.PrivateKey, error) {
	k, err := hpkeKEM.NewPrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("mls: hpke private key: %w", err)
	}
	return k, nil
}

// GenerateHPKEKey makes a fresh HPKE key pair.
func GenerateHPKEKey() (hpke.PrivateKey, error) {
	k, err := hpkeKEM.GenerateKey()
	if err != nil {
		return nil, fmt.Errorf("mls: generate hpke key: %w", err)
	}
	return k, nil
}

// DeriveNodeKey is RFC 9420 §7.4: the HPKE key pair derived from
// DeriveSecret(path_secret, "node").
func DeriveNodeKey(pathSecret []byte) (hpke.PrivateKey, error) {
	k, err := hpkeKEM.DeriveKeyPair(DeriveSecret(pathSecret, "node"))
	if err != nil {
		return nil, fmt.Errorf("mls: derive node key: %w", err)
	}
	return k, nil
}

func encryptContext(lbl string, context []byte) []byte {
	b := tls.AppendVec(nil, label(lbl))
	return tls.AppendVec(b, context)
}

// EncryptWithLabel is RFC 9420 §5.1.3: HPKE SealBase to pub with
// info = EncryptContext{"MLS 1.0 "+label, context} and empty aad.
func EncryptWithLabel(pub []byte, lbl string, context, plaintext []byte) (HPKECiphertext, error) {
	pk, err := hpkeKEM.NewPublicKey(pub)
	if err != nil {
		return HPKECiphertext{}, fmt.Errorf("mls: encrypt %s: %w", lbl, err)
	}
	kdf, aead := hpkeSuite()
	enc, s, err := hpke.NewSender(pk, kdf, aead, encryptContext(lbl, context))
	if err != nil {
		return HPKECiphertext{}, fmt.Errorf("mls: encrypt %s: %w", lbl, err)
	}
	ct, err := s.Seal(nil, plaintext)
	if err != nil {
		return HPKECiphertext{}, fmt.Errorf("mls: encrypt %s: %w", lbl, err)
	}
	return HPKECiphertext{KEMOutput: enc, Ciphertext: ct}, nil
}

// DecryptWithLabel opens an EncryptWithLabel ciphertext.
func DecryptWithLabel(priv hpke.PrivateKey, lbl string, context []byte, ct HPKECiphertext) ([]byte, error) {
	kdf, aead := hpkeSuite()
	r, err := hpke.NewRecipient(ct.KEMOutput, priv, kdf, aead, encryptContext(lbl, context))
	if err != nil {
		return nil, fmt.Errorf("mls: decrypt %s: %w", lbl, err)
	}
	pt, err := r.Open(nil, ct.Ciphertext)
	if err != nil {
		return nil, fmt.Errorf("mls: decrypt %s: %w", lbl, err)
	}
	return pt, nil
}

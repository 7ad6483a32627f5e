package frame

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
)

var errAuth = errors.New("frame: authentication failed")

// gcm8 is AES-128-GCM with the tag truncated to 8 bytes (DAVE). Go's
// cipher.NewGCMWithTagSize refuses tags under 12 bytes, so Open re-seals:
// GCM is CTR plus GHASH over the ciphertext, so Seal(ct) yields the
// plaintext (its tag is discarded) and Seal(pt) yields the full tag over
// ct, whose first 8 bytes are compared in constant time. scratch is reused.
type gcm8 struct {
	aead    cipher.AEAD
	nonce   [12]byte
	scratch []byte
}

func newGCM8(key []byte) (*gcm8, error) {
	blk, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("frame: cipher: %w", err)
	}
	a, err := cipher.NewGCM(blk)
	if err != nil {
		return nil, fmt.Errorf("frame: cipher: %w", err)
	}
	return &gcm8{aead: a}, nil
}

// setNonce places the truncated nonce: 00×8 || LE32(nonce).
func (g *gcm8) setNonce(n uint32) {
	binary.LittleEndian.PutUint32(g.nonce[8:], n)
}

// seal appends ciphertext || tag[:8] of pt to dst.
func (g *gcm8) seal(dst []byte, nonce uint32, pt, aad []byte) []byte {
	g.setNonce(nonce)
	n := len(dst)
	dst = g.aead.Seal(dst, g.nonce[:], pt, aad)
	return dst[:n+len(pt)+TagSize]
}

// open appends the plaintext of ct to dst if tag authenticates it.
func (g *gcm8) open(dst []byte, nonce uint32, ct, tag, aad []byte) ([]byte, error) {
	g.setNonce(nonce)
	n := len(dst)
	dst = g.aead.Seal(dst, g.nonce[:], ct, aad)[:n+len(ct)] // plaintext
	g.scratch = g.aead.Seal(g.scratch[:0], g.nonce[:], dst[n:], aad)
	if subtle.ConstantTimeCompare(g.scratch[len(ct):len(ct)+TagSize], tag) != 1 {
		clear(dst[n:])
		return dst[:n], errAuth
	}
	return dst, nil
}

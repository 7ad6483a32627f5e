package frame

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"testing"
)

// BenchmarkEncryptDecrypt is one 20 ms Opus frame (160 bytes) through the
// encryptor and the decryptor, against a baseline of plain AES-128-GCM
// Seal+Open with a 16-byte tag on the same bytes, in the same run.
func BenchmarkEncryptDecrypt(b *testing.B) {
	opus := bytes.Repeat([]byte{0x5a}, 160)
	key := bytes.Repeat([]byte{7}, 16)
	b.Run("dave", func(b *testing.B) {
		e := NewEncryptor()
		e.SetRatchet(NewRatchet(key))
		d := NewDecryptor(nil)
		d.TransitionToRatchet(NewRatchet(key))
		enc := make([]byte, 0, 256)
		dec := make([]byte, 0, 256)
		b.ReportAllocs()
		for b.Loop() {
			var err error
			if enc, err = e.Encrypt(enc[:0], opus); err != nil {
				b.Fatal(err)
			}
			if dec, err = d.Decrypt(dec[:0], enc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gcm-baseline", func(b *testing.B) {
		blk, _ := aes.NewCipher(key)
		g, _ := cipher.NewGCM(blk)
		nonce := make([]byte, 12)
		enc := make([]byte, 0, 256)
		dec := make([]byte, 0, 256)
		b.ReportAllocs()
		for b.Loop() {
			enc = g.Seal(enc[:0], nonce, opus, nil)
			var err error
			if dec, err = g.Open(dec[:0], nonce, enc, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

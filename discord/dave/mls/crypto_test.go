package mls

import (
	"testing"

	"github.com/banterbot/banter/discord/dave/mls/tls"
)

// TestCryptoBasics runs the cs2 entry of mls-implementations crypto-basics.json.
func TestCryptoBasics(t *testing.T) {
	var vs []struct {
		CipherSuite int `json:"cipher_suite"`
		RefHash     struct {
			Label      string
			Out, Value hexb
		} `json:"ref_hash"`
		ExpandWithLabel struct {
			Secret, Context, Out hexb
			Label                string
			Length               int
		} `json:"expand_with_label"`
		DeriveSecret struct {
			Label       string
			Secret, Out hexb
		} `json:"derive_secret"`
		DeriveTreeSecret struct {
			Secret, Out hexb
			Label       string
			Generation  uint32
			Length      int
		} `json:"derive_tree_secret"`
		SignWithLabel struct {
			Priv, Pub, Content, Signature hexb
			Label                         string
		} `json:"sign_with_label"`
		EncryptWithLabel struct {
			Priv, Pub, Context, Plaintext, Ciphertext hexb
			KEMOutput                                 hexb `json:"kem_output"`
			Label                                     string
		} `json:"encrypt_with_label"`
	}
	loadVectors(t, "crypto-basics.json", &vs)
	if len(vs) == 0 {
		t.Fatal("no vectors")
	}
	ran := 0
	for _, v := range vs {
		if v.CipherSuite != 2 {
			continue
		}
		ran++
		eq(t, "ref_hash", RefHash(v.RefHash.Label, v.RefHash.Value), v.RefHash.Out)
		e := v.ExpandWithLabel
		eq(t, "expand_with_label", ExpandWithLabel(e.Secret, e.Label, e.Context, e.Length), e.Out)
		eq(t, "derive_secret", DeriveSecret(v.DeriveSecret.Secret, v.DeriveSecret.Label), v.DeriveSecret.Out)
		d := v.DeriveTreeSecret
		eq(t, "derive_tree_secret", DeriveTreeSecret(d.Secret, d.Label, d.Generation, d.Length), d.Out)

		s := v.SignWithLabel
		if err := VerifyWithLabel(s.Pub, s.Label, s.Content, s.Signature); err != nil {
			t.Errorf("verify vector signature: %v", err)
		}
		priv, err := ParseSignaturePrivateKey(s.Priv)
		if err != nil {
			t.Fatal(err)
		}
		eq(t, "signature public key", SignaturePublicKey(priv), s.Pub)
		sig, err := SignWithLabel(priv, s.Label, s.Content)
		if err != nil {
			t.Fatal(err)
		}
		if err := VerifyWithLabel(s.Pub, s.Label, s.Content, sig); err != nil {
			t.Errorf("verify own signature: %v", err)
		}
		if err := VerifyWithLabel(s.Pub, s.Label+"x", s.Content, sig); err == nil {
			t.Error("signature verified under a different label")
		}

		c := v.EncryptWithLabel
		hp, err := HPKEPrivateKey(c.Priv)
		if err != nil {
			t.Fatal(err)
		}
		eq(t, "hpke public key", hp.PublicKey().Bytes(), c.Pub)
		pt, err := DecryptWithLabel(hp, c.Label, c.Context, HPKECiphertext{KEMOutput: c.KEMOutput, Ciphertext: c.Ciphertext})
		if err != nil {
			t.Fatal(err)
		}
		eq(t, "decrypt_with_label", pt, c.Plaintext)
		ct, err := EncryptWithLabel(c.Pub, c.Label, c.Context, c.Plaintext)
		if err != nil {
			t.Fatal(err)
		}
		pt, err = DecryptWithLabel(hp, c.Label, c.Context, ct)
		if err != nil {
			t.Fatal(err)
		}
		eq(t, "encrypt round trip", pt, c.Plaintext)
		if _, err := DecryptWithLabel(hp, c.Label, append(c.Context, 0), ct); err == nil {
			t.Error("decrypted under a different context")
		}
	}
	if ran == 0 {
		t.Fatal("no cipher suite 2 vector")
	}
}

// TestDeserialization runs deserialization.json: varint headers.
func TestDeserialization(t *testing.T) {
	var vs []struct {
		Header hexb `json:"vlbytes_header"`
		Length int
	}
	loadVectors(t, "deserialization.json", &vs)
	for _, v := range vs {
		r := tls.NewReader(v.Header)
		if n := r.Varint(); r.Done() != nil || n != v.Length {
			t.Errorf("%x: got %d (%v), want %d", v.Header, n, r.Err(), v.Length)
		}
		eq(t, "varint encode", tls.AppendVarint(nil, v.Length), v.Header)
	}
}

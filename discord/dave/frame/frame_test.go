package frame

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/banterbot/banter/discord/dave/mls"
)

type hexb []byte

func (h *hexb) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := hex.DecodeString(s)
	*h = v
	return err
}

type kat struct {
	Base    hexb `json:"ratchet_base_secret"`
	Ratchet []struct {
		Generation uint32
		Key        hexb
	}
	Opus   hexb `json:"opus_plaintext"`
	Frames []struct {
		Nonce      uint32 `json:"truncated_nonce"`
		Generation uint32
		Key        hexb
		Frame      hexb
	}
	ULEB []struct {
		Value uint64
		Hex   hexb
	} `json:"uleb128"`
	Sender struct {
		Exporter hexb   `json:"exporter_secret"`
		UserID   string `json:"user_id"`
		Base     hexb   `json:"sender_base_secret"`
	} `json:"sender_base_secret_example"`
}

func loadKAT(t testing.TB) *kat {
	b, err := os.ReadFile("testdata/dave-frame-kat.json")
	if err != nil {
		t.Fatal(err)
	}
	k := new(kat)
	if err := json.Unmarshal(b, k); err != nil {
		t.Fatal(err)
	}
	return k
}

// fakeClock is a settable clock.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// TestFrameKAT checks the ratchet keys, every KAT frame (encryptor output
// byte for byte, decryptor result), ULEB128 and the sender base secret.
func TestFrameKAT(t *testing.T) {
	k := loadKAT(t)
	r := NewRatchet(k.Base)
	for _, g := range k.Ratchet {
		key, err := r.Key(g.Generation)
		if err != nil || !bytes.Equal(key, g.Key) {
			t.Errorf("ratchet gen %d: %x %v, want %x", g.Generation, key, err, g.Key)
		}
	}
	for _, u := range k.ULEB {
		if got := AppendULEB128(nil, u.Value); !bytes.Equal(got, u.Hex) {
			t.Errorf("uleb %d: %x want %x", u.Value, got, u.Hex)
		}
		v, n, err := ReadULEB128(u.Hex)
		if err != nil || v != u.Value || n != len(u.Hex) {
			t.Errorf("read uleb %x: %d %d %v", u.Hex, v, n, err)
		}
	}
	uid, _ := strconv.ParseUint(k.Sender.UserID, 10, 64)
	es := &mls.EpochSecrets{Exporter: k.Sender.Exporter}
	if got := es.Export(ExporterLabel, SenderContext(uid), KeySize); !bytes.Equal(got, k.Sender.Base) {
		t.Errorf("sender base secret %x want %x", got, k.Sender.Base)
	}

	clock := &fakeClock{t: time.Unix(1000, 0)}
	d := NewDecryptor(clock.now)
	d.TransitionToRatchet(NewRatchet(k.Base))
	for _, f := range k.Frames {
		t.Run(strconv.Itoa(int(f.Nonce)), func(t *testing.T) {
			e := NewEncryptor()
			e.SetRatchet(NewRatchet(k.Base))
			e.nonce = f.Nonce - 1
			got, err := e.Encrypt(nil, k.Opus)
			if err != nil || !bytes.Equal(got, f.Frame) {
				t.Fatalf("encrypt: %x %v\n want %x", got, err, f.Frame)
			}
			if f.Generation > 0 {
				clock.t = clock.t.Add(30 * time.Hour) // generation 1 needs an old ratchet
			}
			pt, err := d.Decrypt(nil, f.Frame)
			if err != nil || !bytes.Equal(pt, k.Opus) {
				t.Fatalf("decrypt: %x %v", pt, err)
			}
			bad := bytes.Clone(f.Frame)
			bad[len(k.Opus)] ^= 1 // tag bit
			if _, err := NewDecryptorWith(k.Base, clock).Decrypt(nil, bad); err == nil {
				t.Fatal("flipped tag accepted")
			}
		})
	}
}

func NewDecryptorWith(base []byte, c *fakeClock) *Decryptor {
	d := NewDecryptor(c.now)
	d.TransitionToRatchet(NewRatchet(base))
	return d
}

// TestDecryptRules covers silence and passthrough, replay, out-of-order
// delivery, and key retention across a transition.
func TestDecryptRules(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	base1, base2 := bytes.Repeat([]byte{1}, 16), bytes.Repeat([]byte{2}, 16)
	e := NewEncryptor()
	if _, err := e.Encrypt(nil, []byte{1, 2, 3}); err == nil {
		t.Fatal("encrypted without a key")
	}
	e.SetRatchet(NewRatchet(base1))
	d := NewDecryptorWith(base1, clock)
	opus := []byte("opus frame payload")
	f1, _ := e.Encrypt(nil, opus)
	f2, _ := e.Encrypt(nil, opus)
	f3, _ := e.Encrypt(nil, opus)

	tests := []struct {
		name    string
		frame   []byte
		wantErr bool
		want    []byte
	}{
		{"silence passes", []byte{0xF8, 0xFF, 0xFE}, false, []byte{0xF8, 0xFF, 0xFE}},
		{"plain refused", []byte("plain"), true, nil},
		{"frame 1", f1, false, opus},
		{"frame 3 skips 2", f3, false, opus},
		{"frame 2 late", f2, false, opus},
		{"frame 2 replay", f2, true, nil},
		{"frame 3 replay", f3, true, nil},
	}
	for _, c := range tests {
		got, err := d.Decrypt(nil, c.frame)
		if (err != nil) != c.wantErr || (!c.wantErr && !bytes.Equal(got, c.want)) {
			t.Errorf("%s: %q %v", c.name, got, err)
		}
	}
	// Transition: the old key keeps working for CryptorExpiry.
	d.TransitionToRatchet(NewRatchet(base2))
	f4, _ := e.Encrypt(nil, opus)
	e.SetRatchet(NewRatchet(base2))
	g1, _ := e.Encrypt(nil, opus)
	if _, err := d.Decrypt(nil, g1); err != nil {
		t.Errorf("new key: %v", err)
	}
	if _, err := d.Decrypt(nil, f4); err != nil {
		t.Errorf("old key within expiry: %v", err)
	}
	clock.t = clock.t.Add(CryptorExpiry + time.Second)
	f5 := mustEncrypt(t, NewRatchet(base1), 10, opus)
	if _, err := d.Decrypt(nil, f5); err == nil {
		t.Error("old key after expiry accepted")
	}
	// Passthrough window.
	d.SetPassthrough(false, 5*time.Second)
	if got, err := d.Decrypt(nil, []byte("plain")); err != nil || string(got) != "plain" {
		t.Errorf("passthrough: %q %v", got, err)
	}
	clock.t = clock.t.Add(6 * time.Second)
	if _, err := d.Decrypt(nil, []byte("plain")); err == nil {
		t.Error("passthrough after expiry")
	}
	// Passthrough encryptor, then back to the same key and nonce sequence.
	e.SetPassthrough(true)
	if got, _ := e.Encrypt(nil, opus); !bytes.Equal(got, opus) {
		t.Error("passthrough encryptor changed the frame")
	}
	e.SetPassthrough(false)
	d2 := NewDecryptorWith(base2, clock)
	if _, err := d2.Decrypt(nil, g1); err != nil {
		t.Fatal(err)
	}
	g2, _ := e.Encrypt(nil, opus)
	if pt, err := d2.Decrypt(nil, g2); err != nil || !bytes.Equal(pt, opus) {
		t.Errorf("after passthrough: %q %v", pt, err)
	}
}

func mustEncrypt(t *testing.T, r *Ratchet, nonce uint32, opus []byte) []byte {
	e := NewEncryptor()
	e.SetRatchet(r)
	e.nonce = nonce - 1
	f, err := e.Encrypt(nil, opus)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestZeroAlloc locks in allocation-free encrypt and decrypt per frame.
func TestZeroAlloc(t *testing.T) {
	base := bytes.Repeat([]byte{7}, 16)
	e := NewEncryptor()
	e.SetRatchet(NewRatchet(base))
	d := NewDecryptor(nil)
	d.TransitionToRatchet(NewRatchet(base))
	opus := make([]byte, 160)
	enc := make([]byte, 0, 256)
	dec := make([]byte, 0, 256)
	var err error
	n := testing.AllocsPerRun(1000, func() {
		enc, err = e.Encrypt(enc[:0], opus)
		if err != nil {
			t.Fatal(err)
		}
		dec, err = d.Decrypt(dec[:0], enc)
		if err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Errorf("%v allocations per frame", n)
	}
}

// FuzzFrame: parsing and decrypting arbitrary frames never panics, and a
// parsed frame's fields stay within the input.
func FuzzFrame(f *testing.F) {
	k := loadKAT(f)
	for _, fr := range k.Frames {
		f.Add([]byte(fr.Frame))
	}
	f.Add([]byte{0xF8, 0xFF, 0xFE})
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 2, 3, 0x0f, 0xFA, 0xFA})
	f.Fuzz(func(t *testing.T, b []byte) {
		var fr Frame
		if err := fr.Unmarshal(b); err == nil {
			if len(fr.Body)+len(fr.Tag) > len(b) || len(fr.Tag) != TagSize {
				t.Fatal("frame fields out of bounds")
			}
			for _, r := range fr.Ranges {
				if r.Offset+r.Size > len(fr.Body) {
					t.Fatal("range out of bounds")
				}
			}
		}
		d := NewDecryptor(nil)
		d.TransitionToRatchet(NewRatchet(k.Base))
		_, _ = d.Decrypt(nil, b)
	})
}

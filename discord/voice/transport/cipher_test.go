package transport

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/banterbot/banter/discord/voice/rtp"
)

type katVector struct {
	Name      string `json:"name"`
	Mode      string `json:"mode"`
	Key       string `json:"key"`
	Header    string `json:"header"`
	Plaintext string `json:"plaintext"`
	Frame     string `json:"frame"`
	Counter   uint32 `json:"counter"`
	Packet    string `json:"packet"`
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// loadKAT reads testdata/kat.json, produced by testdata/gen_kat.py with an
// independent implementation (pyca/cryptography + a hand-written HChaCha20
// checked against the XChaCha draft's vector) from the documented layouts.
func loadKAT(t testing.TB) []katVector {
	t.Helper()
	raw, err := os.ReadFile("testdata/kat.json")
	if err != nil {
		t.Fatal(err)
	}
	var v []katVector
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestKnownAnswers(t *testing.T) {
	for _, v := range loadKAT(t) {
		t.Run(v.Mode+"/"+v.Name, func(t *testing.T) {
			mode := ParseMode(v.Mode)
			c, err := NewCipher(mode, unhex(t, v.Key))
			if err != nil {
				t.Fatal(err)
			}
			want := unhex(t, v.Packet)
			got := c.Seal(nil, unhex(t, v.Header), unhex(t, v.Plaintext), v.Counter)
			if !bytes.Equal(got, want) {
				t.Errorf("Seal:\n got %x\nwant %x", got, want)
			}
			var h rtp.Header
			frame, err := c.Open(make([]byte, 0, 1500), &h, want)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if hex.EncodeToString(frame) != v.Frame {
				t.Errorf("Open frame = %x, want %s", frame, v.Frame)
			}
		})
	}
}

func TestOpenRejects(t *testing.T) {
	v := loadKAT(t)[1] // AES-GCM with CSRC, extension and padding
	key := unhex(t, v.Key)
	pkt := unhex(t, v.Packet)
	c, err := NewCipher(ParseMode(v.Mode), key)
	if err != nil {
		t.Fatal(err)
	}
	flip := func(i int) []byte {
		p := bytes.Clone(pkt)
		p[i] ^= 1
		return p
	}
	otherKey := bytes.Clone(key)
	otherKey[0] ^= 0xff
	wrong, _ := NewCipher(ParseMode(v.Mode), otherKey)
	tests := []struct {
		name string
		c    *Cipher
		pkt  []byte
		want error
	}{
		{"header-tampered (AAD)", c, flip(3), ErrDecrypt},
		{"csrc-tampered (AAD)", c, flip(13), ErrDecrypt},
		{"ext-preamble-tampered (AAD)", c, flip(19), ErrDecrypt},
		{"ciphertext-tampered", c, flip(21), ErrDecrypt},
		{"tag-tampered", c, flip(len(pkt) - 6), ErrDecrypt},
		{"counter-tampered", c, flip(len(pkt) - 1), ErrDecrypt},
		{"wrong-key", wrong, pkt, ErrDecrypt},
		{"truncated-below-overhead", c, pkt[:20+Overhead-1], ErrMalformed},
		{"not-rtp", c, []byte{0x00, 0x01, 0x02}, ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h rtp.Header
			_, err := tt.c.Open(nil, &h, tt.pkt)
			if !errors.Is(err, tt.want) {
				t.Errorf("Open err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestOpenBadPlaintextLayout(t *testing.T) {
	key := make([]byte, KeySize)
	for _, mode := range []Mode{ModeAES256GCM, ModeXChaCha20Poly1305} {
		c, err := NewCipher(mode, key)
		if err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name   string
			header rtp.Header
			plain  []byte
		}{
			{"extension-longer-than-payload", rtp.Header{Extension: true, ExtensionProfile: 0xBEDE, ExtensionLength: 4, PayloadType: 120}, []byte{1, 2, 3}},
			{"padding-zero", rtp.Header{Padding: true, PayloadType: 120}, []byte{1, 2, 0}},
			{"padding-too-long", rtp.Header{Padding: true, PayloadType: 120}, []byte{1, 2, 9}},
			{"padding-empty", rtp.Header{Padding: true, PayloadType: 120}, nil},
		}
		for _, tt := range tests {
			t.Run(mode.String()+"/"+tt.name, func(t *testing.T) {
				hdr, err := tt.header.AppendMarshal(nil)
				if err != nil {
					t.Fatal(err)
				}
				pkt := c.Seal(nil, hdr, tt.plain, 7)
				var h rtp.Header
				if _, err := c.Open(nil, &h, pkt); !errors.Is(err, ErrMalformed) {
					t.Errorf("Open err = %v, want ErrMalformed", err)
				}
			})
		}
	}
}

func TestNewCipherErrors(t *testing.T) {
	if _, err := NewCipher(ModeAES256GCM, make([]byte, 16)); err == nil {
		t.Error("16-byte key accepted")
	}
	if _, err := NewCipher(ModeUnknown, make([]byte, 32)); err == nil {
		t.Error("unknown mode accepted")
	}
}

func TestChooseMode(t *testing.T) {
	tests := []struct {
		offered []string
		want    Mode
		wantErr bool
	}{
		{[]string{"aead_aes256_gcm_rtpsize", "aead_xchacha20_poly1305_rtpsize", "xsalsa20_poly1305"}, ModeAES256GCM, false},
		{[]string{"xsalsa20_poly1305", "aead_xchacha20_poly1305_rtpsize", "aead_aes256_gcm_rtpsize"}, ModeAES256GCM, false},
		{[]string{"aead_xchacha20_poly1305_rtpsize", "xsalsa20_poly1305_lite"}, ModeXChaCha20Poly1305, false},
		{[]string{"xsalsa20_poly1305"}, ModeUnknown, true},
		{nil, ModeUnknown, true},
	}
	for _, tt := range tests {
		got, err := ChooseMode(tt.offered)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("ChooseMode(%q) = %v, %v; want %v (err %t)", tt.offered, got, err, tt.want, tt.wantErr)
		}
	}
	for _, m := range []Mode{ModeAES256GCM, ModeXChaCha20Poly1305} {
		if ParseMode(m.String()) != m {
			t.Errorf("ParseMode(%q) != %v", m.String(), m)
		}
	}
	if s := ModeUnknown.String(); s != "Mode(0)" {
		t.Errorf("ModeUnknown.String() = %q", s)
	}
}

func TestOpenZeroAllocs(t *testing.T) {
	for _, v := range loadKAT(t) {
		c, err := NewCipher(ParseMode(v.Mode), unhex(t, v.Key))
		if err != nil {
			t.Fatal(err)
		}
		pkt := unhex(t, v.Packet)
		dst := make([]byte, 0, 1500)
		var h rtp.Header
		if n := testing.AllocsPerRun(1000, func() {
			if _, err := c.Open(dst, &h, pkt); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s/%s: Open allocates %v per packet", v.Mode, v.Name, n)
		}
		out := make([]byte, 0, 1500)
		hdr, pl := unhex(t, v.Header), unhex(t, v.Plaintext)
		if n := testing.AllocsPerRun(1000, func() { out = c.Seal(out[:0], hdr, pl, 5) }); n != 0 {
			t.Errorf("%s/%s: Seal allocates %v per packet", v.Mode, v.Name, n)
		}
	}
}

// FuzzOpen feeds arbitrary datagrams to the receive path: it must never panic
// and must classify every failure as malformed or undecryptable; anything that
// does open must re-seal to the same bytes.
func FuzzOpen(f *testing.F) {
	for _, v := range loadKAT(f) {
		f.Add(uint8(ParseMode(v.Mode)), unhex(f, v.Packet))
	}
	f.Add(uint8(1), []byte{0x90, 0x78, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0xbe, 0xde, 0xff, 0xff})
	key := make([]byte, KeySize)
	for i := range key {
		key[i] = byte(0x40 + i)
	}
	f.Fuzz(func(t *testing.T, m uint8, pkt []byte) {
		mode := ModeAES256GCM
		if m%2 == 0 {
			mode = ModeXChaCha20Poly1305
		}
		c, err := NewCipher(mode, key)
		if err != nil {
			t.Fatal(err)
		}
		var h rtp.Header
		frame, err := c.Open(make([]byte, 0, len(pkt)), &h, pkt)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrDecrypt) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		if len(frame) > len(pkt) {
			t.Fatalf("frame %d > packet %d", len(frame), len(pkt))
		}
	})
}

// naiveOpen is the allocating baseline: fresh header, fresh AEAD and fresh
// output buffer per packet, as a straightforward port would do it.
func naiveOpen(mode Mode, key, pkt []byte) ([]byte, error) {
	c, err := NewCipher(mode, key)
	if err != nil {
		return nil, err
	}
	var h rtp.Header
	return c.Open(nil, &h, pkt)
}

func BenchmarkOpen(b *testing.B) {
	key := make([]byte, KeySize)
	frame := bytes.Repeat([]byte{0xfc}, 120) // a typical 20 ms Opus voice frame
	hdr, _ := (&rtp.Header{PayloadType: 120, SequenceNumber: 1, Timestamp: 960, SSRC: 42}).AppendMarshal(nil)
	for _, mode := range []Mode{ModeAES256GCM, ModeXChaCha20Poly1305} {
		c, _ := NewCipher(mode, key)
		pkt := c.Seal(nil, hdr, frame, 1)
		b.Run(mode.String()+"/reused", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(pkt)))
			dst := make([]byte, 0, 1500)
			var h rtp.Header
			for b.Loop() {
				if _, err := c.Open(dst, &h, pkt); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(mode.String()+"/naive", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(pkt)))
			for b.Loop() {
				if _, err := naiveOpen(mode, key, pkt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkSeal(b *testing.B) {
	key := make([]byte, KeySize)
	frame := bytes.Repeat([]byte{0xfc}, 120)
	hdr, _ := (&rtp.Header{PayloadType: 120, SequenceNumber: 1, Timestamp: 960, SSRC: 42}).AppendMarshal(nil)
	for _, mode := range []Mode{ModeAES256GCM, ModeXChaCha20Poly1305} {
		c, _ := NewCipher(mode, key)
		b.Run(mode.String(), func(b *testing.B) {
			b.ReportAllocs()
			out := make([]byte, 0, 1500)
			var n uint32
			for b.Loop() {
				n++
				out = c.Seal(out[:0], hdr, frame, n)
			}
		})
	}
}

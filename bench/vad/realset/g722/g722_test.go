package g722

import (
	"encoding/binary"
	"hash/fnv"
	"slices"
	"testing"
)

// TestMatchesSpanDSP decodes a pseudo-random code stream and compares the
// output with what spandsp's g722_decode (libspandsp2 0.0.6, Debian
// bookworm, 64 kbit/s, no options) gave for the same bytes: bit-exact.
// Bit 3 is set in every byte so the output stays under full scale (spandsp
// wraps an overflowing sample where Decode saturates it).
func TestMatchesSpanDSP(t *testing.T) {
	in := make([]byte, 4096)
	x := uint32(1)
	for i := range in {
		x = x*1103515245 + 12345
		in[i] = byte(x>>16) | 0x08
	}
	out := NewDecoder().Decode(nil, in)
	if len(out) != 8192 {
		t.Fatalf("%d samples, want 8192", len(out))
	}
	h := fnv.New64a()
	for _, v := range out {
		h.Write(binary.LittleEndian.AppendUint16(nil, uint16(v)))
	}
	if got, want := h.Sum64(), uint64(0xb878c1432a22d83a); got != want {
		t.Errorf("FNV-1a of the output %016x, want %016x (spandsp)", got, want)
	}
	if got, want := out[1000:1008], []int16{5809, 903, 14695, 5450, -2866, -8142, 2211, 3747}; !slices.Equal(got, want) {
		t.Errorf("samples 1000-1007 %v, want %v", got, want)
	}
}

// TestStreaming: decoding in pieces gives what one call gives.
func TestStreaming(t *testing.T) {
	in := make([]byte, 1000)
	for i := range in {
		in[i] = byte(i*7 + i/13)
	}
	whole := NewDecoder().Decode(nil, in)
	d := NewDecoder()
	var parts []int16
	for i := 0; i < len(in); i += 37 {
		parts = d.Decode(parts, in[i:min(len(in), i+37)])
	}
	if !slices.Equal(whole, parts) {
		t.Error("pieces differ from one call")
	}
}

// TestSilence: the codes of silence (0xff: both sub-bands' smallest step)
// decode to near zero.
func TestSilence(t *testing.T) {
	in := make([]byte, 800)
	for i := range in {
		in[i] = 0xff
	}
	for i, v := range NewDecoder().Decode(nil, in) {
		if v > 64 || v < -64 {
			t.Fatalf("sample %d = %d, want near 0", i, v)
		}
	}
}

package wav

import (
	"encoding/binary"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/banterbot/banter/audio/pcm"
)

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name    string
		f       pcm.Format
		samples []int16
	}{
		{"mono 16k", pcm.Speech16k(), []int16{0, 1, -1, 32767, -32768, 1234}},
		{"stereo 48k", pcm.Discord(), []int16{1, 2, 3, 4, -5, -6}},
		{"empty", pcm.Mono24k(), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := Encode(tt.f, tt.samples)
			if len(b) != EncodedLen(len(tt.samples)) {
				t.Errorf("len %d, want %d", len(b), EncodedLen(len(tt.samples)))
			}
			got, f, err := Decode(nil, b)
			if err != nil {
				t.Fatal(err)
			}
			if f != tt.f || !slices.Equal(got, tt.samples) {
				t.Errorf("got %v %v, want %v %v", f, got, tt.f, tt.samples)
			}
		})
	}
}

// TestFixture decodes a fixture written by another tool chain (espeak-ng +
// sox, 48 kHz stereo) and checks the header fields.
func TestFixture(t *testing.T) {
	b, err := os.ReadFile("../testdata/uh-huh-48k.wav")
	if err != nil {
		t.Fatal(err)
	}
	s, f, err := Decode(nil, b)
	if err != nil {
		t.Fatal(err)
	}
	if f != pcm.Discord() {
		t.Errorf("format %v", f)
	}
	if d := f.Duration(len(s)); d < 1190e6 || d > 1210e6 {
		t.Errorf("duration %v, want ~1.198 s", d)
	}
	if p := pcm.Peak(s); p < 1000 {
		t.Errorf("peak %d: no speech decoded", p)
	}
}

// build assembles a RIFF file from chunks, each given as id and body.
func build(riffSize uint32, chunks ...any) []byte {
	b := []byte("RIFF\x00\x00\x00\x00WAVE")
	binary.LittleEndian.PutUint32(b[4:], riffSize)
	for i := 0; i < len(chunks); i += 3 {
		id, size, body := chunks[i].(string), chunks[i+1].(uint32), chunks[i+2].([]byte)
		b = append(b, id...)
		b = binary.LittleEndian.AppendUint32(b, size)
		b = append(b, body...)
	}
	return b
}

func fmtChunk(tag, ch uint16, rate uint32, bits uint16) []byte {
	b := binary.LittleEndian.AppendUint16(nil, tag)
	b = binary.LittleEndian.AppendUint16(b, ch)
	b = binary.LittleEndian.AppendUint32(b, rate)
	b = binary.LittleEndian.AppendUint32(b, rate*uint32(ch)*uint32(bits)/8)
	b = binary.LittleEndian.AppendUint16(b, ch*bits/8)
	return binary.LittleEndian.AppendUint16(b, bits)
}

func TestParse(t *testing.T) {
	pcm16 := fmtChunk(1, 1, 24000, 16)
	ext := append(fmtChunk(0xFFFE, 2, 48000, 16), 22, 0, 16, 0, 3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0xaa, 0, 0x38, 0x9b, 0x71)
	data := []byte{1, 0, 2, 0, 3, 0, 4, 0}
	tests := []struct {
		name    string
		b       []byte
		want    []int16
		wantF   pcm.Format
		wantErr error
	}{
		{"plain", build(0, "fmt ", uint32(16), pcm16, "data", uint32(8), data), []int16{1, 2, 3, 4}, pcm.Mono24k(), nil},
		{"streamed sizes 0xFFFFFFFF", build(0xFFFFFFFF, "fmt ", uint32(16), pcm16, "data", uint32(0xFFFFFFFF), data), []int16{1, 2, 3, 4}, pcm.Mono24k(), nil},
		{"streamed size 0", build(0, "fmt ", uint32(16), pcm16, "data", uint32(0), data), []int16{1, 2, 3, 4}, pcm.Mono24k(), nil},
		{"odd LIST chunk is padded and skipped", build(0, "fmt ", uint32(16), pcm16, "LIST", uint32(3), []byte{9, 9, 9, 0}, "data", uint32(4), data[:4]), []int16{1, 2}, pcm.Mono24k(), nil},
		{"extensible PCM", build(0, "fmt ", uint32(40), ext, "data", uint32(8), data), []int16{1, 2, 3, 4}, pcm.Discord(), nil},
		{"truncated data keeps whole frames", build(0, "fmt ", uint32(16), fmtChunk(1, 2, 48000, 16), "data", uint32(100), data[:7]), []int16{1, 2}, pcm.Discord(), nil},
		{"not RIFF", []byte("RIFX\x00\x00\x00\x00WAVE"), nil, pcm.Format{}, errNotWAV},
		{"float samples", build(0, "fmt ", uint32(16), fmtChunk(3, 1, 24000, 32), "data", uint32(8), data), nil, pcm.Format{}, errUnsupported},
		{"8-bit", build(0, "fmt ", uint32(16), fmtChunk(1, 1, 24000, 8), "data", uint32(8), data), nil, pcm.Format{}, errUnsupported},
		{"6 channels", build(0, "fmt ", uint32(16), fmtChunk(1, 6, 48000, 16), "data", uint32(8), data), nil, pcm.Format{}, errUnsupported},
		{"data before fmt", build(0, "data", uint32(8), data, "fmt ", uint32(16), pcm16), nil, pcm.Format{}, errNotWAV},
		{"no data", build(0, "fmt ", uint32(16), pcm16), nil, pcm.Format{}, errTruncated},
		{"chunk overruns", build(0, "fmt ", uint32(16), pcm16, "LIST", uint32(1000), []byte{1}), nil, pcm.Format{}, errTruncated},
		{"short fmt", build(0, "fmt ", uint32(8), pcm16[:8], "data", uint32(8), data), nil, pcm.Format{}, errTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, f, err := Decode(nil, tt.b)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err %v, want %v", err, tt.wantErr)
			}
			if err == nil && (f != tt.wantF || !slices.Equal(got, tt.want)) {
				t.Errorf("got %v %v, want %v %v", f, got, tt.wantF, tt.want)
			}
		})
	}
}

func TestDecodeAppendsWithoutAllocating(t *testing.T) {
	b := Encode(pcm.Speech16k(), make([]int16, 320))
	dst := make([]int16, 0, 320)
	if n := testing.AllocsPerRun(100, func() { _, _, _ = Decode(dst[:0], b) }); n != 0 {
		t.Errorf("%v allocs, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = ParseHeader(b) }); n != 0 {
		t.Errorf("ParseHeader: %v allocs, want 0", n)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(Encode(pcm.Speech16k(), []int16{1, -2, 3}))
	f.Add(Encode(pcm.Discord(), []int16{1, -2, 3, 4}))
	f.Add(build(0xFFFFFFFF, "fmt ", uint32(16), fmtChunk(1, 1, 24000, 16), "LIST", uint32(3), []byte{1, 2, 3, 0}, "data", uint32(0xFFFFFFFF), []byte{1, 2, 3}))
	f.Add([]byte("RIFF\xff\xff\xff\xffWAVEfmt \xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, fm, err := Decode(nil, b)
		if err != nil {
			return
		}
		if fm.Validate() != nil {
			t.Fatalf("accepted invalid format %v", fm)
		}
		if len(s)%fm.Channels != 0 {
			t.Fatalf("%d samples not whole frames of %d channels", len(s), fm.Channels)
		}
		// Whatever parses re-encodes to a file that parses to the same thing.
		s2, fm2, err := Decode(nil, Encode(fm, s))
		if err != nil || fm2 != fm || !slices.Equal(s, s2) {
			t.Fatalf("re-encode mismatch: %v", err)
		}
	})
}

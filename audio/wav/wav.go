// Package wav reads and writes RIFF/WAVE files of 16-bit PCM in memory:
// Encode builds the upload body for speech-to-text, Decode reads fixtures
// and WAV responses from text-to-speech. Input to Decode is untrusted; it
// is fuzzed (FuzzDecode).
//
// Layout (http://soundfile.sapp.org/doc/WaveFormat/, Microsoft RIFF spec):
//
//	offset size  field
//	0      4     "RIFF"
//	4      4     riff size = file size - 8 (LE)
//	8      4     "WAVE"
//	12     ...   chunks: 4-byte id, 4-byte LE size, data, pad byte if size is odd
//	             "fmt " (16, 18 or 40 bytes):
//	               0 format tag (1 = PCM, 0xFFFE = extensible)   2 channels
//	               4 sample rate   8 byte rate   12 block align   14 bits/sample
//	               extensible: 24 sub-format GUID, first 2 bytes = format tag
//	             "data": interleaved little-endian samples
//
// Streamed WAVs (as TTS services send them) often carry 0 or 0xFFFFFFFF as
// the RIFF and data sizes; Decode then reads the data to the end of input.
package wav

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/banterbot/banter/audio/pcm"
)

// HeaderSize is the size of the canonical header Encode writes.
const HeaderSize = 44

// maxSamples bounds what Decode accepts (10 minutes of 48 kHz stereo), so a
// forged size cannot make it allocate unboundedly.
const maxSamples = 10 * 60 * 48000 * 2

var (
	errNotWAV      = errors.New("not a RIFF/WAVE file")
	errUnsupported = errors.New("unsupported encoding")
	errTruncated   = errors.New("truncated")
)

// Header describes a parsed WAV file.
type Header struct {
	Format     pcm.Format
	DataOffset int // byte offset of the first sample
	DataLen    int // bytes of sample data (whole frames, clamped to the input)
}

// Samples returns the number of int16 values in the data chunk.
func (h Header) Samples() int { return h.DataLen / 2 }

// ParseHeader validates the RIFF structure of b and locates the data chunk.
// Only 16-bit integer PCM (plain or extensible) with 1 or 2 channels is
// accepted. It does not allocate on success.
func ParseHeader(b []byte) (Header, error) {
	var h Header
	if len(b) < 12 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return h, fmt.Errorf("wav: parse: %w", errNotWAV)
	}
	haveFmt := false
	off := 12
	for {
		if off+8 > len(b) {
			if !haveFmt {
				return h, fmt.Errorf("wav: parse: %w: no fmt chunk", errTruncated)
			}
			return h, fmt.Errorf("wav: parse: %w: no data chunk", errTruncated)
		}
		id := [4]byte(b[off : off+4])
		size := int64(binary.LittleEndian.Uint32(b[off+4 : off+8]))
		body := off + 8
		switch string(id[:]) {
		case "fmt ":
			if size < 16 || int64(body)+size > int64(len(b)) {
				return h, fmt.Errorf("wav: parse: %w: fmt chunk of %d bytes", errTruncated, size)
			}
			f, err := parseFmt(b[body : body+int(size)])
			if err != nil {
				return h, err
			}
			h.Format, haveFmt = f, true
		case "data":
			if !haveFmt {
				return h, fmt.Errorf("wav: parse: %w: data before fmt", errNotWAV)
			}
			avail := int64(len(b) - body)
			if size == 0 || size > avail { // streamed or truncated: read to the end
				size = avail
			}
			frame := int64(2 * h.Format.Channels)
			size -= size % frame
			if size/2 > maxSamples {
				return h, fmt.Errorf("wav: parse: %w: %d samples exceed %d", errUnsupported, size/2, maxSamples)
			}
			h.DataOffset, h.DataLen = body, int(size)
			return h, nil
		}
		next := int64(body) + size + size&1
		if next > int64(len(b)) {
			return h, fmt.Errorf("wav: parse: %w: chunk %q of %d bytes", errTruncated, string(id[:]), size)
		}
		off = int(next)
	}
}

func parseFmt(c []byte) (pcm.Format, error) {
	tag := binary.LittleEndian.Uint16(c[0:2])
	ch := int(binary.LittleEndian.Uint16(c[2:4]))
	rate := int(binary.LittleEndian.Uint32(c[4:8]))
	align := int(binary.LittleEndian.Uint16(c[12:14]))
	bits := int(binary.LittleEndian.Uint16(c[14:16]))
	if tag == 0xFFFE {
		if len(c) < 26 {
			return pcm.Format{}, fmt.Errorf("wav: parse: %w: extensible fmt of %d bytes", errTruncated, len(c))
		}
		tag = binary.LittleEndian.Uint16(c[24:26])
	}
	if tag != 1 {
		return pcm.Format{}, fmt.Errorf("wav: parse: %w: format tag %#x (want PCM)", errUnsupported, tag)
	}
	if bits != 16 {
		return pcm.Format{}, fmt.Errorf("wav: parse: %w: %d bits per sample (want 16)", errUnsupported, bits)
	}
	f := pcm.Format{Rate: rate, Channels: ch}
	if err := f.Validate(); err != nil {
		return pcm.Format{}, fmt.Errorf("wav: parse: %w: %w", errUnsupported, err)
	}
	if align != 2*ch {
		return pcm.Format{}, fmt.Errorf("wav: parse: %w: block align %d for %d channels", errUnsupported, align, ch)
	}
	return f, nil
}

// Decode parses b and appends its samples to dst, returning the extended
// slice and the format. dst may be nil; passing a reused slice with enough
// capacity avoids allocation.
func Decode(dst []int16, b []byte) ([]int16, pcm.Format, error) {
	h, err := ParseHeader(b)
	if err != nil {
		return dst, pcm.Format{}, err
	}
	data := b[h.DataOffset : h.DataOffset+h.DataLen]
	dst = grow(dst, len(data)/2)
	out := dst[len(dst) : len(dst)+len(data)/2]
	for i := range out {
		out[i] = int16(binary.LittleEndian.Uint16(data[2*i:]))
	}
	return dst[:len(dst)+len(out)], h.Format, nil
}

func grow(s []int16, n int) []int16 {
	if cap(s)-len(s) >= n {
		return s
	}
	g := make([]int16, len(s), len(s)+n)
	copy(g, s)
	return g
}

// EncodedLen returns the size of the WAV Append writes for n int16 values.
func EncodedLen(n int) int { return HeaderSize + 2*n }

// Append appends a canonical 44-byte-header WAV of samples (interleaved f)
// to dst and returns the extended slice. The samples are copied.
func Append(dst []byte, f pcm.Format, samples []int16) []byte {
	data := 2 * len(samples)
	start := len(dst)
	if cap(dst)-start < HeaderSize+data {
		g := make([]byte, start, start+HeaderSize+data)
		copy(g, dst)
		dst = g
	}
	dst = dst[:start+HeaderSize+data]
	h := dst[start:]
	copy(h[0:], "RIFF")
	binary.LittleEndian.PutUint32(h[4:], uint32(36+data))
	copy(h[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(h[16:], 16)
	binary.LittleEndian.PutUint16(h[20:], 1)
	binary.LittleEndian.PutUint16(h[22:], uint16(f.Channels))
	binary.LittleEndian.PutUint32(h[24:], uint32(f.Rate))
	binary.LittleEndian.PutUint32(h[28:], uint32(f.Rate*f.Channels*2))
	binary.LittleEndian.PutUint16(h[32:], uint16(f.Channels*2))
	binary.LittleEndian.PutUint16(h[34:], 16)
	copy(h[36:], "data")
	binary.LittleEndian.PutUint32(h[40:], uint32(data))
	d := h[HeaderSize:]
	for i, v := range samples {
		binary.LittleEndian.PutUint16(d[2*i:], uint16(v))
	}
	return dst
}

// Encode returns a new WAV of samples in format f.
func Encode(f pcm.Format, samples []int16) []byte { return Append(nil, f, samples) }

package pcm

import (
	"encoding/binary"
	"slices"
)

// Byte order: every PCM byte stream banter meets (WAV data, OpenAI TTS
// "pcm" responses, Realtime input_audio_buffer.append and response audio
// deltas after base64) is signed 16-bit little-endian.

// AppendBytes appends s as little-endian bytes to dst and returns the
// extended slice.
func AppendBytes(dst []byte, s []int16) []byte {
	n := len(dst)
	dst = slices.Grow(dst, 2*len(s))[:n+2*len(s)]
	for i, v := range s {
		binary.LittleEndian.PutUint16(dst[n+2*i:], uint16(v))
	}
	return dst
}

// FromBytes decodes little-endian samples from b into dst and returns the
// number written: min(len(b)/2, len(dst)). A trailing odd byte is ignored;
// streams split at odd offsets should go through a ByteReader.
func FromBytes(dst []int16, b []byte) int {
	n := min(len(b)/2, len(dst))
	for i := range n {
		dst[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return n
}

// ByteDecoder turns a little-endian byte stream that may be split at any
// offset (HTTP chunks, websocket deltas) into samples, carrying an odd
// trailing byte to the next call. The zero value is ready to use.
type ByteDecoder struct {
	carry    byte
	hasCarry bool
}

// Decode appends the whole samples in b (after any carried byte) to dst
// and returns the extended slice; an odd last byte is kept for the next
// call. It allocates only when dst lacks capacity.
func (d *ByteDecoder) Decode(dst []int16, b []byte) []int16 {
	if d.hasCarry && len(b) > 0 {
		dst = append(dst, int16(uint16(d.carry)|uint16(b[0])<<8))
		b = b[1:]
		d.hasCarry = false
	}
	n := len(b) / 2
	for i := range n {
		dst = append(dst, int16(binary.LittleEndian.Uint16(b[2*i:])))
	}
	if len(b)%2 == 1 {
		d.carry, d.hasCarry = b[len(b)-1], true
	}
	return dst
}

// Pending reports whether an odd byte is waiting for its partner.
func (d *ByteDecoder) Pending() bool { return d.hasCarry }

// Reset drops a carried byte (a new stream).
func (d *ByteDecoder) Reset() { d.hasCarry = false }

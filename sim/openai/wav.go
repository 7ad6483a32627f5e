package openaisim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// WAV (RIFF) header parsing and writing.
// Format: http://soundfile.sapp.org/doc/WaveFormat/ and the Microsoft RIFF
// spec (WAVE_FORMAT_PCM = 1, WAVE_FORMAT_IEEE_FLOAT = 3,
// WAVE_FORMAT_EXTENSIBLE = 0xFFFE).
//
//	0   "RIFF"  u32 riffSize  "WAVE"
//	12  chunks: [4]byte id, u32 size (LE), size bytes, pad byte if size is odd
//	    "fmt " u16 format, u16 channels, u32 rate, u32 byteRate,
//	           u16 blockAlign, u16 bitsPerSample [, u16 cbSize, ext...]
//	    "data" samples (size may be 0 or 0xFFFFFFFF when streamed)

// wavInfo describes the audio in a WAV file.
type wavInfo struct {
	Format        uint16
	Channels      uint16
	SampleRate    uint32
	BitsPerSample uint16
	DataOffset    int
	DataLen       int
}

var (
	errNotWAV     = errors.New("not a RIFF/WAVE file")
	errWAVFormat  = errors.New("unsupported WAV format")
	errWAVNoData  = errors.New("WAV file has no data chunk")
	errWAVTrunc   = errors.New("WAV chunk truncated")
	errWAVNoFmt   = errors.New("WAV data chunk before fmt chunk")
	errPCMOddSize = errors.New("raw pcm16 upload has an odd byte count")
)

// parseWAV reads the header of a WAV file held in b (untrusted). The data
// chunk length is clamped to the bytes present.
func parseWAV(b []byte) (wavInfo, error) {
	var w wavInfo
	if len(b) < 12 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return w, errNotWAV
	}
	haveFmt := false
	off := 12
	for off+8 <= len(b) {
		id := string(b[off : off+4])
		size := int(binary.LittleEndian.Uint32(b[off+4 : off+8]))
		body := off + 8
		switch id {
		case "fmt ":
			if size < 16 || body+16 > len(b) {
				return w, fmt.Errorf("%w: fmt size %d", errWAVTrunc, size)
			}
			f := b[body:]
			w.Format = binary.LittleEndian.Uint16(f[0:2])
			w.Channels = binary.LittleEndian.Uint16(f[2:4])
			w.SampleRate = binary.LittleEndian.Uint32(f[4:8])
			w.BitsPerSample = binary.LittleEndian.Uint16(f[14:16])
			if w.Format == 0xFFFE && size >= 26 && body+26 <= len(b) {
				w.Format = binary.LittleEndian.Uint16(f[24:26]) // SubFormat GUID's first two bytes
			}
			if (w.Format != 1 && w.Format != 3) || w.Channels == 0 || w.Channels > 8 ||
				w.SampleRate == 0 || w.SampleRate > 384000 ||
				(w.BitsPerSample != 8 && w.BitsPerSample != 16 && w.BitsPerSample != 24 && w.BitsPerSample != 32) {
				return w, fmt.Errorf("%w: format %d, %d ch, %d Hz, %d bit", errWAVFormat, w.Format, w.Channels, w.SampleRate, w.BitsPerSample)
			}
			haveFmt = true
		case "data":
			if !haveFmt {
				return w, errWAVNoFmt
			}
			avail := len(b) - body
			if size == 0 || size > avail {
				size = avail
			}
			w.DataOffset, w.DataLen = body, size
			return w, nil
		}
		if size > len(b)-body {
			return w, fmt.Errorf("%w: %q size %d > %d", errWAVTrunc, id, size, len(b)-body)
		}
		off = body + size + size&1
	}
	return w, errWAVNoData
}

// Duration is the length of the data chunk.
func (w wavInfo) Duration() time.Duration {
	frame := int64(w.Channels) * int64(w.BitsPerSample/8)
	if frame == 0 || w.SampleRate == 0 {
		return 0
	}
	frames := int64(w.DataLen) / frame
	return time.Duration(frames * int64(time.Second) / int64(w.SampleRate))
}

// pcmDuration is the duration of s16le mono audio at rate Hz.
func pcmDuration(n int, rate int) time.Duration {
	return time.Duration(int64(n/2) * int64(time.Second) / int64(rate))
}

// appendWAVHeader appends a 44-byte PCM WAV header for dataLen bytes of
// s16le audio.
func appendWAVHeader(b []byte, dataLen, rate, channels int) []byte {
	le := binary.LittleEndian
	b = append(b, "RIFF"...)
	b = le.AppendUint32(b, uint32(36+dataLen))
	b = append(b, "WAVEfmt "...)
	b = le.AppendUint32(b, 16)
	b = le.AppendUint16(b, 1)
	b = le.AppendUint16(b, uint16(channels))
	b = le.AppendUint32(b, uint32(rate))
	b = le.AppendUint32(b, uint32(rate*channels*2))
	b = le.AppendUint16(b, uint16(channels*2))
	b = le.AppendUint16(b, 16)
	b = append(b, "data"...)
	b = le.AppendUint32(b, uint32(dataLen))
	return b
}

// EncodeWAV wraps s16le mono PCM at rate Hz in a WAV file, e.g. to upload
// simulated speech for transcription. The result is a new slice.
func EncodeWAV(pcm []byte, rate int) []byte {
	b := appendWAVHeader(make([]byte, 0, 44+len(pcm)), len(pcm), rate, 1)
	return append(b, pcm...)
}

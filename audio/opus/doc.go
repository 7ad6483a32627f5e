// Package opus wraps the libopus decoder and encoder, by default at
// Discord's format: 48 kHz, stereo, 20 ms frames (960 samples per channel).
// Both also work at libopus's other rates (8, 12, 16, 24 kHz) and in mono:
// the packets are the same Opus whatever rate they were encoded from or
// are decoded to.
//
// Both hot paths write into caller-owned buffers and allocate nothing per
// frame (locked by AllocsPerRun tests). libopus is the system library,
// linked through pkg-config (Debian's libopus-dev: 1.3.1 on bookworm, with
// the RFC 8251 decoder fixes); Version reports the one linked. The decoder
// handles untrusted packets from every member of a voice channel, and
// FuzzDecode runs it over random and mutated packets. BenchmarkPairedEncode
// and BenchmarkPairedDecode compare this package with bare libopus calls
// (internal/bareopus) in the same run (figures in docs/audio.md).
//
// A Decoder or Encoder is not safe for concurrent use: use one per speaker
// (decoding) or per outgoing stream (encoding).
package opus

// Discord voice format.
const (
	// SampleRate is Discord's rate, the default of decoders and encoders.
	SampleRate = 48000
	// Channels is Discord's channel count, the default of decoders and
	// encoders (interleaved).
	Channels = 2
	// FrameSamples is the number of samples per channel in a 20 ms frame.
	FrameSamples = 960
	// FrameLen is the number of int16 values in one interleaved 20 ms frame.
	FrameLen = FrameSamples * Channels
	// MaxFrameSamples is the longest Opus packet duration (120 ms) in samples
	// per channel; a decode buffer of MaxFrameSamples*Channels values can
	// hold any valid packet.
	MaxFrameSamples = 5760
	// MaxPacketSize is the largest single-frame Opus packet (RFC 6716 §3.2.1);
	// an encode buffer of this size never returns ErrBufferTooSmall.
	MaxPacketSize = 1275
)

// ValidRate reports whether libopus encodes and decodes PCM at rate Hz
// directly: 8000, 12000, 16000, 24000 or 48000.
func ValidRate(rate int) bool {
	switch rate {
	case 8000, 12000, 16000, 24000, 48000:
		return true
	}
	return false
}

// SilenceFrame returns the 3-byte Opus packet of 20 ms digital silence that
// Discord clients send (five of them) before they stop transmitting.
func SilenceFrame() [3]byte { return [3]byte{0xF8, 0xFF, 0xFE} }

// Package opus wraps the libopus decoder and encoder at Discord's format:
// 48 kHz, stereo, 20 ms frames (960 samples per channel).
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
	// SampleRate is the only rate this package decodes and encodes at.
	SampleRate = 48000
	// Channels is the channel count of decoded and encoded PCM (interleaved).
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

// SilenceFrame returns the 3-byte Opus packet of 20 ms digital silence that
// Discord clients send (five of them) before they stop transmitting.
func SilenceFrame() [3]byte { return [3]byte{0xF8, 0xFF, 0xFE} }

// Package opus wraps the libopus decoder and encoder at Discord's format:
// 48 kHz, stereo, 20 ms frames (960 samples per channel).
//
// Both hot paths write into caller-owned buffers and allocate nothing per
// frame (locked by AllocsPerRun tests). libopus itself comes from
// layeh.com/gopus, which compiles libopus 1.1.2 into the binary; this package
// declares the few C prototypes it needs and calls them directly, because
// gopus's Decode and Encode allocate a fresh slice on every call. Same-run
// medians against bare gopus (BenchmarkPairedEncode/Decode, docs/audio.md):
//
//	encode 20 ms stereo 64 kb/s  108-112 µs vs 108-113 µs  0 allocs vs 1 (1280 B)
//	decode 20 ms stereo           30-31 µs  vs  30-32 µs   0 allocs vs 1 (4096 B)
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

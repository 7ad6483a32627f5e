// Package pcm holds the signed 16-bit PCM helpers the audio pipeline shares:
// formats and frame arithmetic, channel down/up-mixing, sample conversion and
// level measurement. Nothing here allocates; every function writes into a
// caller-owned slice.
package pcm

import (
	"fmt"
	"time"
)

// FrameDuration is the duration of one pipeline frame (an Opus frame on
// Discord, and the VAD step).
const FrameDuration = 20 * time.Millisecond

// Format is a PCM layout: sample rate and interleaved channel count of
// native-endian int16 samples.
type Format struct {
	Rate     int // samples per second per channel
	Channels int // 1 (mono) or 2 (interleaved stereo)
}

// Discord is Discord's voice format: 48 kHz interleaved stereo.
func Discord() Format { return Format{Rate: 48000, Channels: 2} }

// Speech16k is 16 kHz mono, what speech-to-text and the VAD consume.
func Speech16k() Format { return Format{Rate: 16000, Channels: 1} }

// Mono24k is 24 kHz mono, the OpenAI Realtime and TTS "pcm" format.
func Mono24k() Format { return Format{Rate: 24000, Channels: 1} }

// Validate reports whether f is usable: rate 8000..192000, 1 or 2 channels.
func (f Format) Validate() error {
	if f.Rate < 8000 || f.Rate > 192000 {
		return fmt.Errorf("pcm: format: rate %d outside 8000..192000", f.Rate)
	}
	if f.Channels != 1 && f.Channels != 2 {
		return fmt.Errorf("pcm: format: %d channels (want 1 or 2)", f.Channels)
	}
	return nil
}

// String returns e.g. "48000Hz/2ch".
func (f Format) String() string { return fmt.Sprintf("%dHz/%dch", f.Rate, f.Channels) }

// Samples returns the samples per channel in d (rounded down).
func (f Format) Samples(d time.Duration) int {
	return int(int64(d) * int64(f.Rate) / int64(time.Second))
}

// Len returns the number of interleaved int16 values in d.
func (f Format) Len(d time.Duration) int { return f.Samples(d) * f.Channels }

// FrameLen returns the int16 values in one FrameDuration frame.
func (f Format) FrameLen() int { return f.Len(FrameDuration) }

// Duration returns the duration of n interleaved int16 values.
func (f Format) Duration(n int) time.Duration {
	if f.Rate == 0 || f.Channels == 0 {
		return 0
	}
	return time.Duration(int64(n/f.Channels) * int64(time.Second) / int64(f.Rate))
}

// Downmix averages interleaved stereo src into mono dst and returns the
// number of mono samples written: min(len(src)/2, len(dst)).
func Downmix(dst, src []int16) int {
	n := min(len(src)/2, len(dst))
	for i := range n {
		dst[i] = int16((int32(src[2*i]) + int32(src[2*i+1])) >> 1)
	}
	return n
}

// Upmix copies mono src into both channels of interleaved stereo dst and
// returns the number of mono samples consumed: min(len(src), len(dst)/2).
func Upmix(dst, src []int16) int {
	n := min(len(src), len(dst)/2)
	for i := range n {
		dst[2*i] = src[i]
		dst[2*i+1] = src[i]
	}
	return n
}

// Clamp16 rounds v to the nearest int16, saturating at the limits.
func Clamp16(v float32) int16 {
	if v >= 32767 {
		return 32767
	}
	if v <= -32768 {
		return -32768
	}
	if v < 0 {
		return int16(v - 0.5)
	}
	return int16(v + 0.5)
}

// ToFloat converts src to float32 in int16 units (no scaling) and returns
// the count written: min(len(src), len(dst)).
func ToFloat(dst []float32, src []int16) int {
	n := min(len(src), len(dst))
	for i := range n {
		dst[i] = float32(src[i])
	}
	return n
}

// FromFloat rounds and saturates src (int16 units) into dst and returns the
// count written: min(len(src), len(dst)).
func FromFloat(dst []int16, src []float32) int {
	n := min(len(src), len(dst))
	for i := range n {
		dst[i] = Clamp16(src[i])
	}
	return n
}

// Silence zeroes s.
func Silence(s []int16) { clear(s) }

package opus

/*
#cgo pkg-config: opus
#include <opus.h>

int banter_opus_enc_set(OpusEncoder *st, int request, int value);
int banter_opus_enc_get(OpusEncoder *st, int request, opus_int32 *value);
int banter_opus_enc_reset(OpusEncoder *st);
int banter_opus_dec_reset(OpusDecoder *st);
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Decoder decodes one speaker's Opus stream to interleaved int16 PCM, by
// default at 48 kHz stereo. The libopus state lives in Go memory owned by
// the Decoder, so there is nothing to close. Not safe for concurrent use.
//
// Sizes below are for the default format; a Decoder from NewDecoderFormat
// scales them by its rate and channel count (20 ms = Rate()/50 samples per
// channel).
type Decoder struct {
	state    []byte // libopus OpusDecoder, opaque
	st       *C.OpusDecoder
	rate     int
	channels int
	min      int // values in 2.5 ms, the shortest Opus frame
}

// NewDecoder returns a decoder for 48 kHz stereo.
func NewDecoder() (*Decoder, error) { return NewDecoderFormat(SampleRate, Channels) }

// NewDecoderFormat returns a decoder whose output is rate (8000, 12000,
// 16000, 24000 or 48000 Hz) and channels (1 or 2). libopus decodes any
// stream to any of these directly: below 48 kHz it drops the bands above
// the output's Nyquist frequency before synthesis, and mono output mixes
// stereo streams, so decoding Discord's 48 kHz stereo straight to 16 kHz mono
// costs about half of a 48 kHz stereo decode and needs no resampler.
func NewDecoderFormat(rate, channels int) (*Decoder, error) {
	if !ValidRate(rate) {
		return nil, fmt.Errorf("opus: new decoder: %w: rate %d", ErrBadArgument, rate)
	}
	if channels != 1 && channels != 2 {
		return nil, fmt.Errorf("opus: new decoder: %w: %d channels", ErrBadArgument, channels)
	}
	size := int(C.opus_decoder_get_size(C.int(channels)))
	if size <= 0 {
		return nil, fmt.Errorf("opus: new decoder: state size %d", size)
	}
	d := &Decoder{state: make([]byte, size), rate: rate, channels: channels, min: rate / 400 * channels}
	d.st = (*C.OpusDecoder)(unsafe.Pointer(&d.state[0]))
	if ret := C.opus_decoder_init(d.st, C.int32_t(rate), C.int(channels)); ret != 0 {
		return nil, codeErr("new decoder", int(ret))
	}
	return d, nil
}

// Rate returns the output sample rate.
func (d *Decoder) Rate() int { return d.rate }

// Channels returns the output channel count.
func (d *Decoder) Channels() int { return d.channels }

// Decode decodes packet into pcm (interleaved stereo) and returns the number
// of samples per channel written. pcm must hold the packet's duration
// (len(pcm) >= 2*PacketSamples(packet); FrameLen for Discord's 20 ms frames,
// MaxFrameSamples*Channels for any packet). An empty packet is an error; use
// Conceal for a lost one. Errors wrap ErrInvalidPacket or ErrBufferTooSmall.
// Decode does not allocate on success.
func (d *Decoder) Decode(packet []byte, pcm []int16) (int, error) {
	if len(packet) == 0 {
		return 0, fmt.Errorf("opus: decode: %w: empty packet", ErrInvalidPacket)
	}
	if len(pcm) < d.min {
		return 0, fmt.Errorf("opus: decode: %w: pcm holds %d values", ErrBufferTooSmall, len(pcm))
	}
	n := C.opus_decode(d.st, (*C.uchar)(unsafe.Pointer(&packet[0])), C.int32_t(len(packet)),
		(*C.int16_t)(unsafe.Pointer(&pcm[0])), C.int(len(pcm)/d.channels), 0)
	if n < 0 {
		return 0, codeErr("decode", int(n))
	}
	return int(n), nil
}

// Conceal synthesises audio for one lost packet with libopus packet-loss
// concealment and writes len(pcm)/2 samples per channel. len(pcm)/2 must be
// a multiple of 2.5 ms (120 samples); pass FrameLen values for a lost 20 ms
// frame. It returns the samples per channel written.
func (d *Decoder) Conceal(pcm []int16) (int, error) {
	if len(pcm) < d.min {
		return 0, fmt.Errorf("opus: conceal: %w: pcm holds %d values", ErrBufferTooSmall, len(pcm))
	}
	n := C.opus_decode(d.st, nil, 0, (*C.int16_t)(unsafe.Pointer(&pcm[0])), C.int(len(pcm)/d.channels), 0)
	if n < 0 {
		return 0, codeErr("conceal", int(n))
	}
	return int(n), nil
}

// DecodeFEC recovers a lost packet from the in-band forward error
// correction data carried by the packet that followed it (next), writing
// len(pcm)/2 samples per channel (FrameLen values for a 20 ms frame). When
// next carries no FEC data libopus falls back to concealment. Call Decode
// with next afterwards to decode next itself.
func (d *Decoder) DecodeFEC(next []byte, pcm []int16) (int, error) {
	if len(next) == 0 {
		return d.Conceal(pcm)
	}
	if len(pcm) < d.min {
		return 0, fmt.Errorf("opus: decode fec: %w: pcm holds %d values", ErrBufferTooSmall, len(pcm))
	}
	n := C.opus_decode(d.st, (*C.uchar)(unsafe.Pointer(&next[0])), C.int32_t(len(next)),
		(*C.int16_t)(unsafe.Pointer(&pcm[0])), C.int(len(pcm)/d.channels), 1)
	if n < 0 {
		return 0, codeErr("decode fec", int(n))
	}
	return int(n), nil
}

// Reset returns the decoder to its initial state, e.g. after the speaker's
// stream restarted (new SSRC or sequence discontinuity).
func (d *Decoder) Reset() {
	C.banter_opus_dec_reset(d.st)
}

// PacketSamples returns the duration of an Opus packet in samples per
// channel at 48 kHz, without decoding it. It does not allocate on success.
func PacketSamples(packet []byte) (int, error) {
	if len(packet) == 0 {
		return 0, fmt.Errorf("opus: packet samples: %w: empty packet", ErrInvalidPacket)
	}
	n := C.opus_packet_get_nb_samples((*C.uchar)(unsafe.Pointer(&packet[0])), C.int32_t(len(packet)), SampleRate)
	if n < 0 {
		return 0, codeErr("packet samples", int(n))
	}
	return int(n), nil
}

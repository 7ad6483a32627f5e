// Package bareopus calls the system libopus with nothing around it: no argument
// checks, no error wrapping, state allocated by libopus itself. It is the
// same-run baseline that the benchmarks of audio/opus and voice compare the
// project's codec paths against ("bare libopus"); production code uses
// audio/opus.
package bareopus

/*
#cgo pkg-config: opus
#include <opus.h>

static int bare_set_bitrate(OpusEncoder *st, int bps) {
	return opus_encoder_ctl(st, OPUS_SET_BITRATE(bps));
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Applications (OPUS_APPLICATION_*).
const (
	VoIP  = int(C.OPUS_APPLICATION_VOIP)
	Audio = int(C.OPUS_APPLICATION_AUDIO)
)

// Encoder is a libopus encoder at 48 kHz stereo.
type Encoder struct{ st *C.OpusEncoder }

// NewEncoder creates an encoder for application at bitrate bits per second.
// Call Close to free it.
func NewEncoder(application, bitrate int) (*Encoder, error) {
	var e C.int
	st := C.opus_encoder_create(48000, 2, C.int(application), &e)
	if e != C.OPUS_OK {
		return nil, fmt.Errorf("bareopus: opus_encoder_create: %d", int(e))
	}
	if r := C.bare_set_bitrate(st, C.int(bitrate)); r != C.OPUS_OK {
		C.opus_encoder_destroy(st)
		return nil, fmt.Errorf("bareopus: set bitrate: %d", int(r))
	}
	return &Encoder{st: st}, nil
}

// Encode encodes one frame of interleaved stereo pcm into packet and
// returns the packet length or the negative libopus error code.
func (e *Encoder) Encode(pcm []int16, packet []byte) int {
	return int(C.opus_encode(e.st, (*C.opus_int16)(unsafe.Pointer(&pcm[0])), C.int(len(pcm)/2),
		(*C.uchar)(unsafe.Pointer(&packet[0])), C.opus_int32(len(packet))))
}

// Close frees the encoder.
func (e *Encoder) Close() { C.opus_encoder_destroy(e.st) }

// Decoder is a libopus decoder at a given rate and channel count.
type Decoder struct {
	st       *C.OpusDecoder
	channels int
}

// NewDecoder creates a decoder; call Close to free it.
func NewDecoder(rate, channels int) (*Decoder, error) {
	var e C.int
	st := C.opus_decoder_create(C.opus_int32(rate), C.int(channels), &e)
	if e != C.OPUS_OK {
		return nil, fmt.Errorf("bareopus: opus_decoder_create: %d", int(e))
	}
	return &Decoder{st: st, channels: channels}, nil
}

// Decode decodes packet into pcm and returns the samples per channel or
// the negative libopus error code.
func (d *Decoder) Decode(packet []byte, pcm []int16) int {
	return int(C.opus_decode(d.st, (*C.uchar)(unsafe.Pointer(&packet[0])), C.opus_int32(len(packet)),
		(*C.opus_int16)(unsafe.Pointer(&pcm[0])), C.int(len(pcm)/d.channels), 0))
}

// Close frees the decoder.
func (d *Decoder) Close() { C.opus_decoder_destroy(d.st) }

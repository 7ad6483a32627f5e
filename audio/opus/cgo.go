package opus

// The C side of this package is only a set of prototypes. The libopus 1.1.2
// object code itself is compiled into every binary by layeh.com/gopus (its
// opus_nonshared.go #includes the libopus sources on amd64 and 386), which
// this package imports for that side effect. Calling libopus directly lets the
// hot paths decode and encode into caller-owned buffers: gopus's own
// Encode/Decode allocate a new slice on every call.
//
// The prototypes and constants below are copied from libopus 1.1.2
// include/opus.h and include/opus_defines.h
// (https://opus-codec.org/docs/opus_api-1.1.2/group__opus__decoder.html).

/*
#include <stdint.h>

typedef struct OpusDecoder OpusDecoder;
typedef struct OpusEncoder OpusEncoder;

int opus_decoder_get_size(int channels);
int opus_decoder_init(OpusDecoder *st, int32_t Fs, int channels);
int opus_decode(OpusDecoder *st, const unsigned char *data, int32_t len, int16_t *pcm, int frame_size, int decode_fec);
int opus_decoder_ctl(OpusDecoder *st, int request, ...);

int opus_encoder_get_size(int channels);
int opus_encoder_init(OpusEncoder *st, int32_t Fs, int channels, int application);
int32_t opus_encode(OpusEncoder *st, const int16_t *pcm, int frame_size, unsigned char *data, int32_t max_data_bytes);
int opus_encoder_ctl(OpusEncoder *st, int request, ...);

int opus_packet_get_nb_samples(const unsigned char packet[], int32_t len, int32_t Fs);

// opus_*_ctl are variadic, which cgo cannot call; these wrappers fix the
// argument list for the requests this package uses.
int banter_opus_enc_set(OpusEncoder *st, int request, int value) {
	return opus_encoder_ctl(st, request, (int32_t)value);
}
int banter_opus_enc_get(OpusEncoder *st, int request, int32_t *value) {
	return opus_encoder_ctl(st, request, value);
}
int banter_opus_enc_reset(OpusEncoder *st) {
	return opus_encoder_ctl(st, 4028);
}
int banter_opus_dec_reset(OpusDecoder *st) {
	return opus_decoder_ctl(st, 4028);
}
*/
import "C"

import (
	_ "layeh.com/gopus" // links the libopus object code this package calls
)

// libopus request codes (include/opus_defines.h).
const (
	ctlSetBitrate        = 4002
	ctlGetBitrate        = 4003
	ctlSetComplexity     = 4010
	ctlSetInbandFEC      = 4012
	ctlSetPacketLossPerc = 4014
	ctlSetSignal         = 4024

	opusAuto = -1000
)

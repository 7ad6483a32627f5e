package opus

// The C side of this package links the system libopus through pkg-config
// (Debian: libopus-dev, 1.3.1 on bookworm) and includes its own opus.h, so
// the prototypes and constants are the installed library's, not copies.
// Calling libopus directly lets the hot paths decode and encode into
// caller-owned buffers. Untrusted audio (every member of a voice channel can
// send packets) is therefore decoded by the distribution's maintained
// libopus, which carries the RFC 8251 decoder fixes, not by the libopus
// 1.1.2 (2015) that layeh.com/gopus used to compile into the binary.

/*
#cgo pkg-config: opus
#include <opus.h>

// opus_*_ctl are variadic, which cgo cannot call; these wrappers fix the
// argument list for the requests this package uses.
int banter_opus_enc_set(OpusEncoder *st, int request, int value) {
	return opus_encoder_ctl(st, request, (opus_int32)value);
}
int banter_opus_enc_get(OpusEncoder *st, int request, opus_int32 *value) {
	return opus_encoder_ctl(st, request, value);
}
int banter_opus_enc_reset(OpusEncoder *st) {
	return opus_encoder_ctl(st, OPUS_RESET_STATE);
}
int banter_opus_dec_reset(OpusDecoder *st) {
	return opus_decoder_ctl(st, OPUS_RESET_STATE);
}
*/
import "C"

// libopus request codes (opus_defines.h), checked against the header at
// build time by the array sizes below.
const (
	ctlSetBitrate        = 4002
	ctlGetBitrate        = 4003
	ctlSetComplexity     = 4010
	ctlSetInbandFEC      = 4012
	ctlSetPacketLossPerc = 4014
	ctlSetSignal         = 4024

	opusAuto = -1000
)

// Compile-time checks that the constants above match the linked header:
// each array has length 1 only if the two values are equal (a negative or
// mismatched length fails the build).
var (
	_ = [1]struct{}{}[ctlSetBitrate-C.OPUS_SET_BITRATE_REQUEST]
	_ = [1]struct{}{}[ctlGetBitrate-C.OPUS_GET_BITRATE_REQUEST]
	_ = [1]struct{}{}[ctlSetComplexity-C.OPUS_SET_COMPLEXITY_REQUEST]
	_ = [1]struct{}{}[ctlSetInbandFEC-C.OPUS_SET_INBAND_FEC_REQUEST]
	_ = [1]struct{}{}[ctlSetPacketLossPerc-C.OPUS_SET_PACKET_LOSS_PERC_REQUEST]
	_ = [1]struct{}{}[ctlSetSignal-C.OPUS_SET_SIGNAL_REQUEST]
	_ = [1]struct{}{}[opusAuto-C.OPUS_AUTO]
)

// Version returns the linked libopus's version string as reported at run
// time by opus_get_version_string, e.g. "libopus 1.3.1".
func Version() string { return C.GoString(C.opus_get_version_string()) }

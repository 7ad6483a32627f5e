package opus

import (
	"errors"
	"fmt"
)

// Errors returned (wrapped) by the codec. Callers branch with errors.Is, e.g.
// to count malformed packets separately from programming errors.
var (
	// ErrInvalidPacket: the packet is corrupted or not Opus (OPUS_INVALID_PACKET).
	ErrInvalidPacket = errors.New("opus: invalid packet")
	// ErrBufferTooSmall: the output buffer cannot hold the result (OPUS_BUFFER_TOO_SMALL).
	ErrBufferTooSmall = errors.New("opus: buffer too small")
	// ErrBadArgument: an argument is out of range (OPUS_BAD_ARG), e.g. a
	// frame size that is not a multiple of 2.5 ms.
	ErrBadArgument = errors.New("opus: bad argument")
	errInternal    = errors.New("opus: internal error")
)

// codeErr maps a negative libopus return code to an error wrapped with op.
func codeErr(op string, code int) error {
	var base error
	switch code {
	case -1:
		base = ErrBadArgument
	case -2:
		base = ErrBufferTooSmall
	case -4:
		base = ErrInvalidPacket
	default:
		base = errInternal
	}
	return fmt.Errorf("opus: %s: %w (code %d)", op, base, code)
}

// Package transport implements Discord's voice transport encryption, the
// "rtpsize" AEAD modes, plus the small UDP messages that share the socket
// (IP discovery and keepalive). It has no I/O.
//
// https://discord.com/developers/docs/topics/voice-connections#transport-encryption-and-sending-voice
package transport

import (
	"errors"
	"fmt"
)

// Mode is a transport encryption mode. The zero value is ModeUnknown.
type Mode uint8

// Transport encryption modes banter implements. The deprecated xsalsa20 and
// non-rtpsize modes were discontinued by Discord on 2024-11-18.
const (
	ModeUnknown Mode = iota
	// ModeAES256GCM is aead_aes256_gcm_rtpsize (preferred when offered).
	ModeAES256GCM
	// ModeXChaCha20Poly1305 is aead_xchacha20_poly1305_rtpsize (always offered).
	ModeXChaCha20Poly1305
)

// String returns the wire name of the mode.
func (m Mode) String() string {
	switch m {
	case ModeAES256GCM:
		return "aead_aes256_gcm_rtpsize"
	case ModeXChaCha20Poly1305:
		return "aead_xchacha20_poly1305_rtpsize"
	default:
		return fmt.Sprintf("Mode(%d)", uint8(m))
	}
}

// ParseMode maps a wire name to a Mode, or ModeUnknown.
func ParseMode(s string) Mode {
	switch s {
	case "aead_aes256_gcm_rtpsize":
		return ModeAES256GCM
	case "aead_xchacha20_poly1305_rtpsize":
		return ModeXChaCha20Poly1305
	default:
		return ModeUnknown
	}
}

var errNoMode = errors.New("transport: no supported encryption mode offered")

// ChooseMode picks the mode to select from the server's Ready "modes" list:
// aead_aes256_gcm_rtpsize if offered, else aead_xchacha20_poly1305_rtpsize.
func ChooseMode(offered []string) (Mode, error) {
	best := ModeUnknown
	for _, s := range offered {
		switch ParseMode(s) {
		case ModeAES256GCM:
			return ModeAES256GCM, nil
		case ModeXChaCha20Poly1305:
			best = ModeXChaCha20Poly1305
		}
	}
	if best == ModeUnknown {
		return ModeUnknown, fmt.Errorf("%w: %q", errNoMode, offered)
	}
	return best, nil
}

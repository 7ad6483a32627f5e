package frame

import (
	"bytes"
	"errors"
)

// OpusSilence is the Opus silence frame, sent and accepted unencrypted
// under DAVE (WP §"Silence Frames").
var opusSilence = []byte{0xF8, 0xFF, 0xFE}

// IsSilence reports whether b is exactly the Opus silence frame.
func IsSilence(b []byte) bool { return bytes.Equal(b, opusSilence) }

var errNoKey = errors.New("frame: no sender key")

// Encryptor encrypts our outgoing Opus frames with the current sender
// ratchet. The zero value is not usable; use NewEncryptor.
type Encryptor struct {
	ratchet     *Ratchet
	passthrough bool
	nonce       uint32
	generation  uint32
	wraps       uint32
	c           *gcm8
}

// NewEncryptor returns an encryptor with no key: it refuses to encrypt
// until SetRatchet or SetPassthrough is called.
func NewEncryptor() *Encryptor { return &Encryptor{} }

// SetRatchet switches to a new sender ratchet (a new epoch's key); the
// nonce restarts so that the first frame uses nonce 1.
func (e *Encryptor) SetRatchet(r *Ratchet) {
	e.ratchet, e.passthrough = r, false
	e.nonce, e.generation, e.wraps, e.c = 0, 0, 0, nil
}

// SetPassthrough turns passthrough (protocol version 0: frames sent
// unencrypted) on or off. The ratchet and nonce are kept, so turning it
// off resumes encryption where it stopped.
func (e *Encryptor) SetPassthrough(on bool) { e.passthrough = on }

// Ready reports whether frames can be sent (passthrough, or a key).
func (e *Encryptor) Ready() bool { return e.passthrough || e.ratchet != nil }

// Passthrough reports whether frames are sent unencrypted.
func (e *Encryptor) Passthrough() bool { return e.passthrough }

// Encrypt appends the DAVE frame for one Opus packet to dst. Silence
// frames and passthrough mode copy opus unchanged. It does not allocate
// once the generation's cipher exists and dst has room.
func (e *Encryptor) Encrypt(dst, opus []byte) ([]byte, error) {
	if e.passthrough || IsSilence(opus) {
		return append(dst, opus...), nil
	}
	if e.ratchet == nil {
		return dst, errNoKey
	}
	e.nonce++
	if e.nonce == 0 {
		e.wraps++ // the 8-bit generation wraps with the 32-bit nonce
	}
	gen := e.wraps<<8 | e.nonce>>24
	if e.c == nil || gen != e.generation {
		key, err := e.ratchet.Key(gen)
		if err != nil {
			return dst, err
		}
		c, err := newGCM8(key)
		if err != nil {
			return dst, err
		}
		e.ratchet.Erase(gen)
		e.c, e.generation = c, gen
	}
	dst = e.c.seal(dst, e.nonce, opus, nil)
	tag := dst[len(dst)-TagSize:]
	var t [TagSize]byte
	copy(t[:], tag)
	dst = dst[:len(dst)-TagSize]
	return appendTrailer(dst, t[:], e.nonce), nil
}

// Overhead is the maximum number of bytes Encrypt adds to a frame.
const Overhead = TagSize + 5 + 1 + markerSize

package transport

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/banterbot/banter/discord/voice/rtp"
	"golang.org/x/crypto/chacha20poly1305"
)

// KeySize is the size of the secret_key from Session Description (op 4).
const KeySize = 32

// TagSize is the AEAD tag size of both modes.
const TagSize = 16

// NonceSize is the size of the truncated nonce appended to every packet.
const NonceSize = 4

// Overhead is what Seal adds to a payload besides the RTP header.
const Overhead = TagSize + NonceSize

// Errors that callers count separately. Open wraps them with detail.
var (
	// ErrMalformed means the packet cannot be a valid rtpsize packet.
	ErrMalformed = errors.New("transport: malformed packet")
	// ErrDecrypt means AEAD authentication failed.
	ErrDecrypt = errors.New("transport: decryption failed")
)

// Cipher seals and opens voice packets for one mode and key.
//
// A Cipher holds a nonce scratch buffer, so it may not be used concurrently;
// use one for the send path and one for the receive path.
type Cipher struct {
	mode  Mode
	aead  cipher.AEAD
	nonce [chacha20poly1305.NonceSizeX]byte
}

// NewCipher returns a Cipher for mode with the 32-byte secret key.
func NewCipher(mode Mode, key []byte) (*Cipher, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("transport: new cipher: key is %d bytes, want %d", len(key), KeySize)
	}
	c := &Cipher{mode: mode}
	switch mode {
	case ModeAES256GCM:
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, fmt.Errorf("transport: new cipher: %w", err)
		}
		if c.aead, err = cipher.NewGCM(block); err != nil {
			return nil, fmt.Errorf("transport: new cipher: %w", err)
		}
	case ModeXChaCha20Poly1305:
		var err error
		if c.aead, err = chacha20poly1305.NewX(key); err != nil {
			return nil, fmt.Errorf("transport: new cipher: %w", err)
		}
	default:
		return nil, fmt.Errorf("transport: new cipher: unsupported mode %v", mode)
	}
	return c, nil
}

// Mode returns the cipher's mode.
func (c *Cipher) Mode() Mode { return c.mode }

// nonceFor fills the nonce scratch: BE32(counter) followed by zeros up to the
// AEAD's nonce size (12 for AES-GCM, 24 for XChaCha20).
func (c *Cipher) nonceFor(counter uint32) []byte {
	n := c.nonce[:c.aead.NonceSize()]
	clear(n)
	binary.BigEndian.PutUint32(n, counter)
	return n
}

// Seal appends a complete packet to dst and returns it:
//
//	header || AEAD(key, nonce(counter), aad=header, payload) || BE32(counter)
//
// header is the clear RTP header (rtp.Header.MarshalTo output; with CSRCs and
// extension preamble if any) and payload is everything after it in plaintext
// (extension body, frame, padding). header and payload must not overlap the
// appended region of dst. Callers increment counter per packet (wrapping).
func (c *Cipher) Seal(dst, header, payload []byte, counter uint32) []byte {
	dst = append(dst, header...)
	dst = c.aead.Seal(dst, c.nonceFor(counter), payload, header)
	return binary.BigEndian.AppendUint32(dst, counter)
}

// Open authenticates and decrypts pkt, parsing its clear header into h. It
// decrypts into dst[:0] (which must not overlap pkt; give it cap ≥ len(pkt)
// to avoid allocating) and returns the frame: the plaintext without the
// encrypted extension body (when X is set) and without RTP padding (when P is
// set). The frame aliases dst. Errors wrap ErrMalformed or ErrDecrypt.
//
// Callers filter RTCP (rtp.IsRTCP) before calling Open.
func (c *Cipher) Open(dst []byte, h *rtp.Header, pkt []byte) ([]byte, error) {
	hlen, err := h.Unmarshal(pkt)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if len(pkt) < hlen+Overhead {
		return nil, fmt.Errorf("%w: %d bytes, need %d for header and overhead", ErrMalformed, len(pkt), hlen+Overhead)
	}
	end := len(pkt) - NonceSize
	counter := binary.BigEndian.Uint32(pkt[end:])
	pt, err := c.aead.Open(dst[:0], c.nonceFor(counter), pkt[hlen:end], pkt[:hlen])
	if err != nil {
		return nil, ErrDecrypt
	}
	if h.Extension {
		ext := 4 * int(h.ExtensionLength)
		if ext > len(pt) {
			return nil, fmt.Errorf("%w: extension body %d > plaintext %d", ErrMalformed, ext, len(pt))
		}
		pt = pt[ext:]
	}
	if h.Padding {
		if len(pt) == 0 {
			return nil, fmt.Errorf("%w: padding bit set on empty payload", ErrMalformed)
		}
		pad := int(pt[len(pt)-1])
		if pad == 0 || pad > len(pt) {
			return nil, fmt.Errorf("%w: padding %d of %d bytes", ErrMalformed, pad, len(pt))
		}
		pt = pt[:len(pt)-pad]
	}
	return pt, nil
}

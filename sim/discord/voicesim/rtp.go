package voicesim

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/crypto/chacha20poly1305"
)

// Mode is a transport encryption mode.
//
// https://discord.com/developers/docs/topics/voice-connections#transport-encryption-modes
type Mode uint8

// Supported transport encryption modes. The deprecated xsalsa20 modes are
// not offered, as Discord stopped accepting them on 2024-11-18.
const (
	ModeUnknown Mode = iota
	ModeAES256GCMRTPSize
	ModeXChaCha20Poly1305RTPSize
)

// String returns the mode's wire name.
func (m Mode) String() string {
	switch m {
	case ModeAES256GCMRTPSize:
		return "aead_aes256_gcm_rtpsize"
	case ModeXChaCha20Poly1305RTPSize:
		return "aead_xchacha20_poly1305_rtpsize"
	}
	return "unknown"
}

// ParseMode returns the Mode for a wire name, or ModeUnknown.
func ParseMode(s string) Mode {
	switch s {
	case "aead_aes256_gcm_rtpsize":
		return ModeAES256GCMRTPSize
	case "aead_xchacha20_poly1305_rtpsize":
		return ModeXChaCha20Poly1305RTPSize
	}
	return ModeUnknown
}

const (
	rtpHeaderLen   = 12
	rtpVersion     = 2
	opusPT         = 120
	tagLen         = 16
	nonceSuffixLen = 4
	// maxPacket bounds every UDP datagram the simulator reads or builds.
	maxPacket = 1500
)

var (
	errShort      = errors.New("packet too short")
	errRTPVersion = errors.New("not RTP version 2")
	errDecrypt    = errors.New("decrypt failed")
	errPadding    = errors.New("bad padding")
	errMode       = errors.New("unknown encryption mode")
)

// rtpHeader is the parsed fixed part of an RTP header (RFC 3550 §5.1):
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|V=2|P|X|  CC   |M|     PT      |       sequence number         |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                           timestamp                           |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|           synchronization source (SSRC) identifier            |
//	+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
//	|            contributing source (CSRC) identifiers             |
//	|                             ....                              |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// With the "rtpsize" modes the clear (authenticated) header also holds the
// 4-byte extension preamble (0xBEDE, u16 length in words) but not the
// extension body, which is encrypted (SRTP style, RFC 3711 §3.1).
type rtpHeader struct {
	Padding   bool
	Extension bool
	CC        int
	Marker    bool
	PT        uint8
	Seq       uint16
	Timestamp uint32
	SSRC      uint32
	ExtWords  int // extension body length in 32-bit words (X set)
	ClearLen  int // 12 + 4*CC + (X ? 4 : 0): the AAD length under rtpsize
}

// parseRTPHeader parses the clear part of an rtpsize RTP packet. Every field
// is reset.
func parseRTPHeader(h *rtpHeader, pkt []byte) error {
	*h = rtpHeader{}
	if len(pkt) < rtpHeaderLen {
		return fmt.Errorf("%w: %d < %d", errShort, len(pkt), rtpHeaderLen)
	}
	if pkt[0]>>6 != rtpVersion {
		return errRTPVersion
	}
	h.Padding = pkt[0]&0x20 != 0
	h.Extension = pkt[0]&0x10 != 0
	h.CC = int(pkt[0] & 0x0f)
	h.Marker = pkt[1]&0x80 != 0
	h.PT = pkt[1] & 0x7f
	h.Seq = binary.BigEndian.Uint16(pkt[2:])
	h.Timestamp = binary.BigEndian.Uint32(pkt[4:])
	h.SSRC = binary.BigEndian.Uint32(pkt[8:])
	h.ClearLen = rtpHeaderLen + 4*h.CC
	if h.Extension {
		if len(pkt) < h.ClearLen+4 {
			return fmt.Errorf("%w: extension preamble at %d, len %d", errShort, h.ClearLen, len(pkt))
		}
		h.ExtWords = int(binary.BigEndian.Uint16(pkt[h.ClearLen+2:]))
		h.ClearLen += 4
	}
	if len(pkt) < h.ClearLen+tagLen+nonceSuffixLen {
		return fmt.Errorf("%w: %d < %d", errShort, len(pkt), h.ClearLen+tagLen+nonceSuffixLen)
	}
	return nil
}

// transport is one participant's transport cipher: the mode chosen in
// op 1 and the secret key sent in op 4. It is immutable and safe for
// concurrent use.
type transport struct {
	mode Mode
	aead cipher.AEAD
	key  [32]byte
}

func newTransport(mode Mode, key [32]byte) (*transport, error) {
	var (
		a   cipher.AEAD
		err error
	)
	switch mode {
	case ModeAES256GCMRTPSize:
		var b cipher.Block
		if b, err = aes.NewCipher(key[:]); err == nil {
			a, err = cipher.NewGCM(b)
		}
	case ModeXChaCha20Poly1305RTPSize:
		a, err = chacha20poly1305.NewX(key[:])
	default:
		return nil, fmt.Errorf("voicesim: transport: %w: %d", errMode, mode)
	}
	if err != nil {
		return nil, fmt.Errorf("voicesim: transport %v: %w", mode, err)
	}
	return &transport{mode: mode, aead: a, key: key}, nil
}

// nonce fills the mode's nonce from the 32-bit counter: the counter goes
// big-endian at the front, the rest is zero (AES-GCM 12 bytes, XChaCha 24).
func (t *transport) nonce(buf *[24]byte, counter uint32) []byte {
	*buf = [24]byte{}
	binary.BigEndian.PutUint32(buf[:], counter)
	return buf[:t.aead.NonceSize()]
}

// open authenticates and decrypts an rtpsize packet, appending to dst,
// which must not overlap pkt. It returns the media payload with the
// encrypted extension body and RTP padding removed; the payload aliases
// dst's backing array. nb is the caller's nonce scratch (a heap buffer the
// caller reuses keeps this allocation-free).
//
//	packet = clear header (AAD) || ciphertext || 16-byte tag || u32 BE nonce counter
func (t *transport) open(nb *[24]byte, dst []byte, h *rtpHeader, pkt []byte) ([]byte, error) {
	n := len(pkt)
	counter := binary.BigEndian.Uint32(pkt[n-nonceSuffixLen:])
	plain, err := t.aead.Open(dst, t.nonce(nb, counter), pkt[h.ClearLen:n-nonceSuffixLen], pkt[:h.ClearLen])
	if err != nil {
		return nil, errDecrypt
	}
	if h.Extension {
		body := 4 * h.ExtWords
		if body > len(plain) {
			return nil, fmt.Errorf("%w: extension body %d > %d", errShort, body, len(plain))
		}
		plain = plain[body:]
	}
	if h.Padding {
		if len(plain) == 0 {
			return nil, errPadding
		}
		p := int(plain[len(plain)-1])
		if p == 0 || p > len(plain) {
			return nil, fmt.Errorf("%w: %d of %d", errPadding, p, len(plain))
		}
		plain = plain[:len(plain)-p]
	}
	return plain, nil
}

// appendRTP appends a packet with a plain 12-byte header (V=2, PT 120, no
// CSRC, no extension) sealing payload under counter; nb is nonce scratch
// as for open.
func (t *transport) appendRTP(nb *[24]byte, dst []byte, seq uint16, ts, ssrc uint32, payload []byte, counter uint32) []byte {
	start := len(dst)
	dst = append(dst, 0x80, opusPT, byte(seq>>8), byte(seq))
	dst = binary.BigEndian.AppendUint32(dst, ts)
	dst = binary.BigEndian.AppendUint32(dst, ssrc)
	dst = t.aead.Seal(dst, t.nonce(nb, counter), payload, dst[start:start+rtpHeaderLen])
	return binary.BigEndian.AppendUint32(dst, counter)
}

// IP discovery (https://discord.com/developers/docs/topics/voice-connections#ip-discovery),
// 74 bytes, all big-endian:
//
//	u16 type (1 request, 2 response) | u16 length = 70 | u32 ssrc |
//	64-byte NUL-terminated address (zero in requests) | u16 port
const (
	ipDiscoveryLen      = 74
	ipDiscoveryRequest  = 1
	ipDiscoveryResponse = 2
)

// isIPDiscoveryRequest reports whether pkt is an IP discovery request and
// returns its SSRC.
func isIPDiscoveryRequest(pkt []byte) (uint32, bool) {
	if len(pkt) != ipDiscoveryLen ||
		binary.BigEndian.Uint16(pkt) != ipDiscoveryRequest ||
		binary.BigEndian.Uint16(pkt[2:]) != ipDiscoveryLen-4 {
		return 0, false
	}
	return binary.BigEndian.Uint32(pkt[4:]), true
}

// appendIPDiscoveryResponse appends the 74-byte response carrying ip and port.
func appendIPDiscoveryResponse(dst []byte, ssrc uint32, ip string, port uint16) []byte {
	var b [ipDiscoveryLen]byte
	binary.BigEndian.PutUint16(b[0:], ipDiscoveryResponse)
	binary.BigEndian.PutUint16(b[2:], ipDiscoveryLen-4)
	binary.BigEndian.PutUint32(b[4:], ssrc)
	copy(b[8:8+63], ip)
	binary.BigEndian.PutUint16(b[72:], port)
	return append(dst, b[:]...)
}

// isRTCP reports whether pkt looks like RTCP (version 2, packet type
// 200..204: SR, RR, SDES, BYE, APP), which shares the socket with RTP.
func isRTCP(pkt []byte) bool {
	return len(pkt) >= 8 && pkt[0]>>6 == rtpVersion && pkt[1] >= 200 && pkt[1] <= 204
}

// silence is the Opus frame Discord clients send five of before they stop
// ("Voice Data Interpolation").
const silence = "\xF8\xFF\xFE"

func isSilence(frame []byte) bool { return string(frame) == silence }

// Package rtp encodes and decodes the RTP packets Discord voice carries over
// UDP. It has no I/O: the voice connection in discord/voice drives it.
//
// Discord's "rtpsize" transport modes treat the fixed header, the CSRC list
// and the 4-byte extension preamble as the unencrypted header (the AEAD
// additional data); the extension body is part of the encrypted payload.
// Header.Unmarshal therefore stops after the preamble and reports how many
// header bytes it consumed, which is exactly the AAD length.
//
// https://discord.com/developers/docs/topics/voice-connections#transport-encryption-modes
package rtp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// PayloadTypeOpus is the RTP payload type Discord uses for Opus audio.
const PayloadTypeOpus = 120

// HeaderSize is the size of the fixed RTP header without CSRCs or extension.
const HeaderSize = 12

// ExtensionProfileOneByte is the RFC 8285 one-byte header extension profile
// Discord clients put in the extension preamble.
const ExtensionProfileOneByte = 0xBEDE

const maxCSRC = 15

var (
	errShortHeader = errors.New("rtp: header too short")
	errVersion     = errors.New("rtp: unsupported version")
)

// Header is an RTP header as far as the rtpsize transport modes leave it in
// the clear, RFC 3550 §5.1 plus the RFC 3550 §5.3.1 extension preamble:
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
//	|      defined by profile       |           length              |  (if X)
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|        header extension body (length × 4 bytes, ENCRYPTED)    |
//
// The zero value is ready to use; Unmarshal reuses the CSRC slice's capacity.
type Header struct {
	Padding        bool
	Extension      bool
	Marker         bool
	PayloadType    uint8
	SequenceNumber uint16
	Timestamp      uint32
	SSRC           uint32
	CSRC           []uint32
	// ExtensionProfile and ExtensionLength are the preamble fields; they are
	// meaningful only when Extension is set. ExtensionLength counts 32-bit
	// words of extension body, which in rtpsize modes sits encrypted at the
	// front of the payload.
	ExtensionProfile uint16
	ExtensionLength  uint16
}

// Unmarshal parses the clear header at the front of buf into h, resetting
// every field, and returns the number of bytes it covers (fixed header, CSRCs
// and, if X is set, the 4-byte extension preamble). h does not keep buf.
func (h *Header) Unmarshal(buf []byte) (int, error) {
	if len(buf) < HeaderSize {
		return 0, fmt.Errorf("%w: %d < %d", errShortHeader, len(buf), HeaderSize)
	}
	if v := buf[0] >> 6; v != 2 {
		return 0, fmt.Errorf("%w: %d", errVersion, v)
	}
	h.Padding = buf[0]&0x20 != 0
	h.Extension = buf[0]&0x10 != 0
	cc := int(buf[0] & 0x0f)
	h.Marker = buf[1]&0x80 != 0
	h.PayloadType = buf[1] & 0x7f
	h.SequenceNumber = binary.BigEndian.Uint16(buf[2:])
	h.Timestamp = binary.BigEndian.Uint32(buf[4:])
	h.SSRC = binary.BigEndian.Uint32(buf[8:])
	n := HeaderSize + 4*cc
	if h.Extension {
		n += 4
	}
	if len(buf) < n {
		return 0, fmt.Errorf("%w: %d < %d (cc=%d x=%t)", errShortHeader, len(buf), n, cc, h.Extension)
	}
	if cap(h.CSRC) < cc {
		h.CSRC = make([]uint32, cc, maxCSRC)
	}
	h.CSRC = h.CSRC[:cc]
	for i := range cc {
		h.CSRC[i] = binary.BigEndian.Uint32(buf[HeaderSize+4*i:])
	}
	h.ExtensionProfile, h.ExtensionLength = 0, 0
	if h.Extension {
		off := HeaderSize + 4*cc
		h.ExtensionProfile = binary.BigEndian.Uint16(buf[off:])
		h.ExtensionLength = binary.BigEndian.Uint16(buf[off+2:])
	}
	return n, nil
}

// MarshalSize returns the number of bytes MarshalTo writes.
func (h *Header) MarshalSize() int {
	n := HeaderSize + 4*len(h.CSRC)
	if h.Extension {
		n += 4
	}
	return n
}

// MarshalTo writes the clear header (including the extension preamble when
// Extension is set, but not the extension body) into buf and returns the
// number of bytes written, or io.ErrShortBuffer.
func (h *Header) MarshalTo(buf []byte) (int, error) {
	n := h.MarshalSize()
	if len(buf) < n {
		return 0, io.ErrShortBuffer
	}
	if len(h.CSRC) > maxCSRC {
		return 0, fmt.Errorf("rtp: marshal: %d CSRCs > %d", len(h.CSRC), maxCSRC)
	}
	b0 := byte(0x80) | byte(len(h.CSRC))
	if h.Padding {
		b0 |= 0x20
	}
	if h.Extension {
		b0 |= 0x10
	}
	buf[0] = b0
	buf[1] = h.PayloadType & 0x7f
	if h.Marker {
		buf[1] |= 0x80
	}
	binary.BigEndian.PutUint16(buf[2:], h.SequenceNumber)
	binary.BigEndian.PutUint32(buf[4:], h.Timestamp)
	binary.BigEndian.PutUint32(buf[8:], h.SSRC)
	for i, c := range h.CSRC {
		binary.BigEndian.PutUint32(buf[HeaderSize+4*i:], c)
	}
	if h.Extension {
		off := HeaderSize + 4*len(h.CSRC)
		binary.BigEndian.PutUint16(buf[off:], h.ExtensionProfile)
		binary.BigEndian.PutUint16(buf[off+2:], h.ExtensionLength)
	}
	return n, nil
}

// AppendMarshal appends the clear header to b.
func (h *Header) AppendMarshal(b []byte) ([]byte, error) {
	n := h.MarshalSize()
	b = append(b, make([]byte, n)...)
	if _, err := h.MarshalTo(b[len(b)-n:]); err != nil {
		return b[:len(b)-n], err
	}
	return b, nil
}

// Clone returns a deep copy of h.
func (h *Header) Clone() Header {
	c := *h
	c.CSRC = append([]uint32(nil), h.CSRC...)
	return c
}

// IsRTCP reports whether pkt looks like RTCP sharing the RTP socket
// (RFC 5761 §4): version 2 and a second byte of 200–204 (SR, RR, SDES, BYE,
// APP), which an RTP parser would read as the marker bit with payload type
// 72–76. Discord voice receivers drop these before transport decryption.
func IsRTCP(pkt []byte) bool {
	if len(pkt) < 2 || pkt[0]>>6 != 2 {
		return false
	}
	return pkt[1] >= 200 && pkt[1] <= 204
}

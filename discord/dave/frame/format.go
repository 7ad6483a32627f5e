package frame

import (
	"errors"
	"fmt"
)

// Frame layout (DAVE whitepaper §"Frame Format"; libdave frame_processors.cpp):
//
//	+--------------------------------+--------+-----------+-----------+------+-------+
//	| frame (encrypted + unencrypted | tag    | ULEB128   | ULEB128   | supp | FA FA |
//	| ranges interleaved)            | 8 B    | nonce     | ranges    | 1 B  |       |
//	+--------------------------------+--------+-----------+-----------+------+-------+
//
// supp = 8 + len(nonce) + len(ranges) + 1 + 2. Opus frames have no
// unencrypted ranges.

// Marker ends every protocol frame.
const Marker = 0xFAFA

const (
	markerSize    = 2
	minSupplement = TagSize + 1 + 1 + markerSize // tag, 1-byte nonce, size byte, marker
	maxRanges     = 32
)

var (
	errNotProtocol = errors.New("frame: not a DAVE protocol frame")
	errULEB        = errors.New("frame: invalid ULEB128")
)

// Range is an unencrypted byte range of the frame.
type Range struct{ Offset, Size int }

// Frame is a parsed protocol frame. Its slices alias the input buffer.
type Frame struct {
	Body   []byte // encrypted bytes interleaved with unencrypted ranges
	Tag    []byte // truncated 8-byte GCM tag
	Nonce  uint32 // truncated nonce
	Ranges []Range
}

// AppendULEB128 appends v as unsigned LEB128.
func AppendULEB128(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// ReadULEB128 decodes an unsigned LEB128 value from b, returning it and
// the number of bytes read.
func ReadULEB128(b []byte) (uint64, int, error) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			if i == 9 && b[i] > 1 {
				return 0, 0, errULEB
			}
			return v, i + 1, nil
		}
	}
	return 0, 0, errULEB
}

// IsProtocolFrame reports whether b ends in the DAVE marker.
func IsProtocolFrame(b []byte) bool {
	return len(b) >= minSupplement && b[len(b)-1] == 0xFA && b[len(b)-2] == 0xFA
}

// Unmarshal parses b into f, reusing f.Ranges. It fails with a "not a
// protocol frame" error for anything that is not a well-formed DAVE frame
// (WP §"Protocol Frame Check").
func (f *Frame) Unmarshal(b []byte) error {
	f.Body, f.Tag, f.Nonce, f.Ranges = nil, nil, 0, f.Ranges[:0]
	if !IsProtocolFrame(b) {
		return errNotProtocol
	}
	supp := int(b[len(b)-3])
	if supp < minSupplement || supp > len(b) {
		return fmt.Errorf("%w: supplemental size %d of %d", errNotProtocol, supp, len(b))
	}
	start := len(b) - supp
	meta := b[start+TagSize : len(b)-3]
	nonce, n, err := ReadULEB128(meta)
	if err != nil || nonce > 0xFFFFFFFF {
		return fmt.Errorf("%w: nonce", errNotProtocol)
	}
	meta = meta[n:]
	body := b[:start]
	prevEnd := 0
	for len(meta) > 0 {
		off, n1, err := ReadULEB128(meta)
		if err != nil {
			return fmt.Errorf("%w: range offset", errNotProtocol)
		}
		size, n2, err := ReadULEB128(meta[n1:])
		if err != nil {
			return fmt.Errorf("%w: range size", errNotProtocol)
		}
		meta = meta[n1+n2:]
		if off < uint64(prevEnd) || off > uint64(len(body)) || size > uint64(len(body))-off || len(f.Ranges) == maxRanges {
			return fmt.Errorf("%w: range %d+%d", errNotProtocol, off, size)
		}
		prevEnd = int(off + size)
		f.Ranges = append(f.Ranges, Range{Offset: int(off), Size: int(size)})
	}
	f.Body, f.Tag, f.Nonce = body, b[start:start+TagSize], uint32(nonce)
	return nil
}

// appendTrailer appends tag, nonce, no ranges, the size byte and the marker.
func appendTrailer(b, tag []byte, nonce uint32) []byte {
	start := len(b)
	b = append(b, tag[:TagSize]...)
	b = AppendULEB128(b, uint64(nonce))
	supp := len(b) - start + 1 + markerSize
	return append(b, byte(supp), 0xFA, 0xFA)
}

// Package tls is the TLS presentation-language codec used by MLS
// (RFC 9420 §2.1.2): big-endian integers, variable-length vectors with the
// MLS varint length prefix, and optional values.
//
// Writers append to a caller-owned slice. The Reader keeps the first error
// (sticky) so that a decoder can read a whole struct and check Err once.
//
//	varint:  00xxxxxx                      1 byte,  value < 64
//	         01xxxxxx xxxxxxxx             2 bytes, value < 16384
//	         10xxxxxx xxxxxxxx x16         4 bytes, value < 2^30
//
// The encoding must be minimal (RFC 9420 §2.1.2); the Reader rejects longer forms.
package tls

import (
	"encoding/binary"
	"errors"
	"fmt"
)

var (
	errShort      = errors.New("tls: truncated input")
	errNonMinimal = errors.New("tls: non-minimal varint")
	errVarintBig  = errors.New("tls: invalid varint prefix")
	errTrailing   = errors.New("tls: trailing bytes")
	errOptional   = errors.New("tls: invalid optional flag")
)

// MaxVarint is the largest length a varint can hold.
const MaxVarint = 1<<30 - 1

// AppendVarint appends the minimal MLS varint encoding of n.
// It panics if n is negative or larger than MaxVarint (a programming error).
func AppendVarint(b []byte, n int) []byte {
	switch {
	case n < 0 || n > MaxVarint:
		panic(fmt.Sprintf("tls: varint out of range: %d", n))
	case n < 1<<6:
		return append(b, byte(n))
	case n < 1<<14:
		return append(b, 0x40|byte(n>>8), byte(n))
	default:
		return append(b, 0x80|byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
}

// AppendVec appends v prefixed with its varint length.
func AppendVec(b, v []byte) []byte {
	return append(AppendVarint(b, len(v)), v...)
}

// AppendU8 appends one byte.
func AppendU8(b []byte, v uint8) []byte { return append(b, v) }

// AppendU16 appends a big-endian uint16.
func AppendU16(b []byte, v uint16) []byte { return binary.BigEndian.AppendUint16(b, v) }

// AppendU32 appends a big-endian uint32.
func AppendU32(b []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(b, v) }

// AppendU64 appends a big-endian uint64.
func AppendU64(b []byte, v uint64) []byte { return binary.BigEndian.AppendUint64(b, v) }

// AppendBool appends an optional presence flag (0 or 1).
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// AppendNested appends a vector whose body is produced by fn. The body is
// built in a scratch slice and then length-prefixed.
func AppendNested(b []byte, fn func([]byte) []byte) []byte {
	return AppendVec(b, fn(nil))
}

// Reader decodes TLS structures from a byte slice. The zero Reader is empty.
// Slices returned by Reader alias the input; callers that keep them beyond the
// input's lifetime must copy.
type Reader struct {
	b   []byte
	err error
}

// NewReader returns a Reader over b. It does not copy b.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Err returns the first decoding error, if any.
func (r *Reader) Err() error { return r.err }

// Len returns the number of unread bytes.
func (r *Reader) Len() int { return len(r.b) }

// Rest returns the unread bytes without consuming them.
func (r *Reader) Rest() []byte { return r.b }

// Fail records err as the reader's error unless one is already set.
func (r *Reader) Fail(err error) {
	if r.err == nil {
		r.err = err
		r.b = nil
	}
}

// Done returns the first error, or an error if unread bytes remain.
func (r *Reader) Done() error {
	if r.err != nil {
		return r.err
	}
	if len(r.b) != 0 {
		return fmt.Errorf("%w: %d", errTrailing, len(r.b))
	}
	return nil
}

// Bytes consumes n bytes.
func (r *Reader) Bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.b) < n {
		r.Fail(fmt.Errorf("%w: need %d, have %d", errShort, n, len(r.b)))
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

// U8 reads one byte.
func (r *Reader) U8() uint8 {
	b := r.Bytes(1)
	if b == nil {
		return 0
	}
	return b[0]
}

// U16 reads a big-endian uint16.
func (r *Reader) U16() uint16 {
	b := r.Bytes(2)
	if b == nil {
		return 0
	}
	return binary.BigEndian.Uint16(b)
}

// U32 reads a big-endian uint32.
func (r *Reader) U32() uint32 {
	b := r.Bytes(4)
	if b == nil {
		return 0
	}
	return binary.BigEndian.Uint32(b)
}

// U64 reads a big-endian uint64.
func (r *Reader) U64() uint64 {
	b := r.Bytes(8)
	if b == nil {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// Varint reads a minimal MLS varint.
func (r *Reader) Varint() int {
	if r.err != nil {
		return 0
	}
	if len(r.b) == 0 {
		r.Fail(fmt.Errorf("%w: varint", errShort))
		return 0
	}
	p := r.b[0] >> 6
	switch p {
	case 0:
		return int(r.U8())
	case 1:
		v := int(r.U16() & 0x3fff)
		if r.err == nil && v < 1<<6 {
			r.Fail(fmt.Errorf("%w: %d in 2 bytes", errNonMinimal, v))
		}
		return v
	case 2:
		v := int(r.U32() & 0x3fffffff)
		if r.err == nil && v < 1<<14 {
			r.Fail(fmt.Errorf("%w: %d in 4 bytes", errNonMinimal, v))
		}
		return v
	default:
		r.Fail(fmt.Errorf("%w: %#x", errVarintBig, r.b[0]))
		return 0
	}
}

// Vec reads a varint-length-prefixed byte vector.
func (r *Reader) Vec() []byte {
	n := r.Varint()
	if r.err != nil {
		return nil
	}
	b := r.Bytes(n)
	if b == nil && r.err == nil {
		return []byte{}
	}
	return b
}

// Sub reads a varint-length-prefixed vector and returns a Reader over it.
// Errors inside the sub-reader must be propagated with Join.
func (r *Reader) Sub() *Reader {
	return &Reader{b: r.Vec(), err: r.err}
}

// Join copies sub's error (including unread trailing bytes) into r.
func (r *Reader) Join(sub *Reader) {
	if err := sub.Done(); err != nil {
		r.Fail(err)
	}
}

// Bool reads an optional presence flag.
func (r *Reader) Bool() bool {
	v := r.U8()
	if v > 1 {
		r.Fail(fmt.Errorf("%w: %d", errOptional, v))
	}
	return v == 1
}

// Clone returns a copy of b (nil stays nil).
func Clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

package tls

import (
	"bytes"
	"testing"
)

func TestVarint(t *testing.T) {
	tests := []struct {
		n    int
		wire []byte
	}{
		{0, []byte{0}}, {63, []byte{0x3f}}, {64, []byte{0x40, 0x40}}, {65, []byte{0x40, 0x41}},
		{16383, []byte{0x7f, 0xff}}, {16384, []byte{0x80, 0, 0x40, 0}}, {MaxVarint, []byte{0xbf, 0xff, 0xff, 0xff}},
	}
	for _, c := range tests {
		if got := AppendVarint(nil, c.n); !bytes.Equal(got, c.wire) {
			t.Errorf("encode %d: %x", c.n, got)
		}
		r := NewReader(c.wire)
		if n := r.Varint(); n != c.n || r.Done() != nil {
			t.Errorf("decode %x: %d %v", c.wire, n, r.Err())
		}
	}
	for _, bad := range [][]byte{{0x40, 0x3f}, {0x80, 0, 0x3f, 0xff}, {0xc0}, {0x40}, {}} {
		r := NewReader(bad)
		r.Varint()
		if r.Err() == nil {
			t.Errorf("%x accepted", bad)
		}
	}
}

func TestReaderSticky(t *testing.T) {
	r := NewReader([]byte{1, 2, 3})
	if r.U16() != 0x0102 {
		t.Fatal("u16")
	}
	r.U32() // short
	if r.Err() == nil || r.U8() != 0 || r.Vec() != nil {
		t.Fatal("error not sticky")
	}
	r = NewReader(AppendVec(AppendVec(nil, []byte("ab")), nil))
	if string(r.Vec()) != "ab" || len(r.Vec()) != 0 || r.Done() != nil {
		t.Fatal("vec")
	}
	r = NewReader([]byte{2})
	if r.Bool(); r.Err() == nil {
		t.Fatal("optional flag 2 accepted")
	}
}

// FuzzReader: reading never panics, and a decoded vector re-encodes to
// the bytes consumed.
func FuzzReader(f *testing.F) {
	f.Add([]byte{0x40, 0x41})
	f.Add([]byte{0x02, 'a', 'b'})
	f.Add([]byte{0xbf, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewReader(b)
		v := r.Vec()
		if r.Err() == nil {
			used := len(b) - r.Len()
			if !bytes.Equal(AppendVec(nil, v), b[:used]) {
				t.Fatalf("round trip %x", b[:used])
			}
		}
	})
}

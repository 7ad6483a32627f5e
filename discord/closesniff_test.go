package discord

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// frame builds a server frame (unmasked unless mask is set).
func frame(opcode byte, payload []byte, mask []byte) []byte {
	b := []byte{0x80 | opcode}
	m := byte(0)
	if mask != nil {
		m = 0x80
	}
	switch {
	case len(payload) < 126:
		b = append(b, m|byte(len(payload)))
	case len(payload) < 1<<16:
		b = append(b, m|126)
		b = binary.BigEndian.AppendUint16(b, uint16(len(payload)))
	default:
		b = append(b, m|127)
		b = binary.BigEndian.AppendUint64(b, uint64(len(payload)))
	}
	if mask != nil {
		b = append(b, mask...)
		p := bytes.Clone(payload)
		for i := range p {
			p[i] ^= mask[i%4]
		}
		payload = p
	}
	return append(b, payload...)
}

func closePayload(code int, reason string) []byte {
	return append(binary.BigEndian.AppendUint16(nil, uint16(code)), reason...)
}

const upgrade = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"

func TestCloseSniffer(t *testing.T) {
	text := frame(1, []byte(`{"op":10,"d":{"heartbeat_interval":41250}}`), nil)
	big := frame(1, bytes.Repeat([]byte("x"), 70000), nil)
	mid := frame(2, bytes.Repeat([]byte("y"), 300), nil)
	tests := []struct {
		name   string
		stream []byte
		want   []int
	}{
		{"close 4000 after data", cat([]byte(upgrade), text, mid, big, frame(opClose, closePayload(4000, "Unknown error"), nil)), []int{4000}},
		{"masked close", cat([]byte(upgrade), frame(opClose, closePayload(4009, ""), []byte{1, 2, 3, 4})), []int{4009}},
		{"close without code", cat([]byte(upgrade), frame(opClose, nil, nil)), nil},
		{"no close", cat([]byte(upgrade), text), nil},
		{"code split across reads", cat([]byte(upgrade), frame(opClose, closePayload(1012, "restart"), nil)), []int{1012}},
		{"oversized control frame stops", cat([]byte(upgrade), []byte{0x88, 126, 0x01, 0x00}, frame(opClose, closePayload(4000, ""), nil)), nil},
	}
	for _, tt := range tests {
		for _, chunk := range []int{1, 3, 7, 4096} {
			var got []int
			s := &closeSniffer{onClose: func(c int) { got = append(got, c) }}
			for p := tt.stream; len(p) > 0; {
				n := min(chunk, len(p))
				s.feed(p[:n])
				p = p[n:]
			}
			if !equal(got, tt.want) {
				t.Errorf("%s (reads of %d): codes %v, want %v", tt.name, chunk, got, tt.want)
			}
		}
	}
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func FuzzCloseSniffer(f *testing.F) {
	f.Add([]byte(upgrade+"\x81\x02{}\x88\x02\x0f\xa0"), 3)
	f.Add([]byte(upgrade+"\x88\xfe\xff\xff"), 1)
	f.Add([]byte("garbage\r\n\r\n\xff\xff\xff"), 2)
	f.Fuzz(func(t *testing.T, stream []byte, chunk int) {
		if chunk < 1 {
			chunk = 1
		}
		var whole, split []int
		a := &closeSniffer{onClose: func(c int) { whole = append(whole, c) }}
		a.feed(stream)
		b := &closeSniffer{onClose: func(c int) { split = append(split, c) }}
		for p := stream; len(p) > 0; {
			n := min(chunk, len(p))
			b.feed(p[:n])
			p = p[n:]
		}
		if !equal(whole, split) {
			t.Fatalf("codes depend on read sizes: %v vs %v", whole, split)
		}
	})
}

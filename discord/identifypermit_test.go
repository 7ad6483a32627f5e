package discord

import (
	"encoding/binary"
	"strings"
	"testing"
)

// clientFrame is a masked client text frame (RFC 6455 §5.2) carrying payload.
func clientFrame(payload string) []byte {
	mask := [4]byte{0x37, 0xfa, 0x21, 0x3d}
	b := []byte{0x81}
	switch n := len(payload); {
	case n < 126:
		b = append(b, 0x80|byte(n))
	case n < 1<<16:
		b = append(b, 0x80|126)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b = append(b, 0x80|127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	b = append(b, mask[:]...)
	for i := range len(payload) {
		b = append(b, payload[i]^mask[i%4])
	}
	return b
}

// TestFrameWatchFindsIdentify: the frames a session writes after the upgrade request are
// told apart by their payload's op, whatever their length, also when several come in one
// write or a frame's payload continues in the next.
func TestFrameWatchFindsIdentify(t *testing.T) {
	upgrade := []byte("GET /?v=10&encoding=json HTTP/1.1\r\nHost: gateway\r\nUpgrade: websocket\r\n\r\n")
	identify := `{"op":2,"d":{"token":"Bot x","properties":{"$os":"linux"},"intents":33281,"shard":[0,2]}}` + "\n"
	long := `{"op":2,"d":{"token":"Bot x","presence":"` + strings.Repeat("a", 70000) + `"}}`
	heartbeat := `{"op":1,"d":12}` + "\n"
	resume := `{"op":6,"d":{"token":"Bot x","session_id":"s","seq":3}}` + "\n"
	cat := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	tests := []struct {
		name   string
		writes [][]byte
		want   []bool // per write: an Identify starts in it
	}{
		{"identify after the upgrade", [][]byte{upgrade, clientFrame(identify)}, []bool{false, true}},
		{"heartbeat and resume are not", [][]byte{upgrade, clientFrame(heartbeat), clientFrame(resume)}, []bool{false, false, false}},
		{"upgrade and identify in one write", [][]byte{cat(upgrade, clientFrame(identify))}, []bool{true}},
		{"identify after a heartbeat in one write", [][]byte{upgrade, cat(clientFrame(heartbeat), clientFrame(identify))}, []bool{false, true}},
		{"a long identify (64-bit length)", [][]byte{upgrade, clientFrame(long)}, []bool{false, true}},
		{"payload split across writes, then a heartbeat", func() [][]byte {
			f := clientFrame(identify)
			return [][]byte{upgrade, f[:20], f[20:], clientFrame(heartbeat)}
		}(), []bool{false, true, false, false}},
		{"an op 2 inside a payload is not a frame", [][]byte{upgrade, clientFrame(`{"op":1,"d":{"op":2,}}`)}, []bool{false, false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var w frameWatch
			for i, b := range tc.writes {
				if got := w.identifyStarts(b); got != tc.want[i] {
					t.Errorf("write %d: identify starts = %v, want %v", i, got, tc.want[i])
				}
			}
		})
	}
}

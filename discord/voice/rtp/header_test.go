package rtp

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"reflect"
	"testing"
)

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestHeaderUnmarshal(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Header
		wantN   int
		wantErr bool
	}{
		{
			// Captured from @discordjs/voice 0.19.2 (discord-clients.md §3.3).
			name:  "djs-captured",
			in:    "8078b40ae2902c88000003e9" + "aabbcc",
			want:  Header{PayloadType: 120, SequenceNumber: 0xb40a, Timestamp: 0xe2902c88, SSRC: 1001, CSRC: []uint32{}},
			wantN: 12,
		},
		{
			name: "csrc-and-extension",
			in:   "b2f80001" + "00000002" + "00000003" + "0000000a" + "0000000b" + "bede0002" + "11223344",
			want: Header{Padding: true, Extension: true, Marker: true, PayloadType: 120, SequenceNumber: 1, Timestamp: 2, SSRC: 3,
				CSRC: []uint32{10, 11}, ExtensionProfile: 0xBEDE, ExtensionLength: 2},
			wantN: 24,
		},
		{name: "short", in: "8078b40a", wantErr: true},
		{name: "version-1", in: "4078b40ae2902c88000003e9", wantErr: true},
		{name: "csrc-truncated", in: "8378b40ae2902c88000003e90000", wantErr: true},
		{name: "ext-preamble-truncated", in: "9078b40ae2902c88000003e9bede", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h Header
			n, err := h.Unmarshal(mustHex(t, tt.in))
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Unmarshal: want error, got n=%d %+v", n, h)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n != tt.wantN {
				t.Errorf("n = %d, want %d", n, tt.wantN)
			}
			if !equalHeader(h, tt.want) {
				t.Errorf("got %+v\nwant %+v", h, tt.want)
			}
		})
	}
}

func TestHeaderReuseResetsFields(t *testing.T) {
	var h Header
	full := mustHex(t, "b2f80001"+"00000002"+"00000003"+"0000000a"+"0000000b"+"bede0002")
	if _, err := h.Unmarshal(full); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Unmarshal(mustHex(t, "807800050000000600000007")); err != nil {
		t.Fatal(err)
	}
	want := Header{PayloadType: 120, SequenceNumber: 5, Timestamp: 6, SSRC: 7, CSRC: []uint32{}}
	if !equalHeader(h, want) {
		t.Errorf("stale fields after reuse: %+v", h)
	}
}

func TestHeaderRoundTrip(t *testing.T) {
	tests := []Header{
		{PayloadType: 120, SequenceNumber: 65535, Timestamp: 0xffffffff, SSRC: 42, CSRC: []uint32{}},
		{Marker: true, Padding: true, PayloadType: 0x78, SequenceNumber: 7, SSRC: 9, CSRC: []uint32{1, 2, 3}},
		{Extension: true, PayloadType: 120, ExtensionProfile: ExtensionProfileOneByte, ExtensionLength: 3, CSRC: []uint32{}},
	}
	for _, h := range tests {
		buf := make([]byte, h.MarshalSize())
		n, err := h.MarshalTo(buf)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.MarshalTo(buf[:n-1]); !errors.Is(err, io.ErrShortBuffer) {
			t.Errorf("short buffer: err = %v", err)
		}
		var got Header
		m, err := got.Unmarshal(buf)
		if err != nil || m != n {
			t.Fatalf("Unmarshal = %d, %v; want %d", m, err, n)
		}
		if !equalHeader(got, h) {
			t.Errorf("round trip: got %+v want %+v", got, h)
		}
		app, err := h.AppendMarshal([]byte{0xff})
		if err != nil || !bytes.Equal(app[1:], buf) || app[0] != 0xff {
			t.Errorf("AppendMarshal = %x, %v; want ff%x", app, err, buf)
		}
	}
}

func TestIsRTCP(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"80c8000600000001", true},  // SR
		{"81c9000700000001", true},  // RR
		{"80cc000200000001", true},  // APP
		{"80cd000200000001", false}, // 205 (RTPFB) is not in the RTCP range Discord sends
		{"8078000100000000", false}, // Opus RTP
		{"80f8000100000000", false}, // Opus RTP with marker
		{"40c8", false},             // wrong version
		{"80", false},
	}
	for _, tt := range tests {
		if got := IsRTCP(mustHex(t, tt.in)); got != tt.want {
			t.Errorf("IsRTCP(%s) = %t, want %t", tt.in, got, tt.want)
		}
	}
}

func FuzzHeaderUnmarshal(f *testing.F) {
	f.Add(mustHex(f, "8078b40ae2902c88000003e9aabbcc"))
	f.Add(mustHex(f, "b2f8000100000002000000030000000a0000000bbede000211223344"))
	f.Add([]byte{0x8f, 0x78})
	f.Fuzz(func(t *testing.T, data []byte) {
		var h Header
		n, err := h.Unmarshal(data)
		if err != nil {
			return
		}
		if n > len(data) || n != h.MarshalSize() {
			t.Fatalf("n=%d len=%d size=%d", n, len(data), h.MarshalSize())
		}
		out := make([]byte, n)
		if _, err := h.MarshalTo(out); err != nil {
			t.Fatal(err)
		}
		// Everything but the version bits round-trips.
		if !bytes.Equal(out, data[:n]) {
			t.Fatalf("re-marshal %x != %x", out, data[:n])
		}
	})
}

// equalHeader compares headers treating nil and empty CSRC lists alike.
func equalHeader(a, b Header) bool {
	if len(a.CSRC) == 0 && len(b.CSRC) == 0 {
		a.CSRC, b.CSRC = nil, nil
	}
	return reflect.DeepEqual(a, b)
}

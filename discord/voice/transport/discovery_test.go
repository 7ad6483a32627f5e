package transport

import (
	"bytes"
	"encoding/hex"
	"net/netip"
	"testing"
)

func TestDiscoveryRequestLayout(t *testing.T) {
	req := AppendDiscoveryRequest(nil, 0x01020304)
	want := "0001004601020304" + string(bytes.Repeat([]byte("00"), 66))
	if got := hex.EncodeToString(req); got != want || len(req) != DiscoverySize {
		t.Errorf("request = %s (%d bytes)", got, len(req))
	}
}

func TestDiscoveryResponse(t *testing.T) {
	tests := []struct {
		name    string
		pkt     []byte
		want    netip.AddrPort
		wantErr bool
	}{
		{"ipv4", AppendDiscoveryResponse(nil, 9, netip.MustParseAddrPort("203.0.113.7:50004")), netip.MustParseAddrPort("203.0.113.7:50004"), false},
		{"loopback", AppendDiscoveryResponse(nil, 9, netip.MustParseAddrPort("127.0.0.1:1")), netip.MustParseAddrPort("127.0.0.1:1"), false},
		{"request-not-response", AppendDiscoveryRequest(nil, 9), netip.AddrPort{}, true},
		{"short", make([]byte, 73), netip.AddrPort{}, true},
		{"keepalive", AppendKeepalive(nil, 1), netip.AddrPort{}, true},
		{"not-terminated", func() []byte {
			p := AppendDiscoveryResponse(nil, 9, netip.MustParseAddrPort("127.0.0.1:1"))
			for i := 8; i < 72; i++ {
				p[i] = '1'
			}
			return p
		}(), netip.AddrPort{}, true},
		{"garbage-address", func() []byte {
			p := AppendDiscoveryResponse(nil, 9, netip.MustParseAddrPort("127.0.0.1:1"))
			copy(p[8:], "not-an-ip")
			return p
		}(), netip.AddrPort{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ssrc, addr, err := ParseDiscoveryResponse(tt.pkt)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %t", err, tt.wantErr)
			}
			if !tt.wantErr && (addr != tt.want || ssrc != 9) {
				t.Errorf("got %d %v, want 9 %v", ssrc, addr, tt.want)
			}
		})
	}
}

func TestKeepalive(t *testing.T) {
	if got := hex.EncodeToString(AppendKeepalive(nil, 0x0a0b0c0d)); got != "0d0c0b0a00000000" {
		t.Errorf("keepalive = %s", got)
	}
}

func FuzzParseDiscoveryResponse(f *testing.F) {
	f.Add(AppendDiscoveryResponse(nil, 1, netip.MustParseAddrPort("10.0.0.1:1234")))
	f.Add(AppendDiscoveryRequest(nil, 1))
	f.Fuzz(func(t *testing.T, pkt []byte) {
		ssrc, addr, err := ParseDiscoveryResponse(pkt)
		if err != nil {
			return
		}
		again, _, err := ParseDiscoveryResponse(AppendDiscoveryResponse(nil, ssrc, addr))
		if err != nil || again != ssrc {
			t.Fatalf("re-encode of %v failed: %v", addr, err)
		}
	})
}

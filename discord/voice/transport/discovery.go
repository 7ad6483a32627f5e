package transport

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
)

// DiscoverySize is the size of IP discovery requests and responses.
const DiscoverySize = 74

const (
	discoveryRequest  = 1
	discoveryResponse = 2
	discoveryLength   = 70
)

var errNotDiscovery = errors.New("transport: not an IP discovery response")

// AppendDiscoveryRequest appends an IP discovery request for ssrc to b.
//
// IP discovery, https://discord.com/developers/docs/topics/voice-connections#ip-discovery
// (all big-endian):
//
//	| type u16 (1 request, 2 response) | length u16 = 70 | ssrc u32 |
//	| address: 64 bytes, NUL-terminated ASCII in the response | port u16 |
func AppendDiscoveryRequest(b []byte, ssrc uint32) []byte {
	b = binary.BigEndian.AppendUint16(b, discoveryRequest)
	b = binary.BigEndian.AppendUint16(b, discoveryLength)
	b = binary.BigEndian.AppendUint32(b, ssrc)
	return append(b, make([]byte, 66)...)
}

// AppendDiscoveryResponse appends an IP discovery response (what the voice
// server sends back) to b. addr must be an IPv4 or IPv6 address.
func AppendDiscoveryResponse(b []byte, ssrc uint32, addr netip.AddrPort) []byte {
	b = binary.BigEndian.AppendUint16(b, discoveryResponse)
	b = binary.BigEndian.AppendUint16(b, discoveryLength)
	b = binary.BigEndian.AppendUint32(b, ssrc)
	var a [64]byte
	copy(a[:63], addr.Addr().String())
	b = append(b, a[:]...)
	return binary.BigEndian.AppendUint16(b, addr.Port())
}

// ParseDiscoveryResponse parses an IP discovery response and returns the
// SSRC and the external address it reports.
func ParseDiscoveryResponse(pkt []byte) (ssrc uint32, addr netip.AddrPort, err error) {
	if len(pkt) != DiscoverySize {
		return 0, addr, fmt.Errorf("%w: %d bytes, want %d", errNotDiscovery, len(pkt), DiscoverySize)
	}
	if t, l := binary.BigEndian.Uint16(pkt), binary.BigEndian.Uint16(pkt[2:]); t != discoveryResponse || l != discoveryLength {
		return 0, addr, fmt.Errorf("%w: type %d length %d", errNotDiscovery, t, l)
	}
	ssrc = binary.BigEndian.Uint32(pkt[4:])
	field := pkt[8:72]
	end := bytes.IndexByte(field, 0)
	if end < 0 {
		return 0, addr, fmt.Errorf("%w: address not NUL-terminated", errNotDiscovery)
	}
	ip, err := netip.ParseAddr(string(field[:end]))
	if err != nil {
		return 0, addr, fmt.Errorf("%w: address: %w", errNotDiscovery, err)
	}
	return ssrc, netip.AddrPortFrom(ip, binary.BigEndian.Uint16(pkt[72:])), nil
}

// KeepaliveSize is the size of a UDP keepalive.
const KeepaliveSize = 8

// AppendKeepalive appends the UDP keepalive @discordjs/voice sends every
// 5 s: LE32(counter) followed by four zero bytes. It is undocumented and the
// server need not answer; receivers ignore packets of 8 bytes or fewer.
func AppendKeepalive(b []byte, counter uint32) []byte {
	b = binary.LittleEndian.AppendUint32(b, counter)
	return append(b, 0, 0, 0, 0)
}

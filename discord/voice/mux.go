package voice

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"

	"github.com/banterbot/banter/discord/voice/rtp"
	"github.com/banterbot/banter/discord/voice/transport"
	"golang.org/x/net/ipv4"
)

// udpMux is a SendClock's shared UDP socket: every attached connection
// sends through it (the clock batches their frames into one sendmmsg) and
// one goroutine reads it for all of them, handing each datagram to the
// connection it belongs to: by the voice server's address, then, when
// several connections talk to the same server, by SSRC (ours in IP
// discovery responses, the speaker's in RTP).
type udpMux struct {
	conn *net.UDPConn
	pc   *ipv4.PacketConn
	wg   sync.WaitGroup

	mu     sync.RWMutex
	byAddr map[netip.AddrPort][]*Conn
}

func newUDPMux(addr string) (*udpMux, error) {
	la, err := net.ResolveUDPAddr("udp4", addr)
	if err != nil {
		return nil, fmt.Errorf("shared socket %q: %w", addr, err)
	}
	uc, err := net.ListenUDP("udp4", la)
	if err != nil {
		return nil, fmt.Errorf("shared socket: %w", err)
	}
	m := &udpMux{conn: uc, pc: ipv4.NewPacketConn(uc), byAddr: map[netip.AddrPort][]*Conn{}}
	m.wg.Add(1)
	go m.read()
	return m, nil
}

func (m *udpMux) close() {
	m.conn.Close()
	m.wg.Wait()
}

func (m *udpMux) attach(c *Conn, server netip.AddrPort) {
	m.mu.Lock()
	m.byAddr[server] = append(m.byAddr[server], c)
	m.mu.Unlock()
}

func (m *udpMux) detach(c *Conn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cs := m.byAddr[c.server]
	for i, x := range cs {
		if x == c {
			cs = append(cs[:i], cs[i+1:]...)
			break
		}
	}
	if len(cs) == 0 {
		delete(m.byAddr, c.server)
	} else {
		m.byAddr[c.server] = cs
	}
}

func (m *udpMux) write(b []byte, to netip.AddrPort) error {
	_, err := m.conn.WriteToUDPAddrPort(b, to)
	return err
}

func (m *udpMux) read() {
	defer m.wg.Done()
	buf := make([]byte, 2048)
	for {
		n, from, err := m.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // ICMP errors and the like
		}
		from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		pkt := buf[:n]
		m.mu.RLock()
		m.route(m.byAddr[from], pkt)
		m.mu.RUnlock()
	}
}

// route hands a datagram from a server to the connection it belongs to.
// A speaker's SSRC is known to one connection per server in practice (a
// user is in one voice channel at a time); when several know it (two of
// our connections in one channel), each tries to authenticate it in turn.
func (m *udpMux) route(cs []*Conn, pkt []byte) {
	switch len(cs) {
	case 0:
		return
	case 1:
		cs[0].receiveShared(pkt)
		return
	}
	if len(pkt) == transport.DiscoverySize && pkt[0] == 0 && pkt[1] == 2 {
		ssrc := binary.BigEndian.Uint32(pkt[4:])
		for _, c := range cs {
			if c.ssrc == ssrc {
				c.receiveShared(pkt)
				return
			}
		}
		return
	}
	if len(pkt) >= rtp.HeaderSize && !rtp.IsRTCP(pkt) {
		ssrc := binary.BigEndian.Uint32(pkt[8:])
		var last *Conn
		for _, c := range cs {
			if c.lookup(ssrc) == nil {
				continue
			}
			if last != nil && last.receiveTry(pkt, false) {
				return
			}
			last = c
		}
		if last != nil {
			last.receive(pkt)
			return
		}
	}
	cs[0].receive(pkt) // counted there (unknown SSRC, keepalive echo, RTCP)
}

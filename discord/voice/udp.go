package voice

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/banterbot/banter/discord/voice/gateway"
	"github.com/banterbot/banter/discord/voice/rtp"
	"github.com/banterbot/banter/discord/voice/transport"
)

// dialUDP opens the media socket to Ready's ip:port and runs IP discovery.
func (c *Conn) dialUDP(ctx context.Context, ready gateway.ReadyEvent) (netip.AddrPort, error) {
	ip, err := netip.ParseAddr(ready.IP)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("voice: ready: ip %q: %w", ready.IP, err)
	}
	c.server = netip.AddrPortFrom(ip.Unmap(), ready.Port)
	if c.clock != nil && c.clock.mux != nil && c.server.Addr().Is4() {
		c.shared, c.serverUDP = true, net.UDPAddrFromAddrPort(c.server)
		c.discovered = make(chan netip.AddrPort, 1)
		c.clock.mux.attach(c, c.server)
	} else {
		c.udp, err = net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(netip.AddrPortFrom(ip, ready.Port)))
		if err != nil {
			return netip.AddrPort{}, fmt.Errorf("voice: dial udp: %w", err)
		}
	}
	ext, err := c.discover(ctx)
	if err != nil {
		return netip.AddrPort{}, err
	}
	return ext, nil
}

// writeUDP sends a datagram to the voice server.
func (c *Conn) writeUDP(b []byte) error {
	if c.shared {
		return c.clock.mux.write(b, c.server)
	}
	_, err := c.udp.Write(b)
	return err
}

// discoverShared is IP discovery on the clock's shared socket: the mux
// hands the response over.
func (c *Conn) discoverShared(ctx context.Context, req []byte) (netip.AddrPort, error) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case addr := <-c.discovered:
			return addr, nil
		case <-ctx.Done():
			return netip.AddrPort{}, fmt.Errorf("voice: ip discovery: %w", ctx.Err())
		case <-t.C:
			if err := c.writeUDP(req); err != nil {
				return netip.AddrPort{}, fmt.Errorf("voice: ip discovery: %w", err)
			}
			t.Reset(500 * time.Millisecond)
		}
	}
}

// receiveShared takes a datagram from the shared socket's reader.
func (c *Conn) receiveShared(pkt []byte) {
	if len(pkt) == transport.DiscoverySize && pkt[0] == 0 && pkt[1] == 2 {
		if ssrc, addr, err := transport.ParseDiscoveryResponse(pkt); err == nil && ssrc == c.ssrc {
			select {
			case c.discovered <- addr:
				c.m.in()
				return
			default:
			}
		}
	}
	c.receive(pkt)
}

// discover runs IP discovery, retrying every 500 ms, ignoring other packets.
func (c *Conn) discover(ctx context.Context) (netip.AddrPort, error) {
	req := transport.AppendDiscoveryRequest(nil, c.ssrc)
	if c.shared {
		return c.discoverShared(ctx, req)
	}
	buf := make([]byte, 1500)
	defer c.udp.SetReadDeadline(time.Time{})
	for {
		if _, err := c.udp.Write(req); err != nil {
			return netip.AddrPort{}, fmt.Errorf("voice: ip discovery: %w", err)
		}
		deadline := time.Now().Add(500 * time.Millisecond)
		if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		c.udp.SetReadDeadline(deadline)
		for {
			n, err := c.udp.Read(buf)
			if errors.Is(err, os.ErrDeadlineExceeded) {
				break
			}
			if err != nil {
				// ICMP port unreachable and the like: retry after the deadline.
				if ctx.Err() != nil {
					break
				}
				continue
			}
			c.m.in()
			ssrc, addr, err := transport.ParseDiscoveryResponse(buf[:n])
			if err == nil && ssrc == c.ssrc {
				return addr, nil
			}
		}
		if err := ctx.Err(); err != nil {
			return netip.AddrPort{}, fmt.Errorf("voice: ip discovery: %w", err)
		}
	}
}

func (c *Conn) keepalive() {
	defer c.wg.Done()
	t := time.NewTicker(c.cfg.KeepaliveInterval)
	defer t.Stop()
	var n uint32
	buf := make([]byte, 0, transport.KeepaliveSize)
	for {
		buf = transport.AppendKeepalive(buf[:0], n)
		n++
		if err := c.writeUDP(buf); err != nil && c.ctx.Err() != nil {
			return
		}
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (c *Conn) readUDP() {
	defer c.wg.Done()
	buf := make([]byte, 2048)
	for {
		n, err := c.udp.Read(buf)
		if err != nil {
			if c.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			continue // e.g. ECONNREFUSED from an ICMP error
		}
		c.receive(buf[:n])
	}
}

// receive runs one datagram through the receive path: filter, parse, SSRC
// lookup, transport decrypt, E2EE decrypt, sequence tracking, hand-off. It
// never blocks and never allocates in steady state; every outcome is counted.
func (c *Conn) receive(pkt []byte) { c.receiveTry(pkt, true) }

// receiveTry is receive that, with final false, neither counts nor
// handles a packet that fails transport authentication and reports false
// (the shared socket then tries the next connection that knows the SSRC).
func (c *Conn) receiveTry(pkt []byte, final bool) bool {
	c.m.in()
	if len(pkt) <= transport.KeepaliveSize {
		c.m.drop(dropShort) // keepalive echo or runt
		return true
	}
	if len(pkt) == transport.DiscoverySize && pkt[0] == 0 && pkt[1] == 2 {
		c.m.drop(dropDiscovery) // a late IP discovery response
		return true
	}
	if rtp.IsRTCP(pkt) {
		c.m.drop(dropRTCP)
		return true
	}
	if _, err := c.recvHdr.Unmarshal(pkt); err != nil {
		c.m.malformedPacket()
		return true
	}
	if c.recvHdr.PayloadType != rtp.PayloadTypeOpus {
		c.m.drop(dropNotOpus)
		return true
	}
	st := c.lookup(c.recvHdr.SSRC)
	if st == nil {
		c.m.drop(dropUnknownSSRC)
		return true
	}
	plain, err := c.recvCipher.Open(c.recvBuf, &c.recvHdr, pkt)
	if err != nil {
		if !final && errors.Is(err, transport.ErrDecrypt) {
			return false
		}
		if errors.Is(err, transport.ErrDecrypt) {
			c.m.decryptFailed(false)
		} else {
			c.m.malformedPacket()
		}
		return true
	}
	st.mu.Lock()
	v := st.track.check(c.recvHdr.SequenceNumber)
	st.mu.Unlock()
	switch v {
	case seqDuplicate:
		c.m.drop(dropDuplicate)
		return true
	case seqTooOld:
		c.m.drop(dropTooOld)
		return true
	}
	var opus []byte
	if c.e2ee != nil {
		if opus, err = c.e2ee.DecryptOpus(st.UserID, st.buffer(), plain); err != nil {
			c.m.decryptFailed(true)
			return true
		}
	} else {
		opus = append(st.buffer(), plain...)
	}
	c.deliver(st, opus)
	return true
}

func (c *Conn) lookup(ssrc uint32) *Stream {
	c.mu.RLock()
	st := c.bySSRC[ssrc]
	c.mu.RUnlock()
	return st
}

// deliver tracks the sequence number and hands the frame to the consumer.
func (c *Conn) deliver(st *Stream, opus []byte) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed { // the user left (op 13) while this packet was in flight
		c.m.drop(dropUnknownSSRC)
		return
	}
	v, gap, lost := st.track.update(c.recvHdr.SequenceNumber)
	c.m.addLost(lost)
	switch v {
	case seqDuplicate:
		c.m.drop(dropDuplicate)
		return
	case seqTooOld:
		c.m.drop(dropTooOld)
		return
	}
	f := Frame{
		UserID: st.UserID, SSRC: st.SSRC, Sequence: c.recvHdr.SequenceNumber,
		Timestamp: c.recvHdr.Timestamp, Lost: gap, Opus: opus,
	}
	select {
	case st.frames <- f:
		st.pos = (st.pos + 1) % len(st.ring)
	default:
		c.m.drop(dropSlowConsumer)
	}
}

// mapSSRC records op 5's SSRC → user mapping, starting a Stream.
func (c *Conn) mapSSRC(userID string, ssrc uint32) {
	c.mu.Lock()
	if old := c.bySSRC[ssrc]; old != nil {
		if old.UserID == userID {
			c.mu.Unlock()
			return
		}
		c.endStreamLocked(ssrc, old)
	}
	st := newStream(userID, ssrc, c.cfg.StreamDepth)
	c.bySSRC[ssrc] = st
	c.mu.Unlock()
	select {
	case c.streams <- st:
	default:
		c.log.Warn("voice: stream announcement dropped (consumer behind)", "user", userID, "ssrc", ssrc)
	}
}

// userLeft ends the user's streams (op 13).
func (c *Conn) userLeft(userID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.connected, userID)
	for ssrc, st := range c.bySSRC {
		if st.UserID == userID {
			c.endStreamLocked(ssrc, st)
		}
	}
}

// endStreamLocked removes and closes a stream, counting the loss still in
// its window. c.mu must be held.
func (c *Conn) endStreamLocked(ssrc uint32, st *Stream) {
	delete(c.bySSRC, ssrc)
	st.mu.Lock()
	if !st.closed {
		c.m.addLost(st.track.flush())
		st.closed = true
		close(st.frames)
		close(st.done)
	}
	st.mu.Unlock()
}

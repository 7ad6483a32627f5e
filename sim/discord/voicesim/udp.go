package voicesim

import (
	"container/heap"
	"encoding/binary"
	"errors"
	"net"
	"time"
)

// udpScratch holds the UDP loop's reusable buffers; only the UDP loop
// goroutine touches it.
type udpScratch struct {
	nonce   [24]byte
	plain   []byte
	out     []byte
	targets []target
	held    delayLine
	heldSeq uint64
}

// delayed is a datagram a fault's Delay or Jitter holds: one the server received (to == nil:
// processed when due, as if it arrived then), or one the forwarding unit sends to.
type delayed struct {
	at   time.Time
	seq  uint64 // order of holding, for equal times
	pkt  []byte
	from *net.UDPAddr
	to   *net.UDPAddr
}

// delayLine is the datagrams held, earliest due first (container/heap).
type delayLine []delayed

func (d delayLine) Len() int { return len(d) }
func (d delayLine) Less(i, j int) bool {
	return d[i].at.Before(d[j].at) || d[i].at.Equal(d[j].at) && d[i].seq < d[j].seq
}
func (d delayLine) Swap(i, j int) { d[i], d[j] = d[j], d[i] }
func (d *delayLine) Push(x any)   { *d = append(*d, x.(delayed)) }
func (d *delayLine) Pop() any {
	old := *d
	x := old[len(old)-1]
	*d = old[:len(old)-1]
	return x
}

// hold puts a copy of pkt on the delay line when fp's Delay or Jitter holds it, and reports
// whether it did.
func (sc *udpScratch) hold(fp *faultPath, pkt []byte, from, to *net.UDPAddr) bool {
	at, ok := fp.release(time.Now())
	if !ok {
		return false
	}
	sc.heldSeq++
	heap.Push(&sc.held, delayed{at: at, seq: sc.heldSeq, pkt: append([]byte(nil), pkt...), from: from, to: to})
	return true
}

// target is one receiver of a forwarded packet.
type target struct {
	tr      *transport
	addr    *net.UDPAddr
	counter uint32
	fp      *faultPath
}

func (s *Server) udpLoop() {
	buf := make([]byte, 64*1024)
	sc := &udpScratch{plain: make([]byte, 0, 64*1024), out: make([]byte, 0, 64*1024)}
	var armed time.Time // the read deadline set
	for {
		// Datagrams a fault held are let go when due, on this goroutine: the read waits no
		// longer than the first of them.
		for len(sc.held) > 0 && !sc.held[0].at.After(time.Now()) {
			d := heap.Pop(&sc.held).(delayed)
			if d.to != nil {
				s.udp.WriteToUDP(d.pkt, d.to)
			} else {
				s.processDatagram(sc, d.pkt, d.from)
			}
		}
		var deadline time.Time
		if len(sc.held) > 0 {
			deadline = sc.held[0].at
		}
		if !deadline.Equal(armed) {
			_ = s.udp.SetReadDeadline(deadline)
			armed = deadline
		}
		n, from, err := s.udp.ReadFromUDP(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // a read error, or the deadline of a held datagram
		}
		s.handleDatagram(sc, buf[:n], from)
	}
}

// handleDatagram applies the sender's ToServer faults (found by the SSRC
// in an RTP-looking packet) and processes what comes through.
func (s *Server) handleDatagram(sc *udpScratch, pkt []byte, from *net.UDPAddr) {
	var fp *faultPath
	if len(pkt) >= rtpHeaderLen && pkt[0]>>6 == rtpVersion && !isRTCP(pkt) {
		ssrc := binary.BigEndian.Uint32(pkt[8:])
		s.mu.Lock()
		if p := s.bySSRC[ssrc]; p != nil {
			fp = s.faults[faultKey{p.key.user, ToServer}]
		}
		s.mu.Unlock()
	}
	if fp == nil {
		s.processDatagram(sc, pkt, from)
		return
	}
	if fp.apply(pkt, func(b []byte) {
		if !sc.hold(fp, b, from, nil) {
			s.processDatagram(sc, b, from)
		}
	}) {
		s.mu.Lock()
		s.stats.Packets++
		s.stats.FaultDropped++
		s.mu.Unlock()
	}
}

// processDatagram classifies one datagram and runs the forwarding unit for
// RTP: decrypt with the sender's key, re-encrypt for every other member
// of the channel with the receiver's key and nonce counter, keeping the
// sender's RTP sequence number, timestamp and SSRC.
func (s *Server) processDatagram(sc *udpScratch, pkt []byte, from *net.UDPAddr) {
	var h rtpHeader
	sender, us, ok := s.admitDatagram(sc, &h, pkt, from)
	if !ok {
		return
	}
	plain, ok := s.openRTP(sc, &h, pkt, sender, us)
	if !ok {
		return
	}
	var sent, dropped uint64
	emit := func(b []byte, addr *net.UDPAddr) {
		if _, err := s.udp.WriteToUDP(b, addr); err == nil {
			sent++
		}
	}
	for _, t := range sc.targets {
		out := t.tr.appendRTP(&sc.nonce, sc.out[:0], h.Seq, h.Timestamp, h.SSRC, plain, t.counter)
		if t.fp == nil {
			emit(out, t.addr)
			continue
		}
		if t.fp.apply(out, func(b []byte) {
			if sc.hold(t.fp, b, nil, t.addr) {
				sent++ // counted when handed to the delay line
				return
			}
			emit(b, t.addr)
		}) {
			dropped++
		}
	}
	// RTP is counted with the packet's forwards, so that a reader who sees
	// RTP reach n also sees every forward of those n packets counted.
	s.mu.Lock()
	s.stats.RTP++
	us.RTP++
	s.stats.Forwarded += sent
	s.stats.FaultDropped += dropped
	s.mu.Unlock()
}

// admitDatagram answers IP discovery, counts keepalives, RTCP, malformed
// packets and unknown SSRCs, and for an RTP packet of a known sender parses
// its header into h and returns the sender and its stats (ok).
func (s *Server) admitDatagram(sc *udpScratch, h *rtpHeader, pkt []byte, from *net.UDPAddr) (*participant, *Stats, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Packets++
	if ssrc, ok := isIPDiscoveryRequest(pkt); ok {
		s.stats.IPDiscovery++
		resp := appendIPDiscoveryResponse(sc.out[:0], ssrc, from.IP.String(), uint16(from.Port))
		s.udp.WriteToUDP(resp, from)
		return nil, nil, false
	}
	switch {
	case len(pkt) <= 8:
		s.stats.Keepalives++
		return nil, nil, false
	case isRTCP(pkt):
		s.stats.RTCP++
		return nil, nil, false
	}
	if err := parseRTPHeader(h, pkt); err != nil || h.PT != opusPT {
		s.stats.Malformed++
		return nil, nil, false
	}
	sender := s.bySSRC[h.SSRC]
	if sender == nil {
		s.stats.UnknownSSRC++
		return nil, nil, false
	}
	us := userStatsLocked(s, sender.key.user)
	us.Packets++
	return sender, us, true
}

// openRTP decrypts the sender's packet and collects in sc.targets who it is
// forwarded to (the others in its channel who can hear it), counting
// failures. The plaintext is in sc.plain.
func (s *Server) openRTP(sc *udpScratch, h *rtpHeader, pkt []byte, sender *participant, us *Stats) ([]byte, bool) {
	s.mu.Lock()
	tr := sender.tr
	s.mu.Unlock()
	var plain []byte
	var err error
	if tr == nil {
		err = errDecrypt
	} else {
		plain, err = tr.open(&sc.nonce, sc.plain[:0], h, pkt)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case errors.Is(err, errDecrypt):
		s.stats.DecryptFailures++
		us.DecryptFailures++
		return nil, false
	case err != nil:
		s.stats.Malformed++
		us.Malformed++
		return nil, false
	case s.parts[sender.key] != sender:
		s.stats.UnknownSSRC++ // the session ended while we decrypted
		return nil, false
	}
	if !sender.spoke && sender.member == nil {
		s.stats.Unannounced++
		us.Unannounced++
	}
	sc.targets = sc.targets[:0]
	for _, q := range s.parts {
		if q == sender || q.key.guild != sender.key.guild || q.sess.ChannelID != sender.sess.ChannelID ||
			q.tr == nil || q.remote == nil || q.sess.SelfDeaf || (q.member == nil && !q.knows[sender.ssrc]) {
			continue
		}
		q.counter++
		sc.targets = append(sc.targets, target{tr: q.tr, addr: q.remote, counter: q.counter, fp: s.faults[faultKey{q.key.user, FromServer}]})
	}
	return plain, true
}

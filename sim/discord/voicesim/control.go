package voicesim

import (
	"errors"
	"fmt"
)

// Stats counts what the server's UDP socket received. Counters only grow.
type Stats struct {
	Packets         uint64 // every datagram
	IPDiscovery     uint64 // IP discovery requests answered
	Keepalives      uint64 // datagrams of 8 bytes or fewer
	RTCP            uint64 // RTCP packets (ignored)
	RTP             uint64 // RTP packets decrypted; counted once the packet's forwards are in Forwarded and FaultDropped
	DecryptFailures uint64 // RTP that failed authentication or had no session key
	Malformed       uint64 // neither of the above: bad version, type, length, padding
	UnknownSSRC     uint64 // well-formed RTP from an SSRC no session owns
	Unannounced     uint64 // subset of RTP: sent before the user's first op 5 Speaking (a client's first packets race its op 5); clients that have not been told the SSRC get none of it
	Forwarded       uint64 // packets sent to receivers by the forwarding unit
	FaultDropped    uint64 // packets dropped by injected loss
}

var errNoSession = errors.New("no voice session")

// CloseVoice closes the user's voice WebSockets with code (any code). For
// resumable codes (below 4000, and 4015) the session survives and the
// client may resume; for every other code the session and its token are
// discarded and the others in the channel get op 13.
func (s *Server) CloseVoice(userID string, code int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	found := false
	for _, p := range s.parts {
		if p.key.user != userID || p.conn == nil {
			continue
		}
		found = true
		if CloseCode(code).Resumable() {
			p.conn.closeWith(CloseCode(code), "voicesim: CloseVoice")
			p.conn = nil
			continue
		}
		s.removeLocked(p, CloseCode(code))
	}
	if !found {
		return fmt.Errorf("voicesim: close voice %s: %w", userID, errNoSession)
	}
	return nil
}

// DropVoice cuts the TCP connection under the user's voice WebSockets
// without a close frame (the client sees 1006 and resumes). The session
// and its buffered messages stay.
func (s *Server) DropVoice(userID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	found := false
	for _, p := range s.parts {
		if p.key.user == userID && p.conn != nil {
			p.conn.drop()
			p.conn = nil
			found = true
		}
	}
	if !found {
		return fmt.Errorf("voicesim: drop voice %s: %w", userID, errNoSession)
	}
	return nil
}

// SendJSON sends a sequenced JSON message (e.g. DAVE ops 21, 22, 24) to the
// user's session in a guild; it is buffered for resume like every
// sequenced message.
func (s *Server) SendJSON(guildID, userID string, op Op, d any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.parts[partKey{guildID, userID}]
	if p == nil || p.member != nil {
		return fmt.Errorf("voicesim: send %v to %s: %w", op, userID, errNoSession)
	}
	s.sendSeqJSONLocked(p, op, d)
	return nil
}

// SendBinary sends a binary frame [seq u16][op][payload] (DAVE ops 25, 27,
// 29, 30) to the user's session in a guild. payload is copied.
func (s *Server) SendBinary(guildID, userID string, op Op, payload []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.parts[partKey{guildID, userID}]
	if p == nil || p.member != nil {
		return fmt.Errorf("voicesim: send %v to %s: %w", op, userID, errNoSession)
	}
	f := p.out.add(func(seq uint16) outFrame {
		return outFrame{binary: true, data: appendServerBinary(nil, seq, op, payload)}
	})
	s.deliverLocked(p, f)
	return nil
}

// Users returns the user ids with a voice session in the channel, members
// included.
func (s *Server) Users(guildID, channelID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for _, p := range s.parts {
		if p.key.guild == guildID && p.sess.ChannelID == channelID {
			ids = append(ids, p.key.user)
		}
	}
	return ids
}

// SSRC returns the SSRC assigned to the user's session in a guild.
func (s *Server) SSRC(guildID, userID string) (uint32, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.parts[partKey{guildID, userID}]
	if p == nil {
		return 0, false
	}
	return p.ssrc, true
}

// Speaking returns the last op 5 speaking flags of the user's session in a
// guild (1 microphone, 2 soundshare, 4 priority), and whether the user
// has sent op 5 at all.
func (s *Server) Speaking(guildID, userID string) (flags int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.parts[partKey{guildID, userID}]
	if p == nil || !p.spoke {
		return 0, false
	}
	return p.speaking, true
}

// Stats returns the server-wide UDP counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// UserStats returns the UDP counters for packets attributed to a sending
// user (by SSRC).
func (s *Server) UserStats(userID string) Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.perUser[userID]; st != nil {
		return *st
	}
	return Stats{}
}

// Heartbeats is what the server saw of a session's heartbeats (op 3).
type Heartbeats struct {
	Received   int // heartbeats from the session's current and earlier (resumed) sockets
	LastSeqAck int // the last one's seq_ack; -1 when it carried none
	// LastSeq is the sequence number of the last sequenced message the
	// server sent the session (0 before the first): what a client that
	// got everything acknowledges.
	LastSeq int
}

// Heartbeats returns the heartbeats the user's session in a guild sent,
// and whether the session exists.
func (s *Server) Heartbeats(guildID, userID string) (Heartbeats, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.parts[partKey{guildID, userID}]
	if p == nil {
		return Heartbeats{}, false
	}
	hb := p.beats
	hb.LastSeq = int(wire(p.out.next - 1))
	return hb, true
}

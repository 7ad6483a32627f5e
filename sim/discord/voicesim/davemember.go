package voicesim

import (
	"encoding/json"

	"github.com/banterbot/banter/discord/dave"
)

// memberJoinDAVELocked runs the client side of a DAVE join for a member:
// op 11 with the users already in the channel, op 4 with the negotiated
// protocol version, then the server's join handling (op 25, proposals).
func (s *Server) memberJoinDAVELocked(p *participant, peers []*participant) {
	c := s.daveCallLocked(p.key.guild, p.sess.ChannelID)
	if c == nil {
		return
	}
	if len(peers) > 0 && p.member.dave != nil {
		ids := make([]string, 0, len(peers))
		for _, q := range peers {
			ids = append(ids, q.key.user)
		}
		s.memberRosterLocked(p, OpClientsConnect, clientsConnectPayload{UserIDs: ids})
	}
	v := s.daveJoinVersionLocked(p)
	if p.member.dave != nil {
		d, _ := json.Marshal(map[string]any{"dave_protocol_version": v})
		s.daveToMemberLocked(c, p, OpSessionDescription, d, false)
	}
	s.daveJoinedLocked(p, v)
}

// memberRosterLocked tells a DAVE member's session who is in the call
// (ops 11 and 13: its recognized users).
func (s *Server) memberRosterLocked(p *participant, op Op, d any) {
	b, err := json.Marshal(d)
	if err != nil {
		return
	}
	s.daveToMemberLocked(nil, p, op, b, false)
}

// DAVE returns the member's DAVE session (nil when the member does not use
// DAVE), for its epoch, epoch authenticator and roster. The server drives
// it; callers must only read from it.
func (m *Member) DAVE() *dave.Session { return m.dave }

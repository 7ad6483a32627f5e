package voicesim

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"net"
	"time"
)

// connHandler holds the read side state of one connection.
type connHandler struct {
	s *Server
	c *wsConn
	p *participant // set by Identify or Resume
}

func (h *connHandler) fail(code CloseCode, reason string) {
	h.s.log.Info("voicesim: closing connection", "code", int(code), "reason", reason)
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	if h.p != nil && !code.Resumable() && h.p.conn == h.c {
		h.s.removeLocked(h.p, code)
		return
	}
	h.c.closeWith(code, reason)
}

func (h *connHandler) readLoop() {
	for {
		if !h.c.isClosing() {
			h.c.ws.SetReadDeadline(time.Now().Add(h.s.opts.HeartbeatTimeout))
		}
		mt, data, err := h.c.ws.ReadMessage()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() && !h.c.isClosing() {
				h.fail(CloseSessionTimeout, "voicesim: heartbeat timeout")
			}
			return
		}
		if h.c.isClosing() {
			continue // drain until the client's close reply or the linger deadline
		}
		f, err := decodeClientFrame(mt, data)
		if err != nil {
			h.fail(CloseDecodeError, err.Error())
			continue
		}
		h.handle(f)
	}
}

func (h *connHandler) handle(f clientFrame) {
	s := h.s
	if f.Binary {
		if h.p == nil {
			h.fail(CloseNotAuthenticated, "binary frame before identify")
			return
		}
		if f.Op != OpMLSKeyPackage && f.Op != OpMLSCommitWelcome {
			h.fail(CloseUnknownOpcode, "unknown binary opcode "+itoa(int(f.Op)))
			return
		}
		body := append([]byte(nil), f.Body...)
		if s.opts.OnBinary != nil {
			s.opts.OnBinary(BinaryMessage{GuildID: h.p.key.guild, UserID: h.p.key.user, Op: f.Op, Payload: body})
		}
		if s.daveEnabled() {
			s.mu.Lock()
			if s.parts[h.p.key] == h.p {
				s.daveInputLocked(h.p, f.Op, body)
			}
			s.mu.Unlock()
		}
		return
	}
	switch f.Op {
	case OpHeartbeat:
		h.heartbeat(f)
		return
	case OpIdentify:
		h.identify(f)
		return
	case OpResume:
		h.resume(f)
		return
	}
	if h.p == nil {
		h.fail(CloseNotAuthenticated, f.Op.String()+" before identify")
		return
	}
	switch f.Op {
	case OpSelectProtocol:
		h.selectProtocol(f)
	case OpSpeaking:
		h.speaking(f)
	case OpDAVETransitionReady, OpMLSInvalidCommitWelcome:
		var p transitionPayload
		if err := decodePayload(f.Op, f.D, &p); err != nil {
			h.fail(CloseDecodeError, err.Error())
			return
		}
		d := append(json.RawMessage(nil), f.D...)
		if s.opts.OnJSON != nil {
			s.opts.OnJSON(JSONMessage{GuildID: h.p.key.guild, UserID: h.p.key.user, Op: f.Op, D: d})
		}
		if s.daveEnabled() {
			s.mu.Lock()
			if s.parts[h.p.key] == h.p {
				s.daveInputLocked(h.p, f.Op, d)
			}
			s.mu.Unlock()
		}
	default:
		h.fail(CloseUnknownOpcode, "unknown opcode "+itoa(int(f.Op)))
	}
}

func (h *connHandler) heartbeat(f clientFrame) {
	var t []byte
	var seqAck = -1
	if len(f.D) > 0 && f.D[0] != '{' {
		t = f.D // pre-v8 style: d is the nonce itself
	} else {
		var p heartbeatPayload
		if err := decodePayload(f.Op, f.D, &p); err != nil {
			h.fail(CloseDecodeError, err.Error())
			return
		}
		t = p.T
		if p.SeqAck != nil {
			seqAck = *p.SeqAck
		}
	}
	h.s.mu.Lock()
	if h.p != nil && h.p.conn == h.c {
		h.p.out.ack(seqAck)
		h.p.beats.Received++
		h.p.beats.LastSeqAck = seqAck
	}
	h.s.mu.Unlock()
	h.c.enqueue(outFrame{data: encodeServerJSON(OpHeartbeatACK, -1, heartbeatACKPayload{T: t})})
}

func (h *connHandler) identify(f clientFrame) {
	s := h.s
	if h.p != nil {
		h.fail(CloseAlreadyAuth, "second identify")
		return
	}
	var id identifyPayload
	if err := decodePayload(f.Op, f.D, &id); err != nil {
		h.fail(CloseDecodeError, err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.auth[id.Token]
	switch {
	case !ok || sess.GuildID != id.ServerID || sess.UserID != id.UserID:
		h.c.closeWith(CloseAuthFailed, "authentication failed")
		return
	case sess.SessionID != id.SessionID:
		h.c.closeWith(CloseSessionInvalid, "session no longer valid")
		return
	case s.opts.RequireDAVE && id.MaxDAVEProtocolVersion < 1:
		h.c.closeWith(CloseDAVERequired, "E2EE/DAVE protocol required")
		return
	}
	key := partKey{sess.GuildID, sess.UserID}
	if old := s.parts[key]; old != nil {
		// A new identify replaces the user's previous session.
		s.removeLocked(old, CloseDisconnected)
		s.auth[sess.Token] = sess
	}
	p := &participant{
		key:     key,
		sess:    sess,
		ssrc:    s.allocSSRCLocked(),
		maxDAVE: id.MaxDAVEProtocolVersion,
		conn:    h.c,
		out:     newSeqBuffer(s.opts.ResumeBuffer),
		knows:   map[uint32]bool{},
	}
	s.parts[key] = p
	s.bySSRC[p.ssrc] = p
	h.p = p
	modes := make([]string, len(s.opts.Modes))
	for i, m := range s.opts.Modes {
		modes[i] = m.String()
	}
	h.c.enqueue(outFrame{data: encodeServerJSON(OpReady, -1, readyPayload{
		SSRC: p.ssrc, IP: "127.0.0.1", Port: s.udpPort, Modes: modes, HeartbeatInterval: 1,
	})})
	for _, q := range s.peersLocked(p) {
		s.sendSeqJSONLocked(q, OpClientsConnect, clientsConnectPayload{UserIDs: []string{p.key.user}})
	}
	s.log.Info("voicesim: identified", "guild", key.guild, "user", key.user, "ssrc", p.ssrc)
}

func (h *connHandler) resume(f clientFrame) {
	s := h.s
	if h.p != nil {
		h.fail(CloseAlreadyAuth, "resume after identify")
		return
	}
	var rp resumePayload
	if err := decodePayload(f.Op, f.D, &rp); err != nil {
		h.fail(CloseDecodeError, err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var p *participant
	for _, q := range s.parts {
		if q.member == nil && q.sess.Token == rp.Token && q.sess.SessionID == rp.SessionID && q.key.guild == rp.ServerID {
			p = q
		}
	}
	if p == nil {
		h.c.closeWith(CloseSessionInvalid, "session no longer valid")
		return
	}
	seqAck := -1
	if rp.SeqAck != nil {
		seqAck = *rp.SeqAck
	}
	frames, err := p.out.since(seqAck)
	if err != nil {
		h.p = p
		p.conn = nil
		s.removeLocked(p, CloseSessionInvalid)
		h.c.closeWith(CloseSessionInvalid, err.Error())
		return
	}
	if p.conn != nil && p.conn != h.c {
		p.conn.drop() // the old socket is dead to the client
	}
	p.conn = h.c
	h.p = p
	h.c.enqueue(outFrame{data: encodeServerJSON(OpResumed, -1, nil)})
	if len(frames) > 0 {
		s.deliverLocked(p, outFrame{batch: frames})
	}
	s.log.Info("voicesim: resumed", "guild", p.key.guild, "user", p.key.user, "replayed", len(frames))
}

func (h *connHandler) selectProtocol(f clientFrame) {
	s := h.s
	var sp selectProtocolPayload
	if err := decodePayload(f.Op, f.D, &sp); err != nil {
		h.fail(CloseDecodeError, err.Error())
		return
	}
	if sp.Protocol != "udp" {
		h.fail(CloseUnknownProtocol, "unknown protocol "+truncate(sp.Protocol, 40))
		return
	}
	mode := ParseMode(sp.Data.Mode)
	offered := false
	for _, m := range s.opts.Modes {
		offered = offered || m == mode
	}
	if !offered {
		h.fail(CloseUnknownEncryption, "unknown encryption mode "+truncate(sp.Data.Mode, 40))
		return
	}
	ip := net.ParseIP(sp.Data.Address)
	if ip == nil || sp.Data.Port <= 0 || sp.Data.Port > 65535 {
		h.fail(CloseBadRequest, "bad address "+truncate(sp.Data.Address, 40)+":"+itoa(sp.Data.Port))
		return
	}
	var key [32]byte
	rand.Read(key[:])
	tr, err := newTransport(mode, key)
	if err != nil {
		h.fail(CloseUnknownEncryption, err.Error())
		return
	}
	var secret [32]int
	for i, b := range key {
		secret[i] = int(b)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := h.p
	p.tr = tr
	p.remote = &net.UDPAddr{IP: ip, Port: sp.Data.Port}
	dv := s.daveJoinVersionLocked(p)
	s.sendSeqJSONLocked(p, OpSessionDescription, sessionDescriptionPayload{
		Mode: mode.String(), SecretKey: secret, DAVEProtocolVersion: dv,
		AudioCodec: "opus", VideoCodec: "H264", MediaSessionID: randomHex(16),
	})
	defer s.daveJoinedLocked(p, dv)
	peers := s.peersLocked(p)
	if len(peers) == 0 {
		return
	}
	ids := make([]string, 0, len(peers))
	for _, q := range peers {
		ids = append(ids, q.key.user)
	}
	s.sendSeqJSONLocked(p, OpClientsConnect, clientsConnectPayload{UserIDs: ids})
	for _, q := range peers {
		if q.spoke || q.member != nil {
			p.knows[q.ssrc] = true
			s.sendSeqJSONLocked(p, OpSpeaking, serverSpeakingPayload{UserID: q.key.user, SSRC: q.ssrc, Speaking: q.speaking})
		}
	}
}

func (h *connHandler) speaking(f clientFrame) {
	s := h.s
	var sp speakingPayload
	if err := decodePayload(f.Op, f.D, &sp); err != nil {
		h.fail(CloseDecodeError, err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := h.p
	if sp.SSRC != p.ssrc {
		// Discord disconnects clients that speak with a foreign SSRC.
		s.removeLocked(p, CloseBadRequest)
		return
	}
	p.speaking = sp.Speaking
	p.spoke = true
	s.announceSpeakingLocked(p)
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	const hexd = "0123456789abcdef"
	out := make([]byte, 2*n)
	for i, v := range b {
		out[2*i], out[2*i+1] = hexd[v>>4], hexd[v&15]
	}
	return string(out)
}

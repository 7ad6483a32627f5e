package discordsim

import (
	"encoding/json"
	"time"
)

// handle acts on one decoded client payload. It returns a close code when
// the connection was closed because of it, else 0.
func (c *gwConn) handle(p clientPayload) CloseCode {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	switch p.Op {
	case OpHeartbeat:
		e := c.eventLocked(GatewayHeartbeat, 0)
		if p.Heartbeat != nil {
			e.Seq = *p.Heartbeat
		}
		if c.withholdACK > 0 {
			c.withholdACK--
		} else {
			e.ACKed = true
			c.sendLocked(encodeOp(OpHeartbeatACK, nil))
		}
		s.recordLocked(e)
		return 0
	case OpIdentify:
		return c.identifyLocked(p.Identify)
	case OpResume:
		return c.resumeLocked(p.Resume)
	}
	if c.sess == nil || c.sess.conn != c {
		c.closeWith(CloseNotAuthenticated, "Not authenticated")
		return CloseNotAuthenticated
	}
	switch p.Op {
	case OpVoiceStateUpdate:
		e := c.eventLocked(GatewayVoiceState, 0)
		// Sent on a shard that does not own the guild, Discord ignores it.
		e.WrongShard = p.Voice != nil && !c.sess.ownsGuild(p.Voice.GuildID)
		s.recordLocked(e)
		if !e.WrongShard {
			s.voiceStateUpdateLocked(c.sess, p.Voice)
		}
	case OpRequestGuildMembers:
		s.requestMembersLocked(c.sess, p.Members)
	}
	return 0
}

// identifyLocked handles Op 2: a new session, READY, then one GUILD_CREATE
// per guild (§4 C, D). After Invalid Session the same socket may identify
// again (discordgo does).
func (c *gwConn) identifyLocked(id *identifyCommand) CloseCode {
	s := c.s
	if c.sess != nil && c.sess.conn == c && !c.sess.invalid {
		c.closeWith(CloseAlreadyAuthenticated, "Already authenticated")
		return CloseAlreadyAuthenticated
	}
	uid, ok := s.tokens[id.Token]
	if !ok {
		c.closeWith(CloseAuthenticationFailed, "Authentication failed")
		return CloseAuthenticationFailed
	}
	if id.Intents == nil || *id.Intents < 0 || *id.Intents&^intentsAll != 0 {
		c.closeWith(CloseInvalidIntents, "Invalid intent(s)")
		return CloseInvalidIntents
	}
	privileged := IntentGuildMembers | IntentGuildPresences | IntentMessageContent
	if *id.Intents&privileged&^s.cfg.privileged != 0 {
		c.closeWith(CloseDisallowedIntents, "Disallowed intent(s)")
		return CloseDisallowedIntents
	}
	shard := id.Shard
	if len(shard) == 0 {
		shard = []int{0, 1}
	}
	if len(shard) != 2 || shard[1] < 1 || shard[0] < 0 || shard[0] >= shard[1] {
		c.closeWith(CloseInvalidShard, "Invalid shard")
		return CloseInvalidShard
	}
	// The session start limit: one Identify per rate-limit key per spacing, for the bot.
	if sp := s.cfg.identifySpacing; sp > 0 && uid == s.bot {
		key := shard[0] % max(s.cfg.maxConcurrency, 1)
		if last, ok := s.lastIdentify[key]; ok && s.now().Sub(last) < sp {
			e := c.eventLocked(GatewayIdentifyRateLimited, 0)
			e.Shard = shard[0]
			s.recordLocked(e)
			c.sendLocked(encodeOp(OpInvalidSession, false))
			return 0
		}
		if s.lastIdentify == nil {
			s.lastIdentify = map[int]time.Time{}
		}
		s.lastIdentify[key] = s.now()
	}
	// A fresh Identify abandons the user's detached sessions of the same shard: their
	// clients identified anew, so nobody resumes them, and keeping them would make every
	// dispatch encode for ghosts.
	for sid, old := range s.sessions {
		if old.user == uid && old.conn == nil && old.shard == shard[0] {
			delete(s.sessions, sid)
		}
	}
	ss := &session{id: randomHex(16), user: uid, intents: *id.Intents, conn: c, shard: shard[0], shardCount: shard[1]}
	s.sessions[ss.id] = ss
	c.sess = ss
	c.compress = id.Compress && !c.zlibStream
	ev := c.eventLocked(GatewayIdentified, 0)
	ev.Shard, ev.ShardCount = ss.shard, ss.shardCount
	switch {
	case c.zlibStream:
		ev.Compression = "zlib-stream"
	case c.compress:
		ev.Compression = "payload"
	}
	s.recordLocked(ev)

	var stubs []wireUnavailableGuild
	var member []*guild
	for _, gid := range s.guildOrder {
		if g := s.guilds[gid]; g.members[uid] != nil && ss.ownsGuild(gid) {
			stubs = append(stubs, wireUnavailableGuild{ID: gid, Unavailable: true})
			member = append(member, g)
		}
	}
	if stubs == nil {
		stubs = []wireUnavailableGuild{}
	}
	empty := []json.RawMessage{}
	ready := struct {
		V                  int                    `json:"v"`
		User               wireSelfUser           `json:"user"`
		Guilds             []wireUnavailableGuild `json:"guilds"`
		SessionID          string                 `json:"session_id"`
		SessionType        string                 `json:"session_type"`
		ResumeGatewayURL   string                 `json:"resume_gateway_url"`
		Application        *readyApplication      `json:"application,omitempty"`
		Shard              []int                  `json:"shard"`
		PrivateChannels    []json.RawMessage      `json:"private_channels"`
		Presences          []json.RawMessage      `json:"presences"`
		Relationships      []json.RawMessage      `json:"relationships"`
		GuildJoinRequests  []json.RawMessage      `json:"guild_join_requests"`
		UserSettings       struct{}               `json:"user_settings"`
		GeoOrderedRTCRegns []string               `json:"geo_ordered_rtc_regions"`
		Auth               struct{}               `json:"auth"`
	}{
		V: 10, User: s.wireSelfUserLocked(uid), Guilds: stubs, SessionID: ss.id, SessionType: "normal",
		ResumeGatewayURL: s.GatewayURL(), Shard: shard, PrivateChannels: empty, Presences: empty,
		Relationships: empty, GuildJoinRequests: empty, GeoOrderedRTCRegns: []string{},
	}
	// Every simulated member that logs in is its own application (id = its
	// user id), as a bot account is on Discord: discord.js builds
	// client.application from READY and fails at login without it.
	ready.Application = &readyApplication{ID: uid, Flags: 0}
	s.dispatchToLocked(ss, "READY", ready, 0)
	for _, g := range member {
		s.dispatchToLocked(ss, "GUILD_CREATE", s.wireGuildCreateLocked(g), IntentGuilds)
	}
	return 0
}

type readyApplication struct {
	ID    UserID `json:"id"`
	Flags int    `json:"flags"`
}

// resumeLocked handles Op 6: replay every dispatch after seq with its
// original number, then RESUMED. An unknown, invalidated or too old
// session gets Invalid Session (d:false) on the same socket.
// https://discord.com/developers/docs/events/gateway#resuming
func (c *gwConn) resumeLocked(r *resumeCommand) CloseCode {
	s := c.s
	ss := s.sessions[r.SessionID]
	uid, tokOK := s.tokens[r.Token]
	ok := ss != nil && tokOK && ss.user == uid && !ss.invalid && r.Seq <= ss.seq
	if ok && r.Seq < ss.seq && (len(ss.replay) == 0 || ss.replay[0].seq > r.Seq+1) {
		ok = false // the window no longer reaches back that far
	}
	if !ok {
		e := c.eventLocked(GatewayResumeRefused, 0)
		e.Session, e.Seq = r.SessionID, r.Seq
		s.recordLocked(e)
		c.sendLocked(encodeOp(OpInvalidSession, false))
		return 0
	}
	if old := ss.conn; old != nil && old != c {
		old.closeWith(CloseUnknownError, "Session resumed elsewhere")
	}
	ss.conn = c
	c.sess = ss
	replayed := 0
	for _, e := range ss.replay {
		if e.seq > r.Seq {
			c.sendLocked(e.payload)
			replayed++
		}
	}
	ss.seq++
	b, err := encodeDispatch(ss.seq, "RESUMED", struct{}{})
	if err == nil {
		c.sendLocked(b)
	}
	ev := c.eventLocked(GatewayResumed, 0)
	ev.Seq, ev.Replayed = r.Seq, replayed
	s.recordLocked(ev)
	return 0
}

// requestMembersLocked answers Op 8 with one GUILD_MEMBERS_CHUNK.
func (s *Server) requestMembersLocked(ss *session, r *requestMembersCommand) {
	var ids []GuildID
	var one GuildID
	if json.Unmarshal(r.GuildID, &one) == nil {
		ids = []GuildID{one}
	} else {
		_ = json.Unmarshal(r.GuildID, &ids)
	}
	for _, gid := range ids {
		g := s.guilds[gid]
		if g == nil || g.members[ss.user] == nil {
			continue
		}
		members := []wireMember{}
		for _, u := range g.memberOrder {
			members = append(members, s.wireMemberLocked(g, u, true))
		}
		chunk := struct {
			GuildID    GuildID      `json:"guild_id"`
			Members    []wireMember `json:"members"`
			ChunkIndex int          `json:"chunk_index"`
			ChunkCount int          `json:"chunk_count"`
			Nonce      string       `json:"nonce,omitempty"`
		}{gid, members, 0, 1, r.Nonce}
		s.dispatchToLocked(ss, "GUILD_MEMBERS_CHUNK", chunk, 0)
	}
}

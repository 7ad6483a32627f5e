package discordsim

import (
	"encoding/json"

	"github.com/banterbot/banter/sim/discord/world"
)

// handle acts on one decoded client payload. It returns a close code when
// the connection was closed because of it, else 0.
func (c *gwConn) handle(p clientPayload) CloseCode {
	g := c.g
	switch p.Op {
	case OpHeartbeat:
		g.mu.Lock()
		defer g.mu.Unlock()
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
		g.recordLocked(e)
		return 0
	case OpIdentify:
		var code CloseCode
		g.world.Read(func(v *world.View) { code = c.identify(v, p.Identify) })
		return code
	case OpResume:
		g.world.Read(func(v *world.View) { c.resume(v, p.Resume) })
		return 0
	}
	g.mu.Lock()
	if c.sess == nil || c.sess.conn != c {
		g.mu.Unlock()
		c.closeWith(CloseNotAuthenticated, "Not authenticated")
		return CloseNotAuthenticated
	}
	ref := sessionRef{id: c.sess.id, user: c.sess.user}
	var voice *voiceStateCommand
	var members *requestMembersCommand
	switch p.Op {
	case OpVoiceStateUpdate:
		e := c.eventLocked(GatewayVoiceState, 0)
		// Sent on a shard that does not own the guild, Discord ignores it.
		e.WrongShard = p.Voice != nil && !c.sess.ownsGuild(p.Voice.GuildID)
		g.recordLocked(e)
		if !e.WrongShard {
			voice = p.Voice
		}
	case OpRequestGuildMembers:
		members = p.Members
	}
	g.mu.Unlock()
	switch {
	case voice != nil && g.onVoiceState != nil:
		g.onVoiceState(ref, voice)
	case members != nil:
		g.world.Read(func(v *world.View) { g.requestMembers(v, ref, members) })
	}
	return 0
}

// identify handles Op 2 inside world.Read: a new session, READY, then one
// GUILD_CREATE per guild (§4 C, D). After Invalid Session the same socket
// may identify again (discordgo does).
func (c *gwConn) identify(v *world.View, id *identifyCommand) CloseCode {
	g := c.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if c.sess != nil && c.sess.conn == c && !c.sess.invalid {
		c.closeWith(CloseAlreadyAuthenticated, "Already authenticated")
		return CloseAlreadyAuthenticated
	}
	uid, ok := v.UserByToken(id.Token)
	if !ok {
		c.closeWith(CloseAuthenticationFailed, "Authentication failed")
		return CloseAuthenticationFailed
	}
	shard, code := g.checkIdentify(id)
	if code != 0 {
		c.closeWith(code, identifyCloseText[code])
		return code
	}
	if !g.identifyAllowedLocked(c, uid == v.Bot(), shard[0]) {
		return 0
	}
	// A fresh Identify abandons the user's detached sessions of the same shard: their
	// clients identified anew, so nobody resumes them, and keeping them would make every
	// dispatch encode for ghosts.
	for sid, old := range g.sessions {
		if old.user == uid && old.conn == nil && old.shard == shard[0] {
			delete(g.sessions, sid)
		}
	}
	ss := &session{id: world.RandomHex(16), user: uid, intents: *id.Intents, conn: c, shard: shard[0], shardCount: shard[1]}
	g.sessions[ss.id] = ss
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
	g.recordLocked(ev)
	g.dispatchToLocked(ss, "READY", g.ready(v, ss, shard), 0)
	for _, gid := range v.Guilds() {
		if ss.sees(v, gid) { // one in an outage stays a stub
			g.dispatchToLocked(ss, "GUILD_CREATE", wireGuildCreateOf(v, gid, ss), IntentGuilds)
		}
	}
	return 0
}

var identifyCloseText = map[CloseCode]string{
	CloseInvalidIntents: "Invalid intent(s)", CloseDisallowedIntents: "Disallowed intent(s)", CloseInvalidShard: "Invalid shard",
}

// checkIdentify checks the intents and shard of an Identify; it returns
// the shard ([id, count]) or the close code the Identify earns.
func (g *gateway) checkIdentify(id *identifyCommand) ([]int, CloseCode) {
	if id.Intents == nil || *id.Intents < 0 || *id.Intents&^intentsAll != 0 {
		return nil, CloseInvalidIntents
	}
	privileged := IntentGuildMembers | IntentGuildPresences | IntentMessageContent
	if *id.Intents&privileged&^g.cfg.privileged != 0 {
		return nil, CloseDisallowedIntents
	}
	shard := id.Shard
	if len(shard) == 0 {
		shard = []int{0, 1}
	}
	if len(shard) != 2 || shard[1] < 1 || shard[0] < 0 || shard[0] >= shard[1] {
		return nil, CloseInvalidShard
	}
	return shard, 0
}

// identifyAllowedLocked applies the session start limit: one Identify per
// rate-limit key per spacing, for the bot. A refused one gets Invalid
// Session on the same socket.
func (g *gateway) identifyAllowedLocked(c *gwConn, bot bool, shard int) bool {
	sp := g.cfg.identifySpacing
	if sp <= 0 || !bot {
		return true
	}
	key := shard % max(g.cfg.maxConcurrency, 1)
	now := g.cfg.now()
	if last, ok := g.lastIdentify[key]; ok && now.Sub(last) < sp {
		e := c.eventLocked(GatewayIdentifyRateLimited, 0)
		e.Shard = shard
		g.recordLocked(e)
		c.sendLocked(encodeOp(OpInvalidSession, false))
		return false
	}
	g.lastIdentify[key] = now
	return true
}

type readyApplication struct {
	ID    UserID `json:"id"`
	Flags int    `json:"flags"`
}

type readyPayload struct {
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
}

// ready is READY: the user, its guilds on this shard as unavailable stubs,
// the session, and the application. Every simulated member that logs in is
// its own application (id = its user id), as a bot account is on Discord:
// discord.js builds client.application from READY and fails at login
// without it.
func (g *gateway) ready(v *world.View, ss *session, shard []int) readyPayload {
	stubs := []wireUnavailableGuild{}
	for _, gid := range v.Guilds() {
		if ss.inGuild(v, gid) {
			stubs = append(stubs, wireUnavailableGuild{ID: gid, Unavailable: true})
		}
	}
	empty := []json.RawMessage{}
	return readyPayload{
		V: 10, User: wireSelfUserOf(v, ss.user), Guilds: stubs, SessionID: ss.id, SessionType: "normal",
		ResumeGatewayURL: g.url(), Application: &readyApplication{ID: ss.user}, Shard: shard,
		PrivateChannels: empty, Presences: empty, Relationships: empty, GuildJoinRequests: empty,
		GeoOrderedRTCRegns: []string{},
	}
}

// resume handles Op 6 inside world.Read: replay every dispatch after seq
// with its original number, then RESUMED. An unknown, invalidated or too
// old session gets Invalid Session (d:false) on the same socket.
// https://discord.com/developers/docs/events/gateway#resuming
func (c *gwConn) resume(v *world.View, r *resumeCommand) {
	g := c.g
	g.mu.Lock()
	defer g.mu.Unlock()
	ss := g.sessions[r.SessionID]
	uid, tokOK := v.UserByToken(r.Token)
	ok := ss != nil && tokOK && ss.user == uid && !ss.invalid && r.Seq <= ss.seq
	if ok && r.Seq < ss.seq && (len(ss.replay) == 0 || ss.replay[0].seq > r.Seq+1) {
		ok = false // the window no longer reaches back that far
	}
	if !ok {
		e := c.eventLocked(GatewayResumeRefused, 0)
		e.Session, e.Seq = r.SessionID, r.Seq
		g.recordLocked(e)
		c.sendLocked(encodeOp(OpInvalidSession, false))
		return
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
	if b, err := encodeDispatch(ss.seq, "RESUMED", struct{}{}); err == nil {
		c.sendLocked(b)
	}
	ev := c.eventLocked(GatewayResumed, 0)
	ev.Seq, ev.Replayed = r.Seq, replayed
	g.recordLocked(ev)
}

// requestMembers answers Op 8 (inside world.Read) with one
// GUILD_MEMBERS_CHUNK per guild.
func (g *gateway) requestMembers(v *world.View, ref sessionRef, r *requestMembersCommand) {
	var ids []GuildID
	var one GuildID
	if json.Unmarshal(r.GuildID, &one) == nil {
		ids = []GuildID{one}
	} else {
		_ = json.Unmarshal(r.GuildID, &ids)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	ss := g.sessions[ref.id]
	if ss == nil {
		return
	}
	for _, gid := range ids {
		gd, ok := v.Guild(gid)
		if !ok || !v.IsMember(gid, ss.user) {
			continue
		}
		members := []wireMember{}
		for _, u := range gd.Members {
			members = append(members, wireMemberOf(v, gd, u, true))
		}
		chunk := struct {
			GuildID    GuildID      `json:"guild_id"`
			Members    []wireMember `json:"members"`
			ChunkIndex int          `json:"chunk_index"`
			ChunkCount int          `json:"chunk_count"`
			Nonce      string       `json:"nonce,omitempty"`
		}{gid, members, 0, 1, r.Nonce}
		g.dispatchToLocked(ss, "GUILD_MEMBERS_CHUNK", chunk, 0)
	}
}

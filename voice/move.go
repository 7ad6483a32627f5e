package voice

import (
	"context"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/discord/perms"
	"github.com/banterbot/banter/store"
)

// Moved by a moderator: someone with Move Members drags the bot to another voice channel of
// the guild. Discord sends the bot's own VOICE_STATE_UPDATE with the new channel, then a
// VOICE_SERVER_UPDATE with a new token, and closes the old voice connection with 4014. The
// connection manager follows the move (discord/voice ManagerConfig.OnMove: a fresh
// connection to the new channel), and the session goes on there: the conversation is kept,
// the old channel's members' listeners end with the old connection, the session's record
// (kept sessions) names the new channel. docs/voice.md, "Moved by a moderator".

// Why a move ends the session instead (voice_session_end's reason too).
const (
	endMovedAFK     = "moved_afk"      // moved into the guild's AFK channel
	endMovedNoSpeak = "moved_no_speak" // moved into a channel the bot may not speak in
	moveFollowed    = "followed"       // banter_voice_session_moves_total{result}
)

// moveSettle is how long a session whose voice connection was closed "do not reconnect"
// (4014, 4022) waits for the gateway to say what happened: a VOICE_STATE_UPDATE in another
// channel (a move: followed) or with no channel (a kick: the session ends at once). Without
// either by then it ends (disconnected). Discord sends the VOICE_STATE_UPDATE and closes the
// voice WebSocket at about the same time, on two connections: either may arrive first.
const moveSettle = 3 * time.Second

// move is a move of the bot by someone else, from the connection manager.
type move struct{ from, to string }

// onMove hands a move of the bot to the guild's session (ManagerConfig.OnMove). It runs on
// the main gateway's event goroutine and does not block.
func (svc *Service) onMove(guildID, from, to string) {
	svc.mu.Lock()
	s := svc.sessions[guildID]
	svc.mu.Unlock()
	if s == nil {
		return
	}
	select {
	case s.moves <- move{from, to}:
	default:
		s.logger().Warn("voice_session_move_dropped", "from", from, "to", to, "reason", "queue_full")
	}
}

// onMoved follows a move (session loop): the session goes on in the new channel, or ends
// when the bot has nothing to do there (the reason is returned, "" to go on).
func (s *session) onMoved(mv move) string {
	from := s.channel()
	if mv.to == from {
		return ""
	}
	if reason := s.stayOut(mv.to); reason != "" {
		s.metrics.move(reason)
		s.logger().Info("voice_session_leave", "reason", reason, "from", from, "to", mv.to)
		return reason
	}
	s.movePending, s.stoppedAt = true, time.Time{}
	s.settling.Store(false)
	s.setChannel(mv.to)
	s.metrics.move(moveFollowed)
	// Discord does not say who moved the bot (only the audit log would): no "by".
	s.logger().Info("voice_session_moved", "from", from, "to", mv.to)
	if s.kept {
		s.wg.Go(func() { s.svc.moveRecord(s, mv.to) })
	}
	return ""
}

// stayOut says why the session should not go on in channelID after a move ("" if it should):
// the guild's AFK channel (the moderator parks the bot: it leaves), or a channel where the
// gateway state says the bot may not speak (it could only listen, answering nobody: it
// leaves rather than sit there transcribing).
func (s *session) stayOut(channelID string) string {
	st := s.svc.state(s.guildID)
	if g, err := st.Guild(s.guildID); err == nil && g != nil {
		st.RLock()
		afk := g.AfkChannelID
		st.RUnlock()
		if afk != "" && afk == channelID {
			return endMovedAFK
		}
	}
	if p, ok := perms.InChannel(st, s.svc.userID(), channelID); ok && p&discordgo.PermissionVoiceSpeak == 0 {
		return endMovedNoSpeak
	}
	return ""
}

// moveRecord makes the kept session's record name the channel the bot was moved to, so that
// a restart rejoins there (the store keeps one record a guild).
func (svc *Service) moveRecord(s *session, channelID string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), recordTimeout)
	defer cancel()
	rec := store.VoiceSession{GuildID: s.guildID, ChannelID: channelID, RequestedBy: s.requestedBy, JoinedAt: s.since}
	if err := svc.opts.KeptSessions.KeepVoiceSession(ctx, rec); err != nil {
		s.logger().Warn("voice_session_record_failed", "op", "move", "error", err.Error())
	}
}

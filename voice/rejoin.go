package voice

import (
	"context"
	"fmt"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/discord/perms"
	"github.com/banterbot/banter/store"
)

// Kept sessions: a session joined by /join or !join is recorded (Options.KeptSessions) when it
// starts, and the record dropped when the session ends for a reason that means "stay out". A
// graceful shutdown keeps it, and a crash never ends the session at all, so the next process
// that owns the guild's shard takes it up again (Rejoin).

// Why a session ended: voice_session_end's reason, banter_voice_session_ends_total{reason}.
const (
	endLeft             = "left"              // /leave, !leave, a move by command
	endShutdown         = "shutdown"          // the process stopping (SIGTERM): Shutdown
	endAlone            = "alone"             // nobody else for voice.inactivityLeaveSeconds
	endMaxSession       = "max_session"       // voice.maxSessionMinutes
	endDisconnected     = "disconnected"      // close 4014 (kicked, moved out, channel deleted) or 4022
	endReconnectTimeout = "reconnect_timeout" // no new voice connection within 30 s
)

// recordKeptAfter reports whether a kept session's record survives the session's end for
// reason. Only a shutdown keeps it: every other end means "stay out" (docs/voice.md, "Kept
// sessions").
func recordKeptAfter(reason string) bool { return reason == endShutdown }

// What became of a kept session at start: voice_rejoin's result, banter_voice_rejoins_total.
const (
	rejoinRejoined     = "rejoined"
	rejoinBusy         = "already_in_voice" // the guild has a session already (record untouched)
	rejoinExpired      = "expired"          // older than voice.maxSessionMinutes (dropped)
	rejoinGuildGone    = "guild_gone"       // the bot is no longer in the guild (dropped)
	rejoinChannelGone  = "channel_gone"     // deleted, or no longer a voice channel (dropped)
	rejoinNoPermission = "no_permission"    // the bot may not see or connect to it (dropped)
	rejoinFailed       = "failed"           // the join failed, or the guild stayed unavailable (kept)
)

// recordTimeout bounds each write of a record; guildWait bounds the wait for a guild's
// GUILD_CREATE after READY; rejoinTimeout bounds each rejoin.
const (
	recordTimeout = 5 * time.Second
	guildWait     = 30 * time.Second
	rejoinTimeout = 20 * time.Second
)

// keepRecord records s, joined by requestedBy's command, as a kept session.
func (svc *Service) keepRecord(ctx context.Context, s *session, requestedBy string) {
	if svc.opts.KeptSessions == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	rec := store.VoiceSession{GuildID: s.guildID, ChannelID: s.channelID, RequestedBy: requestedBy, JoinedAt: s.started}
	if err := svc.opts.KeptSessions.KeepVoiceSession(ctx, rec); err != nil {
		s.log.Warn("voice_session_record_failed", "op", "keep", "error", err.Error())
	}
}

// settleRecord drops s's record, if it has one, when it ended for a reason that means "stay
// out" (recordKeptAfter).
func (svc *Service) settleRecord(s *session, reason string) {
	if svc.opts.KeptSessions == nil || recordKeptAfter(reason) {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), recordTimeout)
	defer cancel()
	if err := svc.opts.KeptSessions.DropVoiceSession(ctx, s.guildID, s.channelID); err != nil {
		s.log.Warn("voice_session_record_failed", "op", "drop", "reason", reason, "error", err.Error())
	}
}

// Rejoin takes up the kept sessions (Options.KeptSessions) of the guilds owns accepts (those
// of the process's shards; another process takes up the others), one after another, once the
// shards are connected: each is joined again if the guild still has the channel and the bot
// may see it and connect to it. Each is logged (voice_rejoin, with its result) and counted
// (banter_voice_rejoins_total). A record is dropped when it cannot come back (expired,
// guild_gone, channel_gone, no_permission) and kept after a failure that may pass (failed), for
// the next start. A rejoined session counts voice.maxSessionMinutes from its first start. The
// end of the pass is logged (voice_rejoin_done, with the counts), records or not.
func (svc *Service) Rejoin(ctx context.Context, owns func(guildID string) bool) {
	if svc.opts.KeptSessions == nil || !svc.cfg().Voice.Enabled {
		return
	}
	kept, err := svc.opts.KeptSessions.KeptVoiceSessions(ctx)
	if err != nil {
		svc.log.Warn("voice_rejoin_failed", "error", err.Error())
		return
	}
	tally := map[string]int{}
	defer func() {
		svc.log.Info("voice_rejoin_done", "records", tally["owned"], "rejoined", tally[rejoinRejoined],
			"failed", tally[rejoinFailed], "dropped", tally["dropped"])
	}()
	for _, k := range kept {
		if ctx.Err() != nil {
			return
		}
		if !owns(k.GuildID) {
			continue
		}
		tally["owned"]++
		result, err := svc.rejoin(ctx, k)
		tally[result]++
		attrs := []any{"guild_id", k.GuildID, "channel_id", k.ChannelID, "result", result,
			"session_ms", svc.now().Sub(k.JoinedAt).Milliseconds()}
		if err != nil {
			attrs = append(attrs, "error", err.Error())
		}
		svc.opts.Metrics.rejoin(result)
		switch result {
		case rejoinRejoined, rejoinBusy:
			svc.log.Info("voice_rejoin", attrs...)
		case rejoinFailed:
			svc.log.Warn("voice_rejoin", append(attrs, "record", "kept")...)
		default:
			svc.log.Warn("voice_rejoin", append(attrs, "record", "dropped")...)
			svc.dropKept(ctx, k)
			tally["dropped"]++
		}
	}
}

// dropKept deletes a kept session's record that cannot come back.
func (svc *Service) dropKept(ctx context.Context, k store.VoiceSession) {
	ctx, cancel := context.WithTimeout(ctx, recordTimeout)
	defer cancel()
	if err := svc.opts.KeptSessions.DropVoiceSession(ctx, k.GuildID, k.ChannelID); err != nil {
		svc.log.Warn("voice_session_record_failed", "op", "drop", "guild_id", k.GuildID,
			"channel_id", k.ChannelID, "error", err.Error())
	}
}

// rejoin takes one kept session up and says what became of it.
func (svc *Service) rejoin(ctx context.Context, k store.VoiceSession) (string, error) {
	if svc.Channel(k.GuildID) != "" {
		return rejoinBusy, nil
	}
	if m := svc.cfg().Voice.MaxSessionMinutes; m > 0 && svc.now().Sub(k.JoinedAt) >= time.Duration(m)*time.Minute {
		return rejoinExpired, nil
	}
	if result, err := svc.mayRejoin(ctx, k); result != "" {
		return result, err
	}
	ctx, cancel := context.WithTimeout(ctx, rejoinTimeout)
	defer cancel()
	if err := svc.join(ctx, k.GuildID, k.ChannelID, joinHow{since: k.JoinedAt}); err != nil {
		return rejoinFailed, err
	}
	return rejoinRejoined, nil
}

// connectPerms are what joining a voice channel takes.
const connectPerms = discordgo.PermissionViewChannel | discordgo.PermissionVoiceConnect

// mayRejoin checks a kept session against the gateway state of its guild, once the state holds
// the guild: "" when it may be joined (or the state cannot tell: Discord decides), else the
// result that stops it.
func (svc *Service) mayRejoin(ctx context.Context, k store.VoiceSession) (string, error) {
	st := svc.state(k.GuildID)
	if _, err := st.Guild(k.GuildID); err != nil {
		return rejoinGuildGone, nil // READY lists every guild of the bot, unavailable ones too
	}
	if err := svc.guildReady(ctx, k.GuildID); err != nil {
		return rejoinFailed, fmt.Errorf("voice: rejoin: guild %s unavailable: %w", k.GuildID, err)
	}
	ch, err := st.Channel(k.ChannelID)
	if err != nil {
		return rejoinChannelGone, nil
	}
	st.RLock()
	guildID, typ := ch.GuildID, ch.Type
	st.RUnlock()
	if guildID != k.GuildID || (typ != discordgo.ChannelTypeGuildVoice && typ != discordgo.ChannelTypeGuildStageVoice) {
		return rejoinChannelGone, nil
	}
	if p, ok := perms.InChannel(st, svc.userID(), k.ChannelID); ok && p&connectPerms != connectPerms {
		return rejoinNoPermission, nil
	}
	return "", nil
}

// guildReady waits (up to guildWait) until the state holds the guild's channels and roles:
// after READY a guild is an unavailable stub until its GUILD_CREATE (later during an outage).
// A wait is logged (voice_rejoin_waiting).
func (svc *Service) guildReady(ctx context.Context, guildID string) error {
	created := make(chan struct{}, 1)
	// discordgo updates its state before it calls the handlers.
	remove := svc.gateway().AddHandler(func(_ *discordgo.Session, e *discordgo.GuildCreate) {
		if e.Guild != nil && e.ID == guildID {
			select {
			case created <- struct{}{}:
			default:
			}
		}
	})
	defer remove()
	ctx, cancel := context.WithTimeout(ctx, guildWait)
	defer cancel()
	if !perms.GuildAvailable(svc.state(guildID), guildID) {
		svc.log.Info("voice_rejoin_waiting", "guild_id", guildID, "reason", "guild_unavailable",
			"wait_ms", guildWait.Milliseconds())
	}
	for !perms.GuildAvailable(svc.state(guildID), guildID) {
		select {
		case <-created:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

package voice

import (
	"context"
	"errors"
	"fmt"
	"sync"
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
	endDisconnected     = "disconnected"      // kicked from voice, channel deleted (4014/4022; not a move: move.go)
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
	rec := store.VoiceSession{GuildID: s.guildID, ChannelID: s.channel(), RequestedBy: requestedBy, JoinedAt: s.started}
	if err := svc.opts.KeptSessions.KeepVoiceSession(ctx, rec); err != nil {
		s.logger().Warn("voice_session_record_failed", "op", "keep", "error", err.Error())
	}
}

// settleRecord drops s's record, if it has one, when it ended for a reason that means "stay
// out" (recordKeptAfter). Only a record joined at or before s began goes (its own, or an older
// one of the channel): never that of a session a later /join started.
func (svc *Service) settleRecord(s *session, reason string) {
	if svc.opts.KeptSessions == nil || recordKeptAfter(reason) {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), recordTimeout)
	defer cancel()
	if err := svc.opts.KeptSessions.DropVoiceSession(ctx, s.guildID, s.channel(), s.since); err != nil {
		s.logger().Warn("voice_session_record_failed", "op", "drop", "reason", reason, "error", err.Error())
	}
}

// rejoinParallel bounds the kept sessions joined at once by Rejoin; a session waiting for its
// guild (guildWait) holds no slot.
const rejoinParallel = 4

// Rejoin takes up the kept sessions (Options.KeptSessions) of the guilds owns accepts (those
// of the process's shards; another process takes up the others) once the shards are
// connected, each on its own (up to rejoinParallel joins at once; a guild still unavailable
// delays its own session only): each is joined again if the guild still has the channel and
// the bot may see it and connect to it. Each is logged (voice_rejoin, with its result) and
// counted (banter_voice_rejoins_total). A record is dropped when it cannot come back (expired,
// guild_gone, channel_gone, no_permission) and kept after a failure that may pass (failed),
// for the next start. A rejoined session counts voice.maxSessionMinutes from its first start
// and does not greet the room. Rejoin returns when every kept session is settled, or soon
// after ctx ends; the end of the pass is logged (voice_rejoin_done, with the counts), records
// or not.
func (svc *Service) Rejoin(ctx context.Context, owns func(guildID string) bool) {
	svc.startRejoin(ctx, owns).wait()
}

// JoinAtStart joins what a process joins at start, in the guilds owns accepts: the kept
// sessions (Rejoin), and the voice.autoJoin channels, each as soon as its guild's kept
// session (if any) is settled, so that one guild's outage delays no other guild. A guild that
// has a session by then (its kept session came back, or a /join came first) is skipped
// (voice_autojoin_skipped): one session a guild. It returns when all are done.
func (svc *Service) JoinAtStart(ctx context.Context, owns func(guildID string) bool) {
	pass := svc.startRejoin(ctx, owns)
	var wg sync.WaitGroup
	if svc.cfg().Voice.Enabled {
		for _, ref := range svc.cfg().Voice.AutoJoin {
			if !owns(ref.GuildID) {
				svc.log.Debug("voice_autojoin_skipped", "guild_id", ref.GuildID, "channel_id", ref.ChannelID,
					"reason", "guild_on_another_process_shard")
				continue
			}
			wg.Go(func() { svc.autoJoin(ctx, pass, ref.GuildID, ref.ChannelID) })
		}
	}
	wg.Wait()
	pass.wait()
}

// autoJoin joins one voice.autoJoin channel once its guild's kept session is settled.
func (svc *Service) autoJoin(ctx context.Context, pass *rejoinPass, guildID, channelID string) {
	select {
	case <-pass.settled(guildID):
	case <-ctx.Done():
		return
	}
	err := svc.join(ctx, guildID, channelID, joinHow{ifIdle: true})
	switch {
	case errors.Is(err, errBusy):
		reason := "already_in_voice"
		if pass.result(guildID) == rejoinRejoined {
			reason = "rejoined_kept_session"
		}
		svc.log.Info("voice_autojoin_skipped", "guild_id", guildID, "channel_id", channelID,
			"reason", reason, "in_channel_id", svc.Channel(guildID))
	case err != nil:
		svc.log.Warn("voice_autojoin_failed", "guild_id", guildID, "channel_id", channelID, "error", err.Error())
	}
}

// rejoinPass is one Rejoin: a goroutine per kept session, one GUILD_CREATE handler for all.
type rejoinPass struct {
	svc     *Service
	wg      sync.WaitGroup
	slots   chan struct{}            // rejoinParallel
	created map[string]chan struct{} // a guild's GUILD_CREATE arrived (read-only once started)
	done    map[string]chan struct{} // closed once the guild's kept session is settled (read-only)
	remove  func()                   // the GUILD_CREATE handler's

	mu      sync.Mutex // guards following
	results map[string]string
	tally   map[string]int
}

// startRejoin starts the pass over the kept sessions of the guilds owns accepts.
func (svc *Service) startRejoin(ctx context.Context, owns func(guildID string) bool) *rejoinPass {
	p := &rejoinPass{svc: svc, slots: make(chan struct{}, rejoinParallel), created: map[string]chan struct{}{},
		done: map[string]chan struct{}{}, results: map[string]string{}, tally: map[string]int{}, remove: func() {}}
	if svc.opts.KeptSessions == nil || !svc.cfg().Voice.Enabled {
		return p
	}
	kept, err := svc.opts.KeptSessions.KeptVoiceSessions(ctx)
	if err != nil {
		svc.log.Warn("voice_rejoin_failed", "error", err.Error())
		return p
	}
	var mine []store.VoiceSession
	for _, k := range kept {
		if owns(k.GuildID) && p.done[k.GuildID] == nil { // one record a guild
			mine = append(mine, k)
			p.created[k.GuildID], p.done[k.GuildID] = make(chan struct{}, 1), make(chan struct{})
		}
	}
	// discordgo updates its state before it calls the handlers.
	p.remove = svc.gateway().AddHandler(func(_ *discordgo.Session, e *discordgo.GuildCreate) {
		if e.Guild == nil {
			return
		}
		if c := p.created[e.ID]; c != nil {
			select {
			case c <- struct{}{}:
			default:
			}
		}
	})
	p.tally["owned"] = len(mine)
	for _, k := range mine {
		p.wg.Go(func() {
			defer close(p.done[k.GuildID])
			p.settle(ctx, k)
		})
	}
	return p
}

// settled is closed once the guild's kept session (if any) is settled.
func (p *rejoinPass) settled(guildID string) <-chan struct{} {
	if c := p.done[guildID]; c != nil {
		return c
	}
	c := make(chan struct{}) // no kept session: settled already
	close(c)
	return c
}

// result is what became of the guild's kept session ("" for none, or not yet).
func (p *rejoinPass) result(guildID string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.results[guildID]
}

// wait waits for every kept session of the pass, then logs its end.
func (p *rejoinPass) wait() {
	p.wg.Wait()
	p.remove()
	svc := p.svc
	if svc.opts.KeptSessions == nil || !svc.cfg().Voice.Enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	svc.log.Info("voice_rejoin_done", "records", p.tally["owned"], "rejoined", p.tally[rejoinRejoined],
		"failed", p.tally[rejoinFailed], "dropped", p.tally["dropped"])
}

// settle takes one kept session up, then logs, counts and settles its record.
func (p *rejoinPass) settle(ctx context.Context, k store.VoiceSession) {
	svc := p.svc
	if ctx.Err() != nil {
		return
	}
	result, err := p.rejoin(ctx, k)
	attrs := []any{"guild_id", k.GuildID, "channel_id", k.ChannelID, "result", result,
		"session_ms", svc.now().Sub(k.JoinedAt).Milliseconds()}
	if err != nil {
		attrs = append(attrs, "error", err.Error())
	}
	svc.opts.Metrics.rejoin(result)
	dropped := false
	switch result {
	case rejoinRejoined, rejoinBusy:
		svc.log.Info("voice_rejoin", attrs...)
	case rejoinFailed:
		svc.log.Warn("voice_rejoin", append(attrs, "record", "kept")...)
	default:
		svc.log.Warn("voice_rejoin", append(attrs, "record", "dropped")...)
		svc.dropKept(ctx, k)
		dropped = true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.results[k.GuildID] = result
	p.tally[result]++
	if dropped {
		p.tally["dropped"]++
	}
}

// dropKept deletes a kept session's record that cannot come back (not a newer one that a
// /join wrote meanwhile).
func (svc *Service) dropKept(ctx context.Context, k store.VoiceSession) {
	ctx, cancel := context.WithTimeout(ctx, recordTimeout)
	defer cancel()
	if err := svc.opts.KeptSessions.DropVoiceSession(ctx, k.GuildID, k.ChannelID, k.JoinedAt); err != nil {
		svc.log.Warn("voice_session_record_failed", "op", "drop", "guild_id", k.GuildID,
			"channel_id", k.ChannelID, "error", err.Error())
	}
}

// rejoin takes one kept session up and says what became of it.
func (p *rejoinPass) rejoin(ctx context.Context, k store.VoiceSession) (string, error) {
	svc := p.svc
	if svc.Channel(k.GuildID) != "" {
		return rejoinBusy, nil
	}
	if m := svc.cfg().Voice.MaxSessionMinutes; m > 0 && svc.now().Sub(k.JoinedAt) >= time.Duration(m)*time.Minute {
		return rejoinExpired, nil
	}
	if result, err := p.mayRejoin(ctx, k); result != "" {
		return result, err
	}
	select {
	case p.slots <- struct{}{}:
		defer func() { <-p.slots }()
	case <-ctx.Done():
		return rejoinFailed, fmt.Errorf("voice: rejoin: %w", ctx.Err())
	}
	ctx, cancel := context.WithTimeout(ctx, rejoinTimeout)
	defer cancel()
	err := svc.join(ctx, k.GuildID, k.ChannelID, joinHow{since: k.JoinedAt, requestedBy: k.RequestedBy, ifIdle: true})
	switch {
	case errors.Is(err, errBusy): // a /join came first
		return rejoinBusy, nil
	case err != nil:
		return rejoinFailed, err
	}
	return rejoinRejoined, nil
}

// connectPerms are what joining a voice channel takes.
const connectPerms = discordgo.PermissionViewChannel | discordgo.PermissionVoiceConnect

// mayRejoin checks a kept session against the gateway state of its guild, once the state holds
// the guild: "" when it may be joined (or the state cannot tell: Discord decides), else the
// result that stops it.
func (p *rejoinPass) mayRejoin(ctx context.Context, k store.VoiceSession) (string, error) {
	svc := p.svc
	st := svc.state(k.GuildID)
	if _, err := st.Guild(k.GuildID); err != nil {
		return rejoinGuildGone, nil // READY lists every guild of the bot, unavailable ones too
	}
	if err := p.guildReady(ctx, k.GuildID); err != nil {
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
func (p *rejoinPass) guildReady(ctx context.Context, guildID string) error {
	svc := p.svc
	ctx, cancel := context.WithTimeout(ctx, guildWait)
	defer cancel()
	if !perms.GuildAvailable(svc.state(guildID), guildID) {
		svc.log.Info("voice_rejoin_waiting", "guild_id", guildID, "reason", "guild_unavailable",
			"wait_ms", guildWait.Milliseconds())
	}
	for !perms.GuildAvailable(svc.state(guildID), guildID) {
		select {
		case <-p.created[guildID]:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

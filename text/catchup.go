package text

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/discord/perms"
	"github.com/banterbot/banter/safety"
	"github.com/banterbot/banter/store"
)

// Catch-up: at start and after every gateway gap, every readable text channel of the bot's
// guilds (by the session's state: access.go) is read back over REST and what was missed is fed
// through the normal pipeline, once.
// Events sent while the bot had no session (discordgo answers op 9 with a new Identify, so
// whatever was said before the new READY never arrives; a process that was down saw nothing)
// or that a resume did not replay are found this way. Every message passes a per-channel
// dedupe by id, so one seen live and again in a catch-up is handled once.
//
// Where a channel's catch-up starts:
//
//	seen       the newest message this process has seen there (live or in an earlier catch-up)
//	unhandled  else, when the store holds messages of it an earlier process's catch-up stored
//	           and did not finish handling, just before the oldest of them
//	           (catchup_unhandled.go)
//	stored     else the newest message the store holds for it (an earlier process saw it)
//	window     else text.catchUpMaxAgeMinutes back from now (a quiet channel, or one created
//	           while the bot was down): older messages could not be answered anyway
//
// A missed message older than text.catchUpMaxAgeMinutes is stored and declined (logged
// message_ignored reason=catch_up_stale, by id). Paging is bounded: past catchUpMaxPages pages
// still older than the bound, the rest of the stale range is skipped (logged catch_up_skipped
// with the range); within the bound it pages on, up to catchUpMaxPagesInBound more pages
// (logged catch_up_truncated with where it stopped).

const (
	// catchUpPageSize is one REST page (Discord's maximum).
	catchUpPageSize = 100
	// catchUpMaxPages is how many pages of messages older than the bound are read (stored,
	// each logged stale) before the rest of them is skipped.
	catchUpMaxPages = 5
	// catchUpMaxPagesInBound bounds the pages read within the bound: 5,000 messages in one
	// channel in text.catchUpMaxAgeMinutes.
	catchUpMaxPagesInBound = 50
	// seenPerChannel is how many message ids each channel remembers for the dedupe.
	seenPerChannel = 1024
)

// CatchUp catches up every channel the pipeline knows (seen a message in, or listed by one of
// the bot's guilds) after a gateway gap. reason names the gap ("ready", "resumed"). Where each
// channel's catch-up starts is fixed now (startOf); whether the bot may read it is computed from
// the session's state (catchUpIfReadable), and after READY, whose guilds are unavailable stubs,
// that waits for each guild's GUILD_CREATE. It runs on goroutines owned by the service and
// returns at once.
func (s *Service) CatchUp(reason string) {
	s.mu.Lock()
	chans := make([]*channelState, 0, len(s.channels))
	for _, cs := range s.channels {
		chans = append(chans, cs)
	}
	s.mu.Unlock()
	cfg := s.cfg()
	for _, cs := range chans {
		_, guildID := cs.position()
		if guildID == "" {
			continue // not a guild text channel the bot reads (a lookup's, a DM)
		}
		// After READY the guilds are unavailable stubs until their GUILD_CREATE, which follows.
		s.catchUpIfReadable(cs, guildID, reason, s.startOf(cfg, cs), reason == "ready")
	}
}

// pendingCatchUp is a channel's catch-up waiting for its guild's GUILD_CREATE.
type pendingCatchUp struct {
	cs     *channelState
	reason string
	start  catchUpStart
}

// catchUpIfReadable catches a channel up from start when the session's state says the bot may
// read it, and logs and counts catch_up result=no_access, without a request, when it may not.
// With waitForGuild (after READY), when the state does not hold the guild yet (READY lists it
// as unavailable until its GUILD_CREATE), the catch-up waits for CatchUpGuild. Otherwise, when
// the state cannot tell, Discord's answer decides (a 403 is no_access too).
func (s *Service) catchUpIfReadable(cs *channelState, guildID, reason string, start catchUpStart, waitForGuild bool) {
	readable, known := s.readable(cs.id)
	switch {
	case known && !readable:
		s.opts.Metrics.catchUp(reason, "no_access", 0)
		s.logger.Info("catch_up", "channel_id", cs.id, "reason", reason, "from", start.from, "result", "no_access",
			"source", "state")
	case !known && waitForGuild && !perms.GuildAvailable(s.state.Load(), guildID):
		s.mu.Lock()
		if s.pending == nil {
			s.pending = map[string]map[string]pendingCatchUp{}
		}
		if s.pending[guildID] == nil {
			s.pending[guildID] = map[string]pendingCatchUp{}
		}
		if _, dup := s.pending[guildID][cs.id]; !dup { // an earlier gap's start reads further back
			s.pending[guildID][cs.id] = pendingCatchUp{cs: cs, reason: reason, start: start}
		}
		s.mu.Unlock()
	default:
		s.spawn(func() { s.catchUpChannel(cs, reason, start) })
	}
}

// CatchUpGuild handles a guild becoming available to this process (GUILD_CREATE: at start,
// after a new session, when its shard moves here): it runs the catch-ups READY left waiting
// for it, notes the guild's text channels, news channels and active threads, catches up those
// this process has no position in yet (from the store, else the window), each only if the
// bot may read it, and answers or explains the turns an earlier process left open there
// (turns.go). It runs on goroutines owned by the service and returns at once.
func (s *Service) CatchUpGuild(g *discordgo.Guild) {
	if g == nil || g.ID == "" {
		return
	}
	s.mu.Lock()
	waiting := s.pending[g.ID]
	delete(s.pending, g.ID)
	s.mu.Unlock()
	for _, p := range waiting {
		s.catchUpIfReadable(p.cs, g.ID, p.reason, p.start, false)
	}
	cfg := s.cfg()
	for _, cs := range s.guildChannels(cfg, g) {
		if _, done := waiting[cs.id]; done {
			continue // the READY's catch-up, just run
		}
		if after, _ := cs.position(); after != "" {
			continue // seen live in this process: the READY's or RESUMED's catch-up covers it
		}
		s.catchUpIfReadable(cs, g.ID, "guild_create", s.startOf(cfg, cs), false)
	}
	guildID := g.ID
	s.spawn(func() { s.recoverTurns(guildID) })
}

// dropPendingCatchUps forgets the catch-ups waiting for a guild the bot left (GUILD_DELETE
// without unavailable; an outage's keeps them: its GUILD_CREATE follows).
func (s *Service) dropPendingCatchUps(guildID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, guildID)
}

// guildChannels returns the states of g's channels the pipeline may read: text, news and
// active threads, allowed by permissions.allowedChannelIds. Their channel info is cached from g.
func (s *Service) guildChannels(cfg *config.Config, g *discordgo.Guild) []*channelState {
	names := map[string]string{}
	for _, ch := range g.Channels {
		if ch != nil {
			names[ch.ID] = ch.Name
		}
	}
	var out []*channelState
	add := func(ch *discordgo.Channel, thread bool) {
		info := channelInfo{id: ch.ID, name: ch.Name, isThread: thread}
		if thread {
			info.parentID, info.parent = ch.ParentID, names[ch.ParentID]
		}
		if !s.channelAllowed(cfg.Permissions.AllowedChannelIDs, info) {
			return
		}
		cs := s.channel(ch.ID)
		cs.note(g.ID, info)
		out = append(out, cs)
	}
	for _, ch := range g.Channels {
		if ch != nil && (ch.Type == discordgo.ChannelTypeGuildText || ch.Type == discordgo.ChannelTypeGuildNews) {
			add(ch, false)
		}
	}
	for _, t := range g.Threads {
		if t != nil && t.IsThread() {
			add(t, true)
		}
	}
	return out
}

// catchUpRun is one channel's catch-up in progress.
type catchUpRun struct {
	cs                    *channelState
	reason, from, guildID string
	fetched, fresh, stale int
	pages, inBound        int
	skipped, truncated    bool
	floor                 string // the oldest id still answerable (now − max age)
	batch                 catchUpBatch
	takeUp                *takeUp // from=unhandled: what an earlier process left unhandled
	takenUp               int     // marked messages fed through the pipeline again
}

// catchUpBatch is what a catch-up stores in one write (Store.SaveMessages, catchup_batch.go)
// before the pipeline sees it: the page's stale messages and the fresh ones that cannot record
// a durable turn (prestorable), in page order, up to the next message that may.
type catchUpBatch struct {
	recs    []store.Message
	stale   []bool               // recs[i] is a stale message's (else a fresh one's, fed to the pipeline after the write)
	fresh   []*discordgo.Message // the fresh messages of recs, in order
	freshAt []int                // the index in recs of each of fresh
	again   []bool               // fresh[k] was stored marked unhandled by an earlier process: not written again
	handled []string             // marked messages to clear with the page's: stale ones taken up again
}

// catchUpStart is where a channel's catch-up reads from: after the message after, found as from
// ("seen", "unhandled", "stored" or "window"); takeUp is set with "unhandled".
type catchUpStart struct {
	after, from string
	takeUp      *takeUp
}

// startOf is where a channel's catch-up starts: the newest message this process has seen there,
// else before the oldest the store holds marked unhandled, else the newest the store holds,
// else text.catchUpMaxAgeMinutes back. It is resolved when the
// gap is noticed, on the gateway's event goroutine (handlers run in order, before any later
// event's): resolved later, on the catch-up's own goroutine, a live message handled meanwhile,
// or the history its turn backfills into the store, would move the start past what was missed.
func (s *Service) startOf(cfg *config.Config, cs *channelState) catchUpStart {
	if after, _ := cs.position(); after != "" {
		return catchUpStart{after: after, from: "seen"}
	}
	recent, err := s.opts.Store.RecentMessages(s.ctx, cs.id, time.Time{}, 1)
	if err != nil {
		s.logger.Warn("store_failed", "op", "recent_messages", "channel_id", cs.id, "error", err.Error())
	}
	if len(recent) > 0 {
		if start, ok := s.unhandledStart(cs.id, recent[0].ID, s.now().Add(-cfg.Text.CatchUpMaxAge())); ok {
			return start
		}
		return catchUpStart{after: recent[0].ID, from: "stored"}
	}
	return catchUpStart{after: snowflakeAt(s.now().Add(-cfg.Text.CatchUpMaxAge())), from: "window"}
}

// catchUpChannel reads one channel back from start and feeds what it missed through the
// pipeline, oldest first.
func (s *Service) catchUpChannel(cs *channelState, reason string, start catchUpStart) {
	cs.catchUpMu.Lock()
	defer cs.catchUpMu.Unlock()
	ctx, cfg := s.ctx, s.cfg()
	if !s.channelAllowed(cfg.Permissions.AllowedChannelIDs, s.channelInfo(ctx, cs.id)) {
		return
	}
	_, guildID := cs.position()
	after := start.after
	r := &catchUpRun{cs: cs, reason: reason, from: start.from, guildID: guildID,
		floor: snowflakeAt(s.now().Add(-cfg.Text.CatchUpMaxAge())), takeUp: start.takeUp}
	for {
		msgs, err := s.opts.Discord.ChannelMessages(cs.id, catchUpPageSize, "", after, "", discordgo.WithContext(ctx))
		if err != nil {
			s.catchUpFailed(r, after, err)
			return
		}
		r.pages++
		slices.SortFunc(msgs, func(a, b *discordgo.Message) int { return compareIDs(a.ID, b.ID) })
		for _, m := range msgs {
			s.catchUpMessage(cfg, r, m)
		}
		s.flushCatchUp(r)
		if len(msgs) < catchUpPageSize {
			break
		}
		last := msgs[len(msgs)-1].ID
		after = r.next(last)
		if after != last {
			s.logger.Warn("catch_up_skipped", "channel_id", cs.id, "reason", "older_than_max_age", "after_id", last,
				"until_id", after, "max_age_s", int(cfg.Text.CatchUpMaxAge().Seconds()))
		}
		if r.inBound >= catchUpMaxPagesInBound {
			r.truncated = true
			s.logger.Warn("catch_up_truncated", "channel_id", cs.id, "reason", "page_limit", "after_id", last,
				"pages", r.pages)
			break
		}
	}
	s.markHandled(r.leftMarked(after))
	s.opts.Metrics.catchUp(reason, "done", r.fresh)
	attrs := []any{"channel_id", cs.id, "reason", reason, "from", r.from, "fetched", r.fetched, "new", r.fresh,
		"stale", r.stale, "pages", r.pages, "skipped", r.skipped, "truncated", r.truncated}
	if r.takeUp != nil {
		attrs = append(attrs, "taken_up", r.takenUp)
	}
	s.logger.Info("catch_up", attrs...)
}

// next is where the page after one ending at last starts: after last, or, once catchUpMaxPages
// pages older than the bound have been read, at the bound (the rest of the stale range is
// skipped).
func (r *catchUpRun) next(last string) string {
	if compareIDs(last, r.floor) >= 0 {
		r.inBound++
		return last
	}
	if r.pages >= catchUpMaxPages {
		r.skipped = true
		return r.floor
	}
	return last
}

// catchUpMessage handles one fetched message: new ones within the bound go through the
// pipeline, older ones are stored and declined.
func (s *Service) catchUpMessage(cfg *config.Config, r *catchUpRun, m *discordgo.Message) {
	if m.ChannelID == "" {
		m.ChannelID = r.cs.id
	}
	if m.GuildID == "" {
		m.GuildID = r.guildID // REST message objects carry no guild_id
	}
	r.fetched++
	if r.cs.seen(m.ID) || r.handledBefore(m) {
		return
	}
	r.fresh++
	again := r.markedBefore(m.ID) // stored (marked) by an earlier process, not handled to the end
	if age := s.now().Sub(snowflakeTime(m.ID)); age > cfg.Text.CatchUpMaxAge() {
		r.stale++
		s.logger.Info("message_ignored", "reason", "catch_up_stale", "message_id", m.ID, "channel_id", r.cs.id,
			"age_s", int(age.Seconds()))
		if again {
			r.cs.firstSight(m.ID, m.GuildID)
			r.batch.handled = append(r.batch.handled, m.ID)
		} else if rec, ok := s.storeOnly(m); ok {
			r.batch.addStale(rec)
		}
		return
	}
	if rec, ok := s.prestorable(cfg, m); ok {
		r.batch.addFresh(rec, m, again)
		return
	}
	s.flushCatchUp(r) // what is older is stored first, then this message may record its turn
	if !again {
		s.HandleMessageCreate(m)
		return
	}
	// Stored by the earlier process: not written again (nor offered to memory extraction).
	pre := &prestored{rec: storedFromDiscord(m, s.channelInfo(s.ctx, m.ChannelID), false), marked: true}
	if !s.ingest(m, false, pre) {
		s.markHandled([]string{m.ID})
	}
}

// catchUpFailed logs a catch-up that could not read its channel: a channel the bot may not
// read (403) is noted, any other error is an error.
func (s *Service) catchUpFailed(r *catchUpRun, after string, err error) {
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode == http.StatusForbidden {
		s.opts.Metrics.catchUp(r.reason, "no_access", 0)
		s.logger.Info("catch_up", "channel_id", r.cs.id, "reason", r.reason, "from", r.from, "result", "no_access")
		return
	}
	if errors.Is(err, context.Canceled) && s.ctx.Err() != nil {
		return // shutting down
	}
	s.opts.Metrics.catchUp(r.reason, "failed", r.fresh)
	s.logger.Error("catch_up_failed", "channel_id", r.cs.id, "reason", r.reason, "after", after, "fetched", r.fetched,
		"error", err.Error())
}

// snowflakeAt is the smallest snowflake of an instant: messages created at or after t have
// larger ids.
func snowflakeAt(t time.Time) string {
	const discordEpochMS = 1420070400000
	ms := t.UnixMilli() - discordEpochMS
	if ms < 0 {
		ms = 0
	}
	return strconv.FormatUint(uint64(ms)<<22, 10)
}

// storeOnly marks a missed message that will not be answered seen, and returns its record
// when it is to be stored: it stores what ingest would have, not other bots' messages, nor those
// that must stay out of the context (blocked authors, ban words). The caller stores it
// (catchUpBatch).
func (s *Service) storeOnly(m *discordgo.Message) (store.Message, bool) {
	cs := s.channel(m.ChannelID)
	if !cs.firstSight(m.ID, m.GuildID) || m.Author == nil {
		return store.Message{}, false
	}
	selfID := s.selfID()
	isSelf := selfID != "" && m.Author.ID == selfID
	if m.Author.Bot && !isSelf {
		return store.Message{}, false
	}
	rec := storedFromDiscord(m, s.channelInfo(s.ctx, m.ChannelID), isSelf)
	if why := s.excluded(s.cfg(), rec); why != safety.Allowed {
		s.logger.Info("message_ignored", "reason", string(why), "source", "catch_up", "message_id", m.ID, "channel_id", m.ChannelID)
		return store.Message{}, false
	}
	return rec, true
}

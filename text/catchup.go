package text

import (
	"slices"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/safety"
)

// Catch-up after a gateway gap. Events sent while the bot had no session (discordgo answers
// op 9 with a new Identify, so whatever was said before the new READY never arrives) or that a
// resume did not replay are fetched over REST and fed through the normal pipeline, once: every
// message passes a per-channel dedupe by id, so one seen live and again in a catch-up is
// handled once.

const (
	// catchUpPageSize and catchUpMaxPages bound one channel's catch-up to 500 messages; a
	// longer gap is cut (logged truncated=true) at the newest ones not fetched.
	catchUpPageSize = 100
	catchUpMaxPages = 5
	// catchUpMaxAge is how old a missed message may be and still be answered; older ones are
	// stored and declined (logged message_ignored reason=catch_up_stale).
	catchUpMaxAge = 15 * time.Minute
	// seenPerChannel is how many message ids each channel remembers for the dedupe.
	seenPerChannel = 1024
)

// CatchUp fetches, for every channel the pipeline has seen a message in, the messages after
// the last one it saw and feeds them through HandleMessageCreate. reason names the gap
// ("ready", "resumed"). It runs on a goroutine owned by the service and returns at once.
func (s *Service) CatchUp(reason string) {
	s.mu.Lock()
	chans := make([]*channelState, 0, len(s.channels))
	for _, cs := range s.channels {
		chans = append(chans, cs)
	}
	s.mu.Unlock()
	for _, cs := range chans {
		after, guildID := cs.position()
		if after == "" {
			continue
		}
		s.spawn(func() { s.catchUpChannel(cs, after, guildID, reason) })
	}
}

// CatchUpFromStore starts the catch-up of a guild's text channels that this process has not
// seen a message in yet (it just started, or its shard just moved here) from the newest
// message the store holds for each: what was said while no process ran the guild's shard is
// answered once. Channels already seen are left to CatchUp. It runs on goroutines owned by the
// service and returns at once.
func (s *Service) CatchUpFromStore(g *discordgo.Guild) {
	if g == nil {
		return
	}
	allowed := s.opts.Config().Permissions.AllowedChannelIDs
	var ids []string
	for _, ch := range g.Channels {
		if ch == nil || (ch.Type != discordgo.ChannelTypeGuildText && ch.Type != discordgo.ChannelTypeGuildNews) {
			continue
		}
		if len(allowed) > 0 && !slices.Contains(allowed, ch.ID) && !slices.Contains(allowed, ch.ParentID) {
			continue
		}
		ids = append(ids, ch.ID)
	}
	for _, t := range g.Threads {
		if t != nil && (len(allowed) == 0 || slices.Contains(allowed, t.ID) || slices.Contains(allowed, t.ParentID)) {
			ids = append(ids, t.ID)
		}
	}
	guildID := g.ID
	for _, id := range ids {
		cs := s.channel(id)
		if after, _ := cs.position(); after != "" {
			continue
		}
		s.spawn(func() {
			recent, err := s.opts.Store.RecentMessages(s.ctx, id, time.Time{}, 1)
			if err != nil {
				s.logger.Warn("store_failed", "op", "recent_messages", "channel_id", id, "error", err.Error())
				return
			}
			if len(recent) == 0 || !cs.firstSight(recent[0].ID, guildID) {
				return // nothing stored (a new channel), or the channel came alive meanwhile
			}
			s.catchUpChannel(cs, recent[0].ID, guildID, "startup")
		})
	}
}

// catchUpChannel pages through the messages after `after` in one channel, oldest first.
func (s *Service) catchUpChannel(cs *channelState, after, guildID, reason string) {
	ctx := s.ctx
	fetched, fresh, stale, pages := 0, 0, 0, 0
	truncated := false
	for pages < catchUpMaxPages {
		pages++
		msgs, err := s.opts.Discord.ChannelMessages(cs.id, catchUpPageSize, "", after, "", discordgo.WithContext(ctx))
		if err != nil {
			s.opts.Metrics.catchUp(reason, "failed", 0)
			s.logger.Error("catch_up_failed", "channel_id", cs.id, "reason", reason, "after", after, "fetched", fetched, "error", err.Error())
			return
		}
		slices.SortFunc(msgs, func(a, b *discordgo.Message) int { return compareIDs(a.ID, b.ID) })
		for _, m := range msgs {
			if m.ChannelID == "" {
				m.ChannelID = cs.id
			}
			if m.GuildID == "" {
				m.GuildID = guildID // REST message objects carry no guild_id
			}
			fetched++
			if cs.seen(m.ID) {
				continue
			}
			fresh++
			if age := s.now().Sub(snowflakeTime(m.ID)); age > catchUpMaxAge {
				stale++
				s.logger.Info("message_ignored", "reason", "catch_up_stale", "message_id", m.ID, "channel_id", cs.id,
					"age_s", int(age.Seconds()))
				s.storeOnly(m)
				continue
			}
			s.HandleMessageCreate(m)
		}
		if len(msgs) < catchUpPageSize {
			break
		}
		after = msgs[len(msgs)-1].ID
		truncated = pages == catchUpMaxPages
	}
	s.opts.Metrics.catchUp(reason, "done", fresh)
	s.logger.Info("catch_up", "channel_id", cs.id, "reason", reason, "fetched", fetched, "new", fresh, "stale", stale,
		"pages", pages, "truncated", truncated)
}

// storeOnly records a missed message without answering it, and marks it seen. It stores what
// ingest would have: not other bots' messages, nor those that must stay out of the context
// (blocked authors, ban words).
func (s *Service) storeOnly(m *discordgo.Message) {
	cs := s.channel(m.ChannelID)
	if !cs.firstSight(m.ID, m.GuildID) || m.Author == nil {
		return
	}
	selfID := s.selfID()
	isSelf := selfID != "" && m.Author.ID == selfID
	if m.Author.Bot && !isSelf {
		return
	}
	cfg := s.cfg()
	rec := storedFromDiscord(m, s.channelInfo(s.ctx, m.ChannelID), isSelf)
	if why := s.excluded(cfg, rec); why != safety.Allowed {
		s.logger.Info("message_ignored", "reason", string(why), "source", "catch_up", "message_id", m.ID, "channel_id", m.ChannelID)
		return
	}
	if err := s.opts.Store.SaveMessage(s.ctx, rec); err != nil {
		s.logger.Warn("store_failed", "op", "save_message", "message_id", m.ID, "error", err.Error())
	}
}

// seenIDs is a bounded set of message ids, forgetting the oldest first.
type seenIDs struct {
	set  map[string]struct{}
	ring []string
	next int
}

// add reports whether id is new, remembering it.
func (r *seenIDs) add(id string) bool {
	if r.set == nil {
		r.set = make(map[string]struct{}, seenPerChannel)
		r.ring = make([]string, 0, seenPerChannel)
	}
	if _, ok := r.set[id]; ok {
		return false
	}
	if len(r.ring) < seenPerChannel {
		r.ring = append(r.ring, id)
	} else {
		delete(r.set, r.ring[r.next])
		r.ring[r.next] = id
		r.next = (r.next + 1) % seenPerChannel
	}
	r.set[id] = struct{}{}
	return true
}

func (r *seenIDs) has(id string) bool {
	_, ok := r.set[id]
	return ok
}

// firstSight reports whether this is the first time the channel sees message id, and moves
// the channel's catch-up position past it.
func (c *channelState) firstSight(id, guildID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.seenIDs.add(id) {
		return false
	}
	if c.lastSeen == "" || compareIDs(id, c.lastSeen) > 0 {
		c.lastSeen = id
	}
	if guildID != "" {
		c.guildID = guildID
	}
	return true
}

func (c *channelState) seen(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seenIDs.has(id)
}

// position is where a catch-up starts: the newest message seen, and the channel's guild.
func (c *channelState) position() (lastSeen, guildID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastSeen, c.guildID
}

package text

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/safety"
	"github.com/banterbot/banter/store"
)

// channelInfo is what the pipeline needs to know of a channel.
type channelInfo struct {
	id       string
	name     string
	isThread bool
	parentID string // the thread's parent channel
	parent   string // the parent's name
}

// channelInfo resolves a channel from discordgo's state cache when the handler's session has
// one, else from REST; failures yield a bare record with the id only.
func (s *Service) channelInfo(ctx context.Context, id string) channelInfo {
	cs := s.channel(id)
	if info, ok := cs.cachedInfo(); ok {
		return info
	}
	info := channelInfo{id: id}
	c, err := s.opts.Discord.Channel(id, discordgo.WithContext(ctx))
	if err != nil {
		s.logger.Warn("channel_lookup_failed", "channel_id", id, "error", err.Error())
		return info
	}
	info.name = c.Name
	info.isThread = c.IsThread()
	if info.isThread {
		info.parentID = c.ParentID
		if p, err := s.opts.Discord.Channel(c.ParentID, discordgo.WithContext(ctx)); err == nil {
			info.parent = p.Name
		}
	}
	cs.setInfo(info)
	return info
}

// channelAllowed applies permissions.allowedChannelIds: a thread is allowed with its parent.
func (s *Service) channelAllowed(allowed []string, ch channelInfo) bool {
	if len(allowed) == 0 {
		return true
	}
	return slices.Contains(allowed, ch.id) || (ch.parentID != "" && slices.Contains(allowed, ch.parentID))
}

// channel returns the state of a channel, creating it on first use.
func (s *Service) channel(id string) *channelState {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs, ok := s.channels[id]
	if !ok {
		cs = &channelState{id: id, wakeCh: make(chan struct{}, 1)}
		s.channels[id] = cs
	}
	return cs
}

// lookup finds a message of a channel by id: the store first, then the copy an event carried
// (carried, may be nil), then REST (either is stored on the way). ok is false when it does not
// exist in that channel, cannot be fetched, or must stay out of the model's context (a blocked
// author or a ban word: such a message is not stored either); a deleted message comes back
// with Deleted. Where the bot may not read the channel's history (the session's state says so,
// or Discord refuses the fetch with 403) the message cannot be fetched: that is logged at debug
// (message_fetch_skipped, message_fetch_refused), as it happens on every such turn.
func (s *Service) lookup(ctx context.Context, channelID, id string, carried *discordgo.Message) (store.Message, bool) {
	cfg := s.cfg()
	m, err := s.opts.Store.Message(ctx, id)
	if err == nil {
		if m.ChannelID != channelID {
			return store.Message{}, false // never another channel's message
		}
		if why := s.excluded(cfg, m); why != safety.Allowed {
			s.logger.Debug("message_ignored", "reason", string(why), "source", "store", "message_id", id, "channel_id", channelID)
			return store.Message{}, false
		}
		return m, true
	}
	if !errors.Is(err, store.ErrNotFound) {
		s.logger.Warn("store_failed", "op", "message", "message_id", id, "error", err.Error())
	}
	dm, err := carried, error(nil)
	if dm == nil {
		if readable, known := s.readable(channelID); known && !readable {
			s.logger.Debug("message_fetch_skipped", "reason", "no_read_history", "message_id", id, "channel_id", channelID)
			return store.Message{}, false
		}
		dm, err = s.opts.Discord.ChannelMessage(channelID, id, discordgo.WithContext(ctx))
	}
	if err != nil {
		var re *discordgo.RESTError
		switch {
		case errors.As(err, &re) && re.Response != nil && re.Response.StatusCode == http.StatusNotFound:
			return store.Message{ID: id, ChannelID: channelID, Deleted: true}, true
		case re != nil && re.Response != nil && re.Response.StatusCode == http.StatusForbidden:
			s.logger.Debug("message_fetch_refused", "message_id", id, "channel_id", channelID, "error", err.Error())
		default:
			s.logger.Warn("message_fetch_failed", "message_id", id, "channel_id", channelID, "error", err.Error())
		}
		return store.Message{}, false
	}
	if dm.ChannelID == "" {
		dm.ChannelID = channelID
	}
	if dm.ChannelID != channelID {
		return store.Message{}, false
	}
	selfID := s.selfID()
	rec := storedFromDiscord(dm, s.channelInfo(ctx, dm.ChannelID), dm.Author != nil && dm.Author.ID == selfID)
	if why := s.excluded(cfg, rec); why != safety.Allowed {
		s.logger.Info("message_ignored", "reason", string(why), "source", "lookup", "message_id", id, "channel_id", channelID)
		return store.Message{}, false
	}
	if _, err := s.saveMessage(ctx, rec, "fetch"); err != nil {
		s.logger.Warn("store_failed", "op", "save_message", "message_id", id, "error", err.Error())
	}
	return rec, true
}

// channelState is one channel's queue and bookkeeping.
type channelState struct {
	id     string
	wakeCh chan struct{}

	mu         sync.Mutex // guards following
	info       *channelInfo
	pending    []*turn
	running    bool      // a worker goroutine owns the queue
	seq        uint64    // messages seen in this channel
	lastBotAt  time.Time // when the bot last posted here
	backfilled bool      // history fetched from REST once
	epoch      uint64    // history epoch: bumped when a backfill stores messages (turns' history is then read again)
	deleted    seenIDs   // recently deleted message ids, dropped from history read before the delete
	tally      promptTally
	typingStop func()  // ends the typing indicator, when one is showing
	seenIDs    seenIDs // recent message ids, so that a catch-up handles each message once
	lastSeen   string  // newest message id seen: where a catch-up starts
	guildID    string

	// catchUpMu serializes the channel's catch-ups (a READY's and its GUILD_CREATE's may
	// overlap): the second starts from where the first left the position.
	catchUpMu sync.Mutex
}

// historyEpoch is the channel's history epoch (from 1).
func (c *channelState) historyEpoch() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.epoch + 1
}

// newHistoryEpoch makes every turn read the channel's history again (after a backfill).
func (c *channelState) newHistoryEpoch() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
}

// noteDeleted remembers that message id was deleted.
func (c *channelState) noteDeleted(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deleted.add(id)
}

// withoutDeleted returns ms without the messages deleted since they were read.
func (c *channelState) withoutDeleted(ms []store.Message) []store.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.deleted.set) == 0 {
		return ms
	}
	out := ms[:0:0]
	for _, m := range ms {
		if !c.deleted.has(m.ID) {
			out = append(out, m)
		}
	}
	return out
}

func (c *channelState) cachedInfo() (channelInfo, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.info == nil {
		return channelInfo{}, false
	}
	return *c.info, true
}

func (c *channelState) setInfo(info channelInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.info = &info
}

// noteMessage counts a message and remembers when the bot last spoke.
func (c *channelState) noteMessage(isSelf bool, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	if isSelf && at.After(c.lastBotAt) {
		c.lastBotAt = at
	}
}

func (c *channelState) snapshot() (lastBot time.Time, seq uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastBotAt, c.seq
}

func (c *channelState) wake() {
	select {
	case c.wakeCh <- struct{}{}:
	default:
	}
}

// markBackfilled reports whether this call is the first to claim the channel's backfill.
func (c *channelState) markBackfilled() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	first := !c.backfilled
	c.backfilled = true
	return first
}

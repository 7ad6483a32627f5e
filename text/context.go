package text

import (
	"context"
	"slices"
	"time"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/safety"
	"github.com/banterbot/banter/store"
)

// contextKind says how the conversation shown to the model was chosen.
type contextKind int

const (
	kindUnknown     contextKind = iota
	kindDirectReply             // a reply to the bot: the reply chain is the conversation
	kindAnchor                  // a reply to someone else's message while addressing the bot
	kindCluster                 // anything else: the recent conversation cluster
)

func (k contextKind) String() string {
	switch k {
	case kindDirectReply:
		return "direct_reply"
	case kindAnchor:
		return "reply_anchor"
	case kindCluster:
		return "cluster"
	}
	return "unknown"
}

// convo is what the model will see of the conversation.
type convo struct {
	kind     contextKind
	channel  channelInfo
	chain    []store.Message // DirectReply: the reply chain, oldest first, ending at the trigger
	anchor   *store.Message  // kindAnchor: the message being replied to
	cluster  []store.Message // the recent cluster, oldest first, ending at the trigger
	triggers []store.Message // the batch's messages to answer, oldest first
	primary  store.Message   // the message the reply is for
	persona  string          // the persona to answer in
	topic    string          // the topic of a prefix command ("!banter(Persona) topic"), shown above the history
	people   []participant
	// mentioned are the users the lines mention who are not among people (resolveMentions),
	// and names what the lines' mention markup reads as.
	mentioned []participant
	names     mentionNames
	shown     map[string]bool // ids of messages the model was shown (valid targets)
	images    imageSet        // the images of the messages shown
}

// participant is a person in the context with the persona they gave.
type participant struct {
	id, name string
	persona  *store.UserPersona
	roleIDs  []string // the bot's own roles, for the bot itself (a mention of one is a mention of it)
	nick     string   // for the bot itself: the nickname it answers to in this guild ("" none)
}

// buildConvo gathers the context for answering batch (primary is its main turn): the reply
// chain of a DirectReply or the anchor of a reply to someone else, then the recent cluster of
// the channel (for every kind: a DirectReply shows what was said around it after the chain).
// It reads what the turn does not carry yet: the channel's history (once), the chain's older
// hops and the participants' personas. Nothing of another channel, and nothing the content
// filter excludes, is shown.
func (s *Service) buildConvo(ctx context.Context, cfg *config.Config, cs *channelState, primary *turn, batch []*turn) convo {
	c := convo{primary: primary.msg, shown: map[string]bool{}}
	c.channel = s.channelInfo(ctx, primary.msg.ChannelID)
	for _, t := range batch {
		c.triggers = append(c.triggers, t.msg)
	}
	c.persona = cfg.Bot.Persona
	history := s.historyOf(ctx, cfg, cs, primary)

	switch {
	case primary.replyToBot:
		c.kind = kindDirectReply
		c.chain = s.replyChain(ctx, cfg, primary, history)
		if len(c.chain) >= 2 {
			// The persona of the bot message being replied to carries on.
			if p := c.chain[len(c.chain)-2]; p.IsSelf && p.Persona != "" {
				if _, ok := cfg.Bot.Personas[p.Persona]; ok {
					c.persona = p.Persona
				}
			}
		}
	case primary.ref != nil && primary.addressed() && s.excluded(cfg, *primary.ref) == safety.Allowed:
		c.kind = kindAnchor
		a := *primary.ref
		c.anchor = &a
	}
	if c.kind == kindUnknown {
		c.kind = kindCluster
	}
	if cmd := primary.command; cmd != nil {
		if p, ok := resolvePersona(cfg, cmd.persona); ok {
			c.persona = p
		}
		c.topic = cmd.topic
	}
	c.cluster = s.cluster(cfg, primary.msg, history)
	s.fitBudget(cfg, &c)
	for _, m := range c.all() {
		c.shown[m.ID] = true
	}
	c.people = s.participants(ctx, cfg, c.all())
	s.resolveMentions(ctx, &c, cfg.Context.MaxParticipants, s.selfID(), s.ownRoles(primary.msg.GuildID))
	lastBot, _ := cs.snapshot()
	c.images = s.gatherImages(ctx, cfg, &c, lastBot)
	return c
}

// all returns every message shown, in display order, without duplicates.
func (c *convo) all() []store.Message {
	var out []store.Message
	seen := map[string]bool{}
	add := func(ms ...store.Message) {
		for _, m := range ms {
			if !seen[m.ID] {
				seen[m.ID] = true
				out = append(out, m)
			}
		}
	}
	if c.anchor != nil {
		add(*c.anchor)
	}
	add(c.chain...)
	add(c.cluster...)
	add(c.triggers...)
	return out
}

// replyChain walks message_reference links back from t (the turn carries its parent; older
// hops come from the channel's history when it holds them, else the store, else REST), with a
// cycle guard, up to context.replyChainDepth messages including t, and returns them oldest
// first. The walk stops at a deleted, missing or filtered message, or one in another channel.
func (s *Service) replyChain(ctx context.Context, cfg *config.Config, t *turn, history []store.Message) []store.Message {
	m := t.msg
	chain := []store.Message{m}
	seen := map[string]bool{m.ID: true}
	known := make(map[string]store.Message, len(history)+1)
	for _, h := range history {
		known[h.ID] = h
	}
	if t.ref != nil {
		known[t.ref.ID] = *t.ref
	}
	cur := m
	for len(chain) < cfg.Context.ReplyChainDepth && cur.ReplyToID != "" && !seen[cur.ReplyToID] {
		seen[cur.ReplyToID] = true
		parent, ok := known[cur.ReplyToID]
		if ok {
			ok = s.excluded(cfg, parent) == safety.Allowed
		} else {
			parent, ok = s.lookup(ctx, m.ChannelID, cur.ReplyToID, nil)
		}
		if !ok || parent.Deleted || parent.ChannelID != m.ChannelID {
			break
		}
		chain = append(chain, parent)
		cur = parent
	}
	slices.Reverse(chain)
	return chain
}

// cluster is the conversation around m: walking back from m over its channel's history (up to
// context.clusterLookback messages), stopping at the first gap longer than
// context.clusterGapMinutes (anchored time-gap clustering). It ends with m.
func (s *Service) cluster(cfg *config.Config, m store.Message, history []store.Message) []store.Message {
	gap := time.Duration(cfg.Context.ClusterGapMinutes) * time.Minute
	before := history[max(0, len(history)-cfg.Context.ClusterLookback):]
	out := []store.Message{m}
	prev := m.CreatedAt
	for i := len(before) - 1; i >= 0; i-- {
		b := before[i]
		if prev.Sub(b.CreatedAt) > gap {
			break
		}
		prev = b.CreatedAt // a hidden message still belongs to the conversation's timeline
		if b.IsSelf && !cfg.Context.IncludeOwnMessagesInHistory || s.excluded(cfg, b) != safety.Allowed {
			continue
		}
		out = append(out, b)
	}
	slices.Reverse(out)
	return out
}

// fitBudget truncates each message to maxCharsPerMessage and drops the oldest lines (cluster
// first, then chain) until the context fits context.tokenBudget. The trigger messages and the
// anchor are always kept.
func (s *Service) fitBudget(cfg *config.Config, c *convo) {
	maxChars := cfg.Context.MaxCharsPerMessage
	trunc := func(ms []store.Message) {
		for i := range ms {
			ms[i].Content = truncate(ms[i].Content, maxChars)
		}
	}
	trunc(c.chain)
	trunc(c.cluster)
	trunc(c.triggers)
	if c.anchor != nil {
		c.anchor.Content = truncate(c.anchor.Content, maxChars)
	}
	c.primary.Content = truncate(c.primary.Content, maxChars)

	budget := cfg.Context.TokenBudget
	keep := map[string]bool{}
	for _, t := range c.triggers {
		keep[t.ID] = true
	}
	for estimateTokens(c.all()) > budget {
		switch {
		case dropOldest(&c.cluster, keep):
		case dropOldest(&c.chain, keep):
		default:
			return
		}
	}
}

// dropOldest removes the oldest message not in keep; false when none can go.
func dropOldest(ms *[]store.Message, keep map[string]bool) bool {
	for i, m := range *ms {
		if !keep[m.ID] {
			*ms = append((*ms)[:i], (*ms)[i+1:]...)
			return true
		}
	}
	return false
}

// estimateTokens approximates the prompt size: about four characters per token, plus the
// per-line label.
func estimateTokens(ms []store.Message) int {
	n := 0
	for _, m := range ms {
		n += (len(m.Content)+len(m.AuthorName))/4 + 12
	}
	return n
}

// truncate cuts s to at most n runes, marking the cut.
func truncate(s string, n int) string {
	if n <= 0 || len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// participants lists the people in ms (not the bot), ordered by first appearance, capped, with
// their personas.
func (s *Service) participants(ctx context.Context, cfg *config.Config, ms []store.Message) []participant {
	var out []participant
	last := map[string]int{} // index of each person's latest line in ms
	for i, m := range ms {
		if m.IsSelf || m.AuthorID == "" {
			continue
		}
		if _, seen := last[m.AuthorID]; !seen {
			out = append(out, participant{id: m.AuthorID, name: m.AuthorName})
		}
		last[m.AuthorID] = i
	}
	// When capping, keep the people who spoke most recently: the triggers come last in ms, so
	// their authors are always kept, however early they first spoke.
	if limit := cfg.Context.MaxParticipants; len(out) > limit {
		recent := slices.Clone(out)
		slices.SortFunc(recent, func(a, b participant) int { return last[b.id] - last[a.id] })
		kept := make(map[string]bool, limit)
		for _, p := range recent[:limit] {
			kept[p.id] = true
		}
		out = slices.DeleteFunc(out, func(p participant) bool { return !kept[p.id] })
	}
	ids := make([]string, len(out))
	for i, p := range out {
		ids[i] = p.id
	}
	personas, err := s.opts.Store.Personas(ctx, ids)
	if err != nil {
		s.logger.Warn("store_failed", "op", "personas", "error", err.Error())
	}
	for i := range out {
		if p, ok := personas[out[i].id]; ok {
			out[i].persona = &p
		}
	}
	return out
}

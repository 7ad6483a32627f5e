package text

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/store"
)

// turn is one message on its way from ingest to a reply. It carries what the later stages
// need, read once: the message it replies to (looked up at ingest, used by admission, the
// reply chain and the anchor), the channel's earlier messages (read by whichever stage needs
// them first: the direct-address classifier or the context), and the prompt budget checked at
// admission (brought up to date without reading the ledger again).
type turn struct {
	msg        store.Message
	mentions   bool
	replyToBot bool           // replies to one of the bot's live messages in this channel (DirectReply)
	replyRef   string         // the message replied to, when any (bot's or someone else's), in this channel
	ref        *store.Message // that message, when it could be looked up and may be shown (nil otherwise)
	command    *prefixCommand
	arrived    time.Time // when it was received (monotonic clock)
	seq        uint64    // channel message counter at arrival
	decision   decision.Decision

	budget budget // the prompt budget checked at admission (budget.checked)

	history      []store.Message // the channel's messages before msg, oldest first
	historyEpoch uint64          // the channel's history epoch when read (0: not read)

	// unhandled: a catch-up stored msg marked unhandled (catchup_unhandled.go); the mark is
	// cleared when the turn ends (turnsHandled), or left for the next process when shutdown or
	// a crash cuts it.
	unhandled bool
}

func (t *turn) addressed() bool { return t.decision.DirectAddressed || t.command != nil }

func (t *turn) logAttrs() []slog.Attr {
	return []slog.Attr{slog.String("message_id", t.msg.ID), slog.String("channel_id", t.msg.ChannelID),
		slog.String("user_id", t.msg.AuthorID), slog.String("user_name", t.msg.AuthorName)}
}

// newTurn reads the addressing facts of a stored message: mention, reply (to the bot or not),
// command. The message replied to is looked up here, once.
func (s *Service) newTurn(ctx context.Context, cfg *config.Config, m *discordgo.Message, rec store.Message) *turn {
	selfID := s.selfID()
	t := &turn{msg: rec, arrived: time.Now()} // monotonic: the coalescing window is real time
	// Discord lists the replied-to author in mentions when a reply pings; only a mention
	// written in the text counts as one.
	for _, u := range m.Mentions {
		if u != nil && u.ID == selfID && (strings.Contains(m.Content, "<@"+selfID+">") || strings.Contains(m.Content, "<@!"+selfID+">")) {
			t.mentions = true
		}
	}
	if !t.mentions {
		t.mentions = s.mentionsOwnRole(m)
	}
	if rec.ReplyToID != "" {
		s.resolveReference(ctx, m, t)
	}
	t.command = parsePrefixCommand(cfg, rec.Content)
	return t
}

// resolveReference looks up the message m replies to, when it is in m's own channel: a
// reference naming another channel (a forward, a thread's starter message) never brings that
// channel's message into this channel's context. A reference without a channel id counts when
// the message is found in this channel. The lookup reads the store, else takes the copy the
// event carried (referenced_message), else asks REST.
func (s *Service) resolveReference(ctx context.Context, m *discordgo.Message, t *turn) {
	id := t.msg.ReplyToID
	named := m.MessageReference.ChannelID
	if named != "" && named != m.ChannelID {
		return
	}
	var carried *discordgo.Message
	if r := m.ReferencedMessage; r != nil && r.ID == id {
		carried = r
	}
	ref, ok := s.lookup(ctx, m.ChannelID, id, carried)
	if named == "" && (!ok || ref.Deleted) {
		return // a 404 in this channel: gone, or never here
	}
	t.replyRef = id
	if ok && !ref.Deleted && ref.ChannelID == m.ChannelID {
		t.ref = &ref
		t.replyToBot = ref.IsSelf
	}
}

// stageATurn renders the turn for Stage A at time now (the guild's quiet hours from cfg); nick
// is the bot's nickname in the turn's guild.
func (t *turn) stageATurn(cfg *config.Config, now time.Time, cs *channelState, nick string) decision.TextTurn {
	lastBot, seq := cs.snapshot()
	tt := decision.TextTurn{
		MessageID:      t.msg.ID,
		ChannelID:      t.msg.ChannelID,
		GuildID:        t.msg.GuildID,
		BotNickname:    nick,
		AuthorID:       t.msg.AuthorID,
		AuthorName:     t.msg.AuthorName,
		Content:        t.msg.Content,
		MentionsBot:    t.mentions,
		ReplyToBot:     t.replyToBot,
		Command:        t.command != nil,
		At:             t.msg.CreatedAt,
		Now:            now,
		BotLastSpokeAt: lastBot,
		Phase:          decision.PhaseEnqueue,
		QuietHours:     inQuietHours(cfg, t.msg.GuildID, now),
	}
	if t.seq != 0 {
		tt.Phase = decision.PhasePreGeneration
		tt.NewerMessages = int(seq - t.seq)
	}
	return tt
}

// classifierLines is how many earlier messages the direct-address classifier is shown.
const classifierLines = 8

// historyOf returns the messages before t in its channel, oldest first: at most what the
// context and the classifier show (context.clusterLookback, classifierLines), read from the
// store once per turn. A backfill of the channel since the read (a new epoch) makes it read
// again; messages deleted since are dropped.
func (s *Service) historyOf(ctx context.Context, cfg *config.Config, cs *channelState, t *turn) []store.Message {
	epoch := cs.historyEpoch()
	if t.historyEpoch != epoch {
		n := max(cfg.Context.ClusterLookback, classifierLines)
		h, err := s.opts.Store.RecentMessages(ctx, t.msg.ChannelID, t.msg.CreatedAt, n)
		if err != nil {
			s.logger.Warn("store_failed", "op", "recent_messages", "channel_id", t.msg.ChannelID, "error", err.Error())
		}
		t.history, t.historyEpoch = h, epoch
	}
	return cs.withoutDeleted(t.history)
}

// classifierView fills in what the direct-address classifier reads of tt: the messages before t
// in its channel, oldest first (Recent), and tt's content as people read it in the client
// (Shown). Mentions in both read as names (classifierNames): "<@1234> can you check this" is
// "@Alice can you check this", aimed at Alice, and the bot's own mention reads as its name.
func (s *Service) classifierView(ctx context.Context, cfg *config.Config, cs *channelState, t *turn, tt *decision.TextTurn) {
	before := s.shownOnly(cfg, s.historyOf(ctx, cfg, cs, t)) // stored before a reload of the ban words or blocked users
	before = before[max(0, len(before)-classifierLines):]
	contents := make([]string, 0, len(before)+1)
	for _, b := range before {
		contents = append(contents, b.Content)
	}
	names := s.classifierNames(ctx, t.msg.GuildID, cfg.Bot.Name, append(contents, tt.Content))
	tt.Recent = make([]decision.ContextLine, len(before))
	for i, b := range before {
		tt.Recent[i] = decision.ContextLine{Speaker: b.AuthorName, Text: readableMentions(b.Content, names), Bot: b.IsSelf}
	}
	tt.Shown = readableMentions(tt.Content, names)
}

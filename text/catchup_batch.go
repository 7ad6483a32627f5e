package text

import (
	"context"
	"errors"
	"reflect"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/safety"
	"github.com/banterbot/banter/store"
)

// A catch-up stores a page's messages in one write (Store.SaveMessages: one transaction)
// instead of one write each, where that keeps every guarantee of the one-by-one path:
//
//   - stale messages (older than text.catchUpMaxAgeMinutes: stored, never answered) are
//     batched as they are read;
//   - a fresh message joins the batch when the pipeline would store it and it cannot record a
//     durable turn (prestorable: no mention of anyone, no reply, no command, neither the bot's
//     name, an alias nor its guild nickname); it then goes through the whole pipeline after the write, whose own
//     save sees the record written already and does not write it again (saveOnce);
//   - any other fresh message (one that may address the bot) writes the batch first, then goes
//     through the pipeline alone, which records its turn before it stores it: no message newer
//     than a turn still to record is ever stored before that turn (docs/reliability.md).
//
// The batch is written at the end of each page and before each message that may address the
// bot, so a message is stored before the pipeline handles it and before anything newer.
// When the write fails, every message is stored one by one as before (store_failed logged
// for each that fails).
//
// The fresh messages are written marked unhandled, and the marks are cleared once the
// pipeline is done with them (catchup_unhandled.go): a crash between the write and the
// pipeline leaves them marked, and the next process's catch-up takes them up again.

// prestored is the catch-up's write of a fresh message, for the pipeline's save (saveOnce).
type prestored struct {
	rec store.Message
	err error // the message's result: nil, or store.ErrForgotten
	// marked: the row is marked unhandled (written so by this catch-up, or by an earlier
	// process's); the pipeline clears the mark when it is done with the message.
	marked bool
}

func (b *catchUpBatch) addStale(rec store.Message) {
	b.recs = append(b.recs, rec)
	b.stale = append(b.stale, true)
}

// addFresh adds a fresh message, written marked unhandled; again says an earlier process stored
// it so already (it is not written again).
func (b *catchUpBatch) addFresh(rec store.Message, m *discordgo.Message, again bool) {
	rec.Unhandled = true
	b.freshAt = append(b.freshAt, len(b.recs))
	b.fresh = append(b.fresh, m)
	b.again = append(b.again, again)
	b.recs = append(b.recs, rec)
	b.stale = append(b.stale, false)
}

// prestorable returns the record of a fresh caught-up message the pipeline would store and
// which cannot record a durable turn before it is stored (openBeforeStore): a member's message
// (not the bot's, not another bot's) the content filter and the channel allow, without a
// mention of anyone, a reply, a prefix command, or the bot's name, an alias or its guild nickname as a word. It is
// conservative: what it refuses goes through the pipeline alone.
func (s *Service) prestorable(cfg *config.Config, m *discordgo.Message) (store.Message, bool) {
	if m.Author == nil || m.GuildID == "" || m.Author.Bot {
		return store.Message{}, false
	}
	if selfID := s.selfID(); selfID == "" || m.Author.ID == selfID {
		return store.Message{}, false
	}
	if m.MessageReference != nil || len(m.Mentions) > 0 || len(m.MentionRoles) > 0 || m.MentionEveryone ||
		strings.Contains(m.Content, "<@") || parsePrefixCommand(cfg, m.Content) != nil ||
		s.opts.Engine.MatchName(m.GuildID, s.botNickname(m.GuildID), m.Content).Kind != decision.MatchNone {
		return store.Message{}, false
	}
	ch := s.channelInfo(s.ctx, m.ChannelID)
	if !s.channelAllowed(cfg.Permissions.AllowedChannelIDs, ch) {
		return store.Message{}, false
	}
	rec := storedFromDiscord(m, ch, false)
	if s.excluded(cfg, rec) != safety.Allowed {
		return store.Message{}, false
	}
	return rec, true
}

// flushCatchUp writes a catch-up's batch, then feeds its fresh messages through the pipeline,
// in order, and clears in one write the unhandled marks of those the pipeline was done with at
// once. A fresh message seen meanwhile (live) is left out of the write: the pipeline finds it
// a duplicate, as it did before; so is one an earlier process stored (again).
func (s *Service) flushCatchUp(r *catchUpRun) {
	b := r.batch
	r.batch = catchUpBatch{}
	if len(b.recs) == 0 {
		s.markHandled(b.handled)
		return
	}
	recs, idx := b.recs[:0:0], make([]int, len(b.recs)) // idx: where each of b.recs is in recs, or -1
	skip := make(map[int]bool, len(b.fresh))
	for k, i := range b.freshAt {
		skip[i] = b.again[k] || r.cs.seen(b.recs[i].ID)
	}
	for i, rec := range b.recs {
		idx[i] = -1
		if !skip[i] {
			idx[i] = len(recs)
			recs = append(recs, rec)
		}
	}
	var results []error
	var err error
	if len(recs) > 0 {
		results, err = s.opts.Store.SaveMessages(s.ctx, recs)
	}
	if err != nil {
		s.logger.Warn("store_failed", "op", "save_messages", "channel_id", r.cs.id, "messages", len(recs), "error", err.Error())
	}
	for i, rec := range b.recs {
		if !b.stale[i] {
			continue
		}
		if err != nil { // one by one, as before
			if _, serr := s.saveMessage(s.ctx, rec, "catch_up"); serr != nil {
				s.logger.Warn("store_failed", "op", "save_message", "message_id", rec.ID, "error", serr.Error())
			}
			continue
		}
		if errors.Is(results[idx[i]], store.ErrForgotten) {
			s.logRefused(rec, "catch_up")
		}
	}
	handled := b.handled
	for k, m := range b.fresh {
		i := b.freshAt[k]
		var pre *prestored
		switch {
		case b.again[k]:
			pre = &prestored{rec: b.recs[i], marked: true}
		case err == nil && idx[i] >= 0:
			pre = &prestored{rec: b.recs[i], err: results[idx[i]], marked: results[idx[i]] == nil}
		}
		if !s.ingest(m, !b.again[k], pre) && pre != nil && pre.marked {
			handled = append(handled, m.ID)
		}
	}
	s.markHandled(handled)
}

// saveOnce is saveMessage, unless pre is the catch-up's write of the same record: then it is
// that write's result, logged as saveMessage logs it.
func (s *Service) saveOnce(ctx context.Context, rec store.Message, source string, pre *prestored) (refused bool, err error) {
	if pre == nil || !sameRecord(pre.rec, rec) {
		return s.saveMessage(ctx, rec, source) // a stored row keeps its unhandled mark
	}
	if errors.Is(pre.err, store.ErrForgotten) {
		s.logRefused(rec, source)
		return true, nil
	}
	return false, pre.err
}

// sameRecord reports whether two records of a message are the same but for the unhandled
// mark, which only the catch-up's write sets.
func sameRecord(a, b store.Message) bool {
	a.Unhandled = b.Unhandled
	return reflect.DeepEqual(a, b)
}

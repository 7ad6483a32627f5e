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

// prestored is the catch-up's write of a fresh message, for the pipeline's save (saveOnce).
type prestored struct {
	rec store.Message
	err error // the message's result: nil, or store.ErrForgotten
}

func (b *catchUpBatch) addStale(rec store.Message) {
	b.recs = append(b.recs, rec)
	b.stale = append(b.stale, true)
}

func (b *catchUpBatch) addFresh(rec store.Message, m *discordgo.Message) {
	b.freshAt = append(b.freshAt, len(b.recs))
	b.fresh = append(b.fresh, m)
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
// in order. A fresh message seen meanwhile (live) is left out of the write: the pipeline
// finds it a duplicate, as it did before.
func (s *Service) flushCatchUp(r *catchUpRun) {
	b := r.batch
	r.batch = catchUpBatch{}
	if len(b.recs) == 0 {
		return
	}
	recs, idx := b.recs[:0:0], make([]int, len(b.recs)) // idx: where each of b.recs is in recs, or -1
	live := make(map[int]bool, len(b.fresh))
	for _, i := range b.freshAt {
		live[i] = r.cs.seen(b.recs[i].ID)
	}
	for i, rec := range b.recs {
		idx[i] = -1
		if !live[i] {
			idx[i] = len(recs)
			recs = append(recs, rec)
		}
	}
	results, err := s.opts.Store.SaveMessages(s.ctx, recs)
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
	for k, m := range b.fresh {
		i := b.freshAt[k]
		var pre *prestored
		if err == nil && idx[i] >= 0 {
			pre = &prestored{rec: b.recs[i], err: results[idx[i]]}
		}
		s.ingest(m, true, pre)
	}
}

// saveOnce is saveMessage, unless pre is the catch-up's write of the same record: then it is
// that write's result, logged as saveMessage logs it.
func (s *Service) saveOnce(ctx context.Context, rec store.Message, source string, pre *prestored) (refused bool, err error) {
	if pre == nil || !reflect.DeepEqual(pre.rec, rec) {
		return s.saveMessage(ctx, rec, source)
	}
	if errors.Is(pre.err, store.ErrForgotten) {
		s.logRefused(rec, source)
		return true, nil
	}
	return false, pre.err
}

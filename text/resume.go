package text

import (
	"context"
	"fmt"
	"slices"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/discord/post"
	"github.com/banterbot/banter/store"
)

// A reply's text is kept on its open turn before it is sent (store.Turn.Reply): a process taking
// the turn up after a crash finds the reply by its text as well as by its reference
// (earlierReply). A reply too long for one Discord message goes out in parts, one create each,
// in order, so a crash between two parts does not leave the reply cut either: the process that takes the open turn up finds the first part
// (earlierReply), finds which of the following parts are in the channel, and sends the rest,
// each with the nonce it had (turnNonce), so that a part whose create happened but was not yet
// seen posts once.

// finishReply takes up an open turn whose reply's first part (firstID) is in the channel and
// whose text was kept: it sends the parts missing after it, and closes the turn (resumed, or
// already_answered when the reply was whole). The turn stays open when the channel cannot be
// read (the next GUILD_CREATE tries again) or shutdown cuts the sends; a send that fails after
// the Sender's retries (logged send_lost) closes it as failed.
func (s *Service) finishReply(ctx context.Context, tr store.Turn, firstID string, attrs []any, closeAs func(outcome, result string)) {
	attrs = append(attrs, "reply_id", firstID)
	parts := post.Split(tr.Reply, post.MaxLen)
	next, err := s.partsPosted(ctx, tr.ChannelID, firstID, parts)
	if err != nil {
		s.opts.Metrics.turnRecovered("failed")
		s.logger.Error("turn_recovery_failed", append(attrs, "error", err.Error())...)
		return
	}
	if next == len(parts) {
		s.logger.Info("turn_recovered", append(attrs, "result", "already_answered")...)
		closeAs(store.TurnSent, "already_answered")
		return
	}
	sent, err := s.sendParts(ctx, tr, firstID, parts, next)
	switch {
	case err != nil && ctx.Err() != nil:
		s.logger.Info("turn_left_open", append(attrs, "reason", "shutting_down", "sent_ids", sent)...)
	case err != nil:
		s.logger.Error("turn_recovery_failed", append(attrs, "sent_ids", sent, "error", err.Error())...)
		closeAs(store.TurnFailed, "failed")
	default:
		s.logger.Info("turn_recovered", append(attrs, "result", "resumed", "parts", len(parts), "sent_ids", sent)...)
		closeAs(store.TurnSent, "resumed")
	}
}

// sendParts sends parts[next:] of an open turn's reply (its first part firstID), each with the nonce it had, and stores
// them; it returns the ids sent.
func (s *Service) sendParts(ctx context.Context, tr store.Turn, firstID string, parts []string, next int) ([]string, error) {
	persona := s.cfg().Bot.Persona // the first part's, when it was stored
	if first, err := s.opts.Store.Message(ctx, firstID); err == nil && first.Persona != "" {
		persona = first.Persona
	}
	// The parts' nonces are those of the turn that sent the reply (a coalesced turn's answering
	// turn), so that the two, both left open, never post a missing part twice.
	answering := tr.AnswerID
	if answering == "" {
		answering = tr.MessageID
	}
	var ids []string
	for i := next; i < len(parts); i++ {
		sent, err := s.sender.Create(ctx, post.Message{ChannelID: tr.ChannelID, GuildID: tr.GuildID, Content: parts[i],
			TurnID: tr.MessageID, Nonce: turnNonce(answering, 'r', i)})
		if err != nil {
			return ids, fmt.Errorf("text: resume reply part %d/%d to %s: %w", i+1, len(parts), tr.ChannelID, err)
		}
		if sent.ChannelID == "" {
			sent.ChannelID = tr.ChannelID
		}
		ids = append(ids, sent.ID)
		s.saveSent(ctx, sent, persona, "", nil)
	}
	return ids, nil
}

// partsPosted returns how many of a reply's parts are in the channel: the first (firstID), then
// each following part found, in order, among the bot's messages after it.
func (s *Service) partsPosted(ctx context.Context, channelID, firstID string, parts []string) (int, error) {
	self := s.selfID()
	var mine []*discordgo.Message
	after := firstID
	for range recoverPages {
		msgs, err := s.opts.Discord.ChannelMessages(channelID, catchUpPageSize, "", after, "", discordgo.WithContext(ctx))
		if err != nil {
			return 0, fmt.Errorf("text: read the parts after %s: %w", firstID, err)
		}
		for _, m := range msgs {
			if compareIDs(m.ID, after) > 0 {
				after = m.ID
			}
			if m.Author != nil && m.Author.ID == self {
				mine = append(mine, m)
			}
		}
		if len(msgs) < catchUpPageSize {
			break
		}
	}
	slices.SortFunc(mine, func(a, b *discordgo.Message) int { return compareIDs(a.ID, b.ID) })
	next := 1
	for _, m := range mine {
		if next < len(parts) && m.Content == post.Defuse(parts[next]) {
			next++
		}
	}
	return next, nil
}

// firstPartContents returns the contents the first part of a reply with this text has in the
// channel (mentions defused): as sent, or opened by targetDeletedNote when its target was
// deleted; none for no text.
func firstPartContents(reply string) []string {
	if reply == "" {
		return nil
	}
	first := post.Split(reply, post.MaxLen)[0]
	return []string{post.Defuse(first), post.Defuse(targetDeletedNote + "\n" + first)}
}

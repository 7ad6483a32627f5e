package text

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/discord/post"
	"github.com/banterbot/banter/store"
)

// Durable turns. An addressed turn is recorded in the store (open) when Stage A admits it at
// enqueue, before anything is generated, and closed with its outcome when the attempt that
// answers it ends (store.TurnSent, TurnSkipped, TurnFailed, TurnExplained). A turn cut by
// shutdown, or by a crash, stays open. When a guild becomes available to a process (start, a
// new session, its shard moving here), the open turns of that guild that this process has not
// seen are answered again (within text.catchUpMaxAgeMinutes) or explained in the log.
//
// Never twice: before answering an open turn again, the channel is searched for the bot's
// reply to it (a crash after the send, before the close; a reply in parts is completed, see
// resume.go); and every reply's nonce is derived
// from its trigger (turnNonce) and sent with enforce_nonce, so a create sent again within
// Discord's nonce window returns the first message instead of posting a second one.

// recoverPages bounds the search for an earlier reply to an open turn: the bot's reply comes
// soon after its trigger.
const recoverPages = 3

// openTurn records an admitted addressed turn; answer is the turn whose reply answers it
// (nil for itself). The store refuses it when its author ran /memory forget-me after saying it
// (one coalesced into a reply already under way, or admitted as they ran it): logged.
func (s *Service) openTurn(ctx context.Context, t *turn, answer *turn) {
	rec := store.Turn{MessageID: t.msg.ID, ChannelID: t.msg.ChannelID, GuildID: t.msg.GuildID, AdmittedAt: s.now(),
		Author: store.Origin{AuthorID: t.msg.AuthorID, At: t.msg.CreatedAt}}
	op := "admit"
	if answer != nil {
		rec.AnswerID, rec.AnswerAuthor, op = answer.msg.ID, store.Origin{AuthorID: answer.msg.AuthorID, At: answer.msg.CreatedAt}, "coalesce"
	}
	err := s.opts.Store.OpenTurn(ctx, rec)
	if errors.Is(err, store.ErrForgotten) {
		s.writeRefused(t, "turn", op)
		return
	}
	if err != nil {
		s.logger.Error("store_failed", "op", "open_turn", "message_id", t.msg.ID, "error", err.Error())
	}
}

// closeTurns records the outcome of the addressed turns of ts. An empty outcome leaves them
// open when the service is shutting down (the next process answers them), else closes them as
// explained (the pipeline logged why it did not answer: denied, rate limited, filtered).
func (s *Service) closeTurns(ts []*turn, outcome string) {
	var ids []string
	for _, t := range ts {
		if t.addressed() {
			ids = append(ids, t.msg.ID)
		}
	}
	s.closeTurnIDs(ids, outcome)
}

// closeTurnIDs records the outcome of turns by id; see closeTurns for an empty outcome.
func (s *Service) closeTurnIDs(ids []string, outcome string) {
	if len(ids) == 0 {
		return
	}
	if outcome == "" {
		if s.ctx.Err() != nil {
			s.logger.Info("turn_left_open", "trigger_ids", ids, "reason", "shutting_down")
			return
		}
		outcome = store.TurnExplained
	}
	s.opts.Metrics.turnClosed(outcome, len(ids))
	// The close outlives a shutdown's cancel: the outcome is known and must not be redone.
	if err := s.opts.Store.CloseTurns(context.WithoutCancel(s.ctx), ids, outcome, s.now()); err != nil {
		s.logger.Error("store_failed", "op", "close_turns", "trigger_ids", ids, "error", err.Error())
	}
}

// closeAttempt closes the durable turns of a batch once its attempt has ended: those admitted
// again take the attempt's outcome, the others (denied at the second Stage A, filtered after a
// reload: logged) are explained. The unhandled marks of its messages (a catch-up's) are
// cleared, unless shutdown cut the attempt short: the next process takes them up.
func (s *Service) closeAttempt(batch []*turn, a *attempt) {
	var others []*turn
	for _, t := range batch {
		if !slices.Contains(a.admitted, t) {
			others = append(others, t)
		}
	}
	s.closeTurns(a.admitted, a.outcome)
	s.closeTurns(others, store.TurnExplained)
	if a.outcome != "" || s.ctx.Err() == nil {
		s.turnsHandled(batch...)
	}
}

// outcomeOf is a send's outcome.
func outcomeOf(err error) string {
	if err != nil {
		return store.TurnFailed
	}
	return store.TurnSent
}

// recoverTurns answers or explains the open turns of a guild that this process has not seen:
// left by a process that stopped or crashed before their outcome.
func (s *Service) recoverTurns(guildID string) {
	ctx := s.ctx
	open, err := s.opts.Store.OpenTurns(ctx, guildID)
	if err != nil {
		s.logger.Error("store_failed", "op", "open_turns", "guild_id", guildID, "error", err.Error())
		return
	}
	replies := map[string]string{}
	for _, tr := range open {
		replies[tr.MessageID] = tr.Reply
	}
	for _, tr := range open {
		if s.channel(tr.ChannelID).seen(tr.MessageID) {
			continue // this process has it: live, caught up, or answering it now
		}
		if tr.Reply == "" && tr.AnswerID != "" && tr.AnswerID != tr.MessageID {
			// Coalesced into a turn left open too: its reply is that turn's, found by its text
			// when it carries no reference (a channel message), not answered a second time.
			tr.Reply = replies[tr.AnswerID]
		}
		s.recoverTurn(ctx, tr)
	}
}

// recoverTurn answers one open turn again, or closes it: too old, in a channel where the bot may
// no longer post or read (a 403 would come back at every GUILD_CREATE), already answered, or
// gone.
func (s *Service) recoverTurn(ctx context.Context, tr store.Turn) {
	cfg := s.cfg()
	attrs := []any{"message_id", tr.MessageID, "channel_id", tr.ChannelID, "answer_id", tr.AnswerID}
	closeAs := func(outcome, result string) {
		s.opts.Metrics.turnRecovered(result)
		if err := s.opts.Store.CloseTurns(ctx, []string{tr.MessageID}, outcome, s.now()); err != nil {
			s.logger.Error("store_failed", "op", "close_turns", "message_id", tr.MessageID, "error", err.Error())
		}
	}
	if age := s.now().Sub(snowflakeTime(tr.MessageID)); age > cfg.Text.CatchUpMaxAge() {
		s.logger.Warn("message_ignored", append(attrs, "reason", "open_turn_expired", "age_s", int(age.Seconds()))...)
		closeAs(store.TurnExplained, "expired")
		return
	}
	// Where nothing could be sent (by the state), or the bot may not read (Discord's 403 when
	// the state could not tell), the turn is closed: a retry would fail at every GUILD_CREATE.
	why := s.sendRefusal(tr.ChannelID)
	var reply string
	var err error
	if why == "" {
		reply, err = s.earlierReply(ctx, tr)
		why = post.Refusal(err)
	}
	if why != "" {
		s.logger.Warn("turn_recovered", append(attrs, "result", "no_permission", "reason", why)...)
		closeAs(store.TurnExplained, "no_permission")
		return
	}
	if err != nil {
		s.opts.Metrics.turnRecovered("failed")
		s.logger.Error("turn_recovery_failed", append(attrs, "error", err.Error())...)
		return // stays open: the next GUILD_CREATE tries again
	}
	if reply != "" && tr.Reply != "" {
		s.finishReply(ctx, tr, reply, attrs, closeAs) // a reply in parts: the rest may be missing
		return
	}
	if reply != "" {
		s.logger.Info("turn_recovered", append(attrs, "result", "already_answered", "reply_id", reply)...)
		closeAs(store.TurnSent, "already_answered")
		return
	}
	m, err := s.opts.Discord.ChannelMessage(tr.ChannelID, tr.MessageID, discordgo.WithContext(ctx))
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode == http.StatusNotFound {
		s.logger.Warn("message_ignored", append(attrs, "reason", "open_turn_gone")...)
		closeAs(store.TurnExplained, "gone")
		return
	}
	if err != nil {
		s.opts.Metrics.turnRecovered("failed")
		s.logger.Error("turn_recovery_failed", append(attrs, "error", err.Error())...)
		return
	}
	if m.GuildID == "" {
		m.GuildID = tr.GuildID // REST message objects carry no guild_id
	}
	_, err = s.opts.Store.Message(ctx, tr.MessageID)
	stored := err == nil // else a crash came between the turn's record and its message's
	s.opts.Metrics.turnRecovered("requeued")
	s.logger.Info("turn_recovered", append(attrs, "result", "requeued")...)
	s.ingest(m, !stored, nil) // admitted again: the same row, reopened, then closed
}

// earlierReply looks for the bot's reply to an open turn (to it, or to the turn it was
// coalesced into) among the channel's messages after it, and returns its id ("" when none): a
// message of the bot's that references either, or, when the reply's text was kept
// (tr.Reply), whose content is the reply's first part (also opened by its addressee's mention,
// as a reply goes out where the bot may not read history: post.Message.Addressee).
func (s *Service) earlierReply(ctx context.Context, tr store.Turn) (string, error) {
	self := s.selfID()
	first := firstPartContents(tr.Reply)
	after := tr.MessageID
	for range recoverPages {
		msgs, err := s.opts.Discord.ChannelMessages(tr.ChannelID, catchUpPageSize, "", after, "", discordgo.WithContext(ctx))
		if err != nil {
			return "", err
		}
		for _, m := range msgs {
			if compareIDs(m.ID, after) > 0 {
				after = m.ID
			}
			if m.Author == nil || m.Author.ID != self {
				continue
			}
			if slices.Contains(first, m.Content) || slices.Contains(first, withoutOpeningMention(m.Content)) {
				return m.ID, nil
			}
			if m.MessageReference == nil {
				continue
			}
			if ref := m.MessageReference.MessageID; ref == tr.MessageID || ref == tr.AnswerID {
				return m.ID, nil
			}
		}
		if len(msgs) < catchUpPageSize {
			break
		}
	}
	return "", nil
}

// turnNonce is the nonce of part `part` of a message answering trigger, of a kind ('r' a
// reply, 'n' a notice): the same for every attempt and every process, so that Discord's
// enforce_nonce deduplicates a create sent again. "" (a random nonce) when the trigger is not
// a snowflake.
func turnNonce(trigger string, kind byte, part int) string {
	id, err := strconv.ParseUint(trigger, 10, 64)
	if err != nil {
		return ""
	}
	return "b" + strconv.FormatUint(id, 36) + string(kind) + strconv.Itoa(part)
}

// withoutOpeningMention returns content without the user mention that opens it ("<@ID> "), or
// content itself when it opens with none.
func withoutOpeningMention(content string) string {
	rest, ok := strings.CutPrefix(content, "<@")
	if !ok {
		return content
	}
	id, after, ok := strings.Cut(rest, "> ")
	if !ok || id == "" || strings.Trim(id, "0123456789") != "" {
		return content
	}
	return after
}

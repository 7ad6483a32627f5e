package voice

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/safety"
	"github.com/banterbot/banter/store"
)

// Open turns (docs/voice.md "Open turns"): the utterance the bot is answering is recorded in
// the store (Options.OpenTurns) while it answers, so that a crash or a stop does not lose it.
// The session loop never waits on the store: it sets the record it wants (setOpen, clearOpen)
// and the session's writer goroutine (keepOpenTurns) brings the store to it. A session that
// starts takes its guild's record first (recoverTurn): it answers the utterance again when its
// member is still in the channel and it is recent, keeps it in the conversation when its
// member has gone, or only logs it.

// recoverMaxAge is how long after its utterance a recovered turn is still answered (or kept in
// the conversation): a question asked before a short restart, not a stale one.
const recoverMaxAge = 2 * time.Minute

// Results of taking up an open turn (voice_turn_recovered, banter_voice_turns_recovered_total).
const (
	recoverRequeued       = "requeued"
	recoverInConversation = "in_conversation"
	recoverExpired        = "expired"
	recoverChannelChanged = "channel_changed"
	recoverExcluded       = "excluded"
)

// openTurns is a session's side of its open-turn record.
type openTurns struct {
	want atomic.Pointer[store.OpenVoiceTurn] // set by the loop: the record the store should hold
	kick chan struct{}                       // capacity 1: want changed
	// written is what the writer last stored (nil: nothing); the writer's, then windDown's once
	// the writer has ended.
	written *store.OpenVoiceTurn
}

// setOpen records that the bot's turn opened for t (session loop).
func (s *session) setOpen(t *turn) {
	if s.svc.opts.OpenTurns == nil || t == nil {
		return
	}
	heard := t.heardAt
	if heard.IsZero() {
		heard = t.SpeechEnd
	}
	s.open.want.Store(&store.OpenVoiceTurn{GuildID: s.guildID, ChannelID: s.channel(), TurnID: t.ID,
		SpeakerID: t.SpeakerID, SpeakerName: t.SpeakerName, Transcript: t.Transcript, Addressed: t.Addressed,
		Audio: t.Duration, HeardAt: heard})
	s.kickOpen()
}

// clearOpen records that the bot's turn for t closed (session loop). While the session ends,
// its end settles the record instead (settleOpen): a stop keeps it.
func (s *session) clearOpen(t *turn) {
	if s.svc.opts.OpenTurns == nil || t == nil || s.ctx.Err() != nil {
		return
	}
	if w := s.open.want.Load(); w != nil && w.TurnID == t.ID {
		s.open.want.Store(nil)
		s.kickOpen()
	}
}

func (s *session) kickOpen() {
	select {
	case s.open.kick <- struct{}{}:
	default: // a write is pending: it reads want then
	}
}

// keepOpenTurns is the session's writer of its open-turn record: it first takes the record an
// earlier session of the guild left (before this session can write its own), then writes each
// change the loop makes, until the session ends.
func (s *session) keepOpenTurns() {
	s.recoverTurn()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.open.kick:
			s.syncOpen(s.ctx)
		}
	}
}

// syncOpen brings the store to the record the loop wants. A failed write is logged and left
// for the next change (a record left behind is taken, and logged, by the next session).
func (s *session) syncOpen(ctx context.Context) {
	want, had := s.open.want.Load(), s.open.written
	if want == had {
		return
	}
	var err error
	if want != nil {
		err = s.svc.opts.OpenTurns.KeepOpenVoiceTurn(ctx, *want)
	} else {
		err = s.svc.opts.OpenTurns.DropOpenVoiceTurn(ctx, s.guildID, had.TurnID)
	}
	if err != nil {
		s.logger().Warn("voice_open_turn_write_failed", "error", err.Error())
		return
	}
	if want != nil {
		s.logger().Debug("voice_open_turn_kept", "turn_id", want.TurnID)
	} else {
		s.logger().Debug("voice_open_turn_dropped", "turn_id", had.TurnID)
	}
	s.open.written = want
}

// settleOpen settles the record as the session ends (windDown, once the writer has ended): a
// stop keeps the turn the bot was answering for the next process; any other end drops it (its
// voice_session_end explains the turn).
func (s *session) settleOpen(reason string) {
	if s.svc.opts.OpenTurns == nil {
		return
	}
	if reason != endShutdown {
		s.open.want.Store(nil)
	} else if w := s.open.want.Load(); w != nil {
		s.logger().Info("voice_turn_left_open", "turn_id", w.TurnID, "user_id", w.SpeakerID, "transcript", w.Transcript)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), 5*time.Second)
	defer cancel()
	s.syncOpen(ctx)
}

// recoverTurn takes the guild's open-turn record, if an earlier session left one, and acts on
// it (docs/voice.md "Open turns"): requeued, in_conversation, expired, channel_changed or
// excluded, logged voice_turn_recovered and counted.
func (s *session) recoverTurn() {
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	rec, ok, err := s.svc.opts.OpenTurns.TakeOpenVoiceTurn(ctx, s.guildID)
	cancel()
	if err != nil {
		if s.ctx.Err() == nil {
			s.logger().Warn("voice_turn_recover_failed", "error", err.Error())
		}
		return
	}
	if !ok {
		return
	}
	age := s.svc.now().Sub(rec.HeardAt)
	result := recoverRequeued
	switch {
	case rec.ChannelID != s.channel():
		result = recoverChannelChanged
	case age > recoverMaxAge:
		result = recoverExpired
	case safety.ForConfig(s.svc.cfg()).Exclude(rec.SpeakerID, rec.Transcript, false) != safety.Allowed:
		result = recoverExcluded // blocked, or a ban word added, since
	case !s.inChannel(rec.SpeakerID):
		result = recoverInConversation
	}
	s.metrics.recover(result)
	attrs := []any{"turn_id", rec.TurnID, "user_id", rec.SpeakerID, "age_ms", ms(age), "result", result}
	if result != recoverExcluded {
		attrs = append(attrs, "transcript", rec.Transcript)
	}
	if result == recoverChannelChanged {
		attrs = append(attrs, "turn_channel_id", rec.ChannelID)
	}
	s.logger().Info("voice_turn_recovered", attrs...)
	if result != recoverRequeued && result != recoverInConversation {
		return
	}
	t := newTurn(Turn{ID: "r-" + rec.TurnID, GuildID: s.guildID, ChannelID: s.channel(), SpeakerID: rec.SpeakerID,
		SpeakerName: rec.SpeakerName, Transcript: rec.Transcript, Format: s.svc.opts.ListenFormat,
		Duration: rec.Audio, SpeechEnd: s.svc.now(), Addressed: rec.Addressed}, nil)
	t.heardAt, t.recovered, t.contextOnly = rec.HeardAt, true, result == recoverInConversation
	t.words.set(sttResult{text: rec.Transcript})
	s.wg.Go(func() { s.carry(t) })
}

// inChannel reports whether the gateway's voice states put userID in the session's channel.
func (s *session) inChannel(userID string) bool {
	ch := s.channel()
	return s.anyVoiceState(func(vs *discordgo.VoiceState) bool { return vs.UserID == userID && vs.ChannelID == ch })
}

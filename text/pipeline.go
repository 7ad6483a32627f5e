package text

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/safety"
)

// The text pipeline, stage by stage. A message goes
//
//	ingest    HandleMessageCreate: filter, store, addressing signals, the message it
//	          replies to (turn.go, ingest.go)
//	admit     Stage A at enqueue (the direct-address classifier off the gateway goroutine),
//	          the prompt budget, the channel's queue (ingest.go, ratelimit.go, queue.go);
//	          the channel's worker backfills its history once (backfill.go), coalesces a
//	          burst, and runs Stage A again just before generation (readmit, below)
//	context   reply chain / anchor / cluster, participants, images, the prompt (context.go,
//	          images.go, prompt.go)
//	generate  the reply model; the lookups it asked for and the follow-up pass; Stage B
//	          (generate.go, lookup.go)
//	dispatch  route, split, send, store what was sent (dispatch.go)
//
// answer below is everything after the queue, in that order. A turn carries what the stages
// need, read once (turn); an attempt carries one coalesced batch from admission to Discord.

// attempt is one reply attempt: a coalesced batch on its way from admission to Discord.
type attempt struct {
	cfg      *config.Config
	cs       *channelState
	primary  *turn   // the turn answered (the latest addressed one, else the latest)
	admitted []*turn // the batch's turns admitted again before generation
	attrs    []any   // the log attributes of every event of the attempt
	c        convo
	req      llm.GenerateRequest
	res      *llm.Result
	ans      modelAnswer // the reply model's answer, read
	fallback string      // why the model's answer could not be used as a tool call, if so
	text     string      // what will be sent
	// placeholder: text is text.forcedReplyPlaceholder, standing in for a skipped forced turn.
	placeholder bool
	// outcome is how the attempt ended for its durable turns (store.TurnSent, …; "" while
	// unknown: see closeTurns).
	outcome string

	cost                           *llm.Tally // what the attempt's model calls cost, for its log line
	start, tContext, tModel        time.Time
	lookupLatency, followupLatency time.Duration
}

// answer takes one coalesced batch from admission to a sent reply (or a logged skip).
func (s *Service) answer(cs *channelState, batch []*turn) {
	ctx := s.ctx
	defer s.stopTyping(cs) // the indicator may have started when a turn was queued
	a := &attempt{cfg: s.cfg(), cs: cs, start: s.now(), cost: &llm.Tally{}}
	defer s.closeAttempt(batch, a) // durable turns (turns.go)
	// Every model call of the attempt is charged to the guild and adds to the turn's cost.
	ctx = llm.WithAccount(ctx, llm.Account{Guild: guildOf(batch), Tally: a.cost})
	if !s.readmit(ctx, a, batch) { // admit, again
		return
	}
	s.buildContext(ctx, a)   // context
	if !s.generate(ctx, a) { // generate
		return
	}
	s.stopTyping(cs)
	s.dispatch(ctx, a) // dispatch
}

// guildOf returns the guild of a batch's turns ("" in a DM or for an empty batch).
func guildOf(batch []*turn) string {
	if len(batch) == 0 {
		return ""
	}
	return batch[0].msg.GuildID
}

// readmit runs Stage A again on a batch (the room may have moved on while it waited), picks the
// turn to answer, and checks its prompt budget and command. The turn answered is the latest
// addressed one, else the latest; the other addressed turns are answered together with it
// (logged turn_coalesced). A turn the content filter now refuses (a reload blocked its author
// or banned a word in it while it waited) is dropped. It reports whether a model call follows.
func (s *Service) readmit(ctx context.Context, a *attempt, batch []*turn) bool {
	cfg, cs := a.cfg, a.cs
	a.admitted, a.primary = s.stageAAgain(ctx, cfg, cs, batch)
	if a.primary == nil {
		s.opts.Metrics.reply("denied")
		return false
	}
	p := a.primary
	explicit := p.addressed()
	a.attrs = []any{"message_id", p.msg.ID, "channel_id", p.msg.ChannelID, "user_id", p.msg.AuthorID,
		"trigger_ids", triggerIDs(a.admitted), "signal", p.decision.Signal.String(), "addressed", explicit}
	if !s.withinBudget(ctx, a) {
		return false
	}

	if b := s.promptAllowed(ctx, cfg, cs, p, explicit, s.now()); !b.ok {
		s.opts.Metrics.reply("rate_limited")
		s.logger.Warn("reply_rate_limited", append(a.attrs, b.logAttrs(cfg)...)...)
		return false
	}
	if p.command != nil {
		if _, ok := resolvePersona(cfg, p.command.persona); !ok {
			err := s.sendNotice(ctx, p, "I don't have a persona called \""+p.command.persona+"\". Try one of: "+strings.Join(cfg.PersonaNames(), ", ")+".")
			a.outcome = outcomeOf(err)
			return false
		}
	}
	if explicit {
		s.startTyping(cs) // usually already showing since the turn was queued
	}
	return true
}

// stageAAgain re-decides each turn of a batch and returns the admitted ones with the turn to
// answer (nil when none).
func (s *Service) stageAAgain(ctx context.Context, cfg *config.Config, cs *channelState, batch []*turn) ([]*turn, *turn) {
	slices.SortStableFunc(batch, func(a, b *turn) int { return compareIDs(a.msg.ID, b.msg.ID) })
	var admitted []*turn
	for _, t := range batch {
		if s.forgottenTurn(ctx, t) {
			continue
		}
		if why := s.excluded(cfg, t.msg); why != safety.Allowed {
			s.logger.Info("message_ignored", "reason", string(why), "source", "queue", "message_id", t.msg.ID, "channel_id", t.msg.ChannelID)
			continue
		}
		tt := t.stageATurn(cfg, s.now(), cs, s.botNickname(t.msg.GuildID))
		var d decision.Decision
		if t.decision.Reason == decision.ReasonLLMDirectAddress && s.opts.Engine.Admit(&tt).Outcome == decision.OutcomePending {
			d = t.decision // the classifier judged this message at enqueue: do not ask (and pay) again
		} else {
			d = s.opts.Engine.Decide(llm.WithSlot(ctx, SlotClassifier), &tt, t.logAttrs()...)
		}
		if d.Outcome == decision.OutcomeAllow {
			t.decision = d
			admitted = append(admitted, t)
		}
	}
	if len(admitted) == 0 {
		return nil, nil
	}
	primary := admitted[len(admitted)-1]
	for _, t := range admitted {
		if t.addressed() {
			primary = t
		}
	}
	for _, t := range admitted {
		if t != primary && t.addressed() {
			// Answered together: the reply to primary covers it (the model sees the whole batch).
			s.logger.Info("turn_coalesced", "message_id", t.msg.ID, "channel_id", t.msg.ChannelID, "user_id", t.msg.AuthorID,
				"into", primary.msg.ID)
			s.openTurn(ctx, t, primary)
		}
	}
	return admitted, primary
}

// buildContext gathers what the model sees and renders the request.
func (s *Service) buildContext(ctx context.Context, a *attempt) {
	a.c = s.buildConvo(ctx, a.cfg, a.cs, a.primary, a.admitted)
	guild := a.primary.msg.GuildID
	a.req = buildRequest(a.cfg, &a.c, a.primary.decision, s.now(), participant{id: s.selfID(), name: a.cfg.Bot.Name,
		roleIDs: s.ownRoles(guild), nick: s.opts.Engine.Nickname(guild, s.botNickname(guild))})
	s.addMemories(ctx, a)
	if lookups := lookupsOffered(a.cfg); len(lookups) > 0 {
		a.req.Tools = append(a.req.Tools, lookups...)
		a.req.ParallelToolCalls = true // several lookups at once
		a.req.Instructions += "\n\n" + lookupInstructions
	}
	a.tContext = s.now()
	s.opts.Metrics.phase("context", a.tContext.Sub(a.start))
}

func triggerIDs(ts []*turn) []string {
	ids := make([]string, len(ts))
	for i, t := range ts {
		ids[i] = t.msg.ID
	}
	return ids
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// compareIDs orders Discord snowflakes (creation order): longer is later, then lexically.
func compareIDs(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

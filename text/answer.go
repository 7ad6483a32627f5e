package text

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/safety"
)

// typingInterval re-sends the typing indicator before Discord's 10 s expiry.
const typingInterval = 8 * time.Second

// attempt is one reply attempt: a coalesced batch on its way from admission to Discord.
type attempt struct {
	cfg      *config.Config
	primary  *turn   // the turn answered (the latest addressed one, else the latest)
	admitted []*turn // the batch's turns admitted again before generation
	attrs    []any   // the log attributes of every event of the attempt
	c        convo
	req      llm.GenerateRequest
	res      *llm.Result
	fallback string // why the model's answer could not be used as a tool call, if so
	text     string // what will be sent
	// placeholder: text is text.forcedReplyPlaceholder, standing in for a skipped forced turn.
	placeholder bool

	start, tContext, tModel time.Time
	followupLatency         time.Duration
}

// answer takes one coalesced batch from admission to a sent reply (or a logged skip).
func (s *Service) answer(cs *channelState, batch []*turn) {
	ctx := s.ctx
	defer s.stopTyping(cs) // the indicator may have started when a turn was queued
	a := &attempt{cfg: s.cfg(), start: s.now()}
	a.admitted, a.primary = s.readmit(ctx, a.cfg, cs, batch)
	if a.primary == nil {
		s.opts.Metrics.reply("denied")
		return
	}
	p, cfg := a.primary, a.cfg
	explicit := p.addressed()
	a.attrs = []any{"message_id", p.msg.ID, "channel_id", p.msg.ChannelID, "user_id", p.msg.AuthorID,
		"trigger_ids", triggerIDs(a.admitted), "signal", p.decision.Signal.String(), "addressed", explicit}

	if b := s.promptAllowed(ctx, cfg, p.msg.ChannelID, p.msg.AuthorID, explicit, s.now()); !b.ok {
		s.opts.Metrics.reply("rate_limited")
		s.logger.Warn("reply_rate_limited", append(a.attrs, b.logAttrs(cfg)...)...)
		return
	}
	if p.command != nil {
		if _, ok := resolvePersona(cfg, p.command.persona); !ok {
			s.sendNotice(ctx, p, "I don't have a persona called \""+p.command.persona+"\". Try one of: "+strings.Join(cfg.PersonaNames(), ", ")+".")
			return
		}
	}
	if explicit {
		s.startTyping(cs) // usually already showing since the turn was queued
	}

	a.c = s.buildConvo(ctx, cfg, p, a.admitted)
	a.tContext = s.now()
	s.opts.Metrics.phase("context", a.tContext.Sub(a.start))

	a.req = buildRequest(cfg, &a.c, p.decision, s.now(), cfg.Bot.Name)
	s.recordPrompt(ctx, p.msg.ChannelID, p.msg.AuthorID, explicit, s.now())
	res, err := s.opts.Model.Generate(ctx, a.req)
	a.tModel = s.now()
	s.opts.Metrics.phase("model", a.tModel.Sub(a.tContext))
	if err != nil {
		s.stopTyping(cs)
		s.modelFailed(ctx, p, err, a.attrs)
		return
	}
	a.res = res
	if !s.review(ctx, a) {
		return
	}
	s.stopTyping(cs)
	s.deliver(ctx, a)
}

// readmit runs Stage A again on a batch (the room may have moved on while it waited) and picks
// the turn to answer: the latest addressed one, else the latest. The other addressed turns are
// answered together with it (logged turn_coalesced). A turn the content filter now refuses (a
// reload blocked its author or banned a word in it while it waited) is dropped. It returns nil
// when nothing is admitted.
func (s *Service) readmit(ctx context.Context, cfg *config.Config, cs *channelState, batch []*turn) ([]*turn, *turn) {
	slices.SortStableFunc(batch, func(a, b *turn) int { return compareIDs(a.msg.ID, b.msg.ID) })
	var admitted []*turn
	for _, t := range batch {
		if why := s.excluded(cfg, t.msg); why != safety.Allowed {
			// A reload blocked its author or banned a word in it while it waited.
			s.logger.Info("message_ignored", "reason", string(why), "source", "queue", "message_id", t.msg.ID, "channel_id", t.msg.ChannelID)
			continue
		}
		tt := t.stageATurn(s.now(), cs)
		var d decision.Decision
		if t.decision.Reason == decision.ReasonLLMDirectAddress && s.opts.Engine.Admit(&tt).Outcome == decision.OutcomePending {
			d = t.decision // the classifier judged this message at enqueue: do not ask (and pay) again
		} else {
			d = s.opts.Engine.Decide(ctx, &tt, t.logAttrs()...)
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
		}
	}
	return admitted, primary
}

// review is Stage B over the model's answer, then the optional follow-up pass (replyFollowupLlm).
// It sets a.text and reports whether there is something to send. A turn the model declined
// ends here, except a forced one, which gets the placeholder reply (text.forcedReplyOnSkip).
func (s *Service) review(ctx context.Context, a *attempt) bool {
	p := a.primary
	text, fallback := replyText(a.res)
	a.fallback = fallback
	text, stageB := decision.ReplyDecision(decision.PipelineText, text, p.decision.Force)
	stageB.TurnID, stageB.ChannelID, stageB.UserID = p.msg.ID, p.msg.ChannelID, p.msg.AuthorID
	stageB.Signal, stageB.DirectAddressed = p.decision.Signal, p.decision.DirectAddressed
	s.opts.Decisions.Record(ctx, stageB, p.logAttrs()...)
	if stageB.Outcome != decision.OutcomeAllow {
		return s.declined(a, stageB.Reason, "reply", a.res.Refusal)
	}
	a.text = text
	if !a.cfg.ReplyFollowupLLM.Enabled {
		return true
	}
	tFollow := s.now()
	revised, reason, refusal, ok := s.followup(ctx, a.cfg, p, a.req, text, a.attrs)
	a.followupLatency = s.now().Sub(tFollow)
	s.opts.Metrics.phase("followup", a.followupLatency)
	if !ok {
		return s.declined(a, reason, "followup", refusal)
	}
	a.text = revised
	return true
}

// declined handles a model's (or the reviewer's) skip. A forced turn (a mention, a reply to the
// bot, a command, the bot's name) with text.forcedReplyOnSkip placeholder gets the placeholder
// reply; a refusal is a safety skip and stays a skip, as do unforced turns and the silent mode.
func (s *Service) declined(a *attempt, reason decision.Reason, pass, refusal string) bool {
	p, cfg := a.primary, a.cfg
	safetySkip := refusal != ""
	if p.decision.Force && !safetySkip && cfg.Text.ForcedReplyOnSkip == "placeholder" {
		s.logger.Info("reply_placeholder", append(a.attrs, "reason", reason.String(), "pass", pass, "persona", a.c.persona)...)
		a.text, a.placeholder = cfg.Text.ForcedReplyPlaceholder, true
		return true
	}
	s.opts.Metrics.reply("skipped")
	attrs := append(a.attrs, "reason", reason.String(), "pass", pass, "force", p.decision.Force, "safety", safetySkip,
		"persona", a.c.persona, "latency_context_ms", ms(a.tContext.Sub(a.start)), "latency_model_ms", ms(a.tModel.Sub(a.tContext)))
	if safetySkip {
		attrs = append(attrs, "refusal", refusal)
	}
	s.logger.Info("reply_skipped", attrs...)
	return false
}

// deliver routes and sends the attempt's text, and logs the result.
func (s *Service) deliver(ctx context.Context, a *attempt) {
	p := a.primary
	plan := sendPlan{replyTo: p.msg.ID, mode: "trigger_reply"}
	if !a.placeholder {
		plan = s.plan(a.cfg, &a.c, p, a.res, a.fallback)
	}
	plan.text = a.text
	tSend := s.now()
	sent, err := s.send(ctx, a.cfg, p, &a.c, &plan)
	done := s.now()
	s.opts.Metrics.phase("send", done.Sub(tSend))
	s.opts.Metrics.phase("total", done.Sub(a.start))
	if err != nil {
		s.opts.Metrics.reply("failed")
		s.logger.Error("send_failed", append(a.attrs, "error", err.Error())...)
		return
	}
	if a.placeholder {
		s.opts.Metrics.reply("placeholder")
	} else {
		s.opts.Metrics.reply("sent")
	}
	s.opts.Metrics.target(plan.mode)
	event := "sent_message"
	if plan.replyTo != "" {
		event = "sent_reply"
	}
	s.logger.Info(event, append(a.attrs, "sent_ids", sent, "mode", plan.mode, "target_message_id", plan.replyTo,
		"fallback", plan.fallback, "placeholder", a.placeholder, "persona", a.c.persona, "context", a.c.kind.String(),
		"model", a.res.Model, "latency_context_ms", ms(a.tContext.Sub(a.start)), "latency_model_ms", ms(a.tModel.Sub(a.tContext)),
		"latency_followup_ms", ms(a.followupLatency), "latency_send_ms", ms(done.Sub(tSend)),
		"latency_total_ms", ms(done.Sub(a.start)))...)
}

// replyText picks the text of a model result: the tool call's text, else the free text. The
// second value names a fallback when the tool call was absent or unusable.
func replyText(res *llm.Result) (string, string) {
	switch res.Kind {
	case llm.ResultToolCall:
		return res.Send.Text, ""
	case llm.ResultInvalidToolCall:
		if res.Send.Text != "" {
			return res.Send.Text, "invalid_tool_call"
		}
		return res.Text, "invalid_tool_call"
	}
	return res.Text, "free_text"
}

// modelFailed handles a model error: an addressed user gets a short in-character apology, and
// every failure is logged.
func (s *Service) modelFailed(ctx context.Context, t *turn, err error, attrs []any) {
	s.logger.Error("reply_failed", append(attrs, "error", err.Error())...)
	if !t.addressed() {
		s.opts.Metrics.reply("failed")
		return
	}
	s.opts.Metrics.reply("apologized")
	s.sendNotice(ctx, t, apology)
}

// apology is sent when the model fails on a turn that addressed the bot.
const apology = "Sorry, my thoughts got tangled just now — give me a moment and ask me again?"

// sendNotice replies to t with a fixed text (no model involved).
func (s *Service) sendNotice(ctx context.Context, t *turn, text string) {
	cfg := s.cfg()
	_, err := s.send(ctx, cfg, t, nil, &sendPlan{text: text, replyTo: t.msg.ID, mode: "trigger_reply"})
	if err != nil {
		s.logger.Error("send_failed", "message_id", t.msg.ID, "channel_id", t.msg.ChannelID, "error", err.Error())
	}
}

// startTyping shows the typing indicator in the channel until stopTyping; it is started when
// an addressed turn is queued, so people see the bot at work through the coalescing window.
func (s *Service) startTyping(cs *channelState) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	s.startTypingLocked(cs)
}

// startTypingLocked is startTyping with cs.mu held.
func (s *Service) startTypingLocked(cs *channelState) {
	if cs.typingStop == nil {
		cs.typingStop = s.keepTyping(s.ctx, cs.id)
	}
}

// stopTyping ends the channel's typing indicator, if any.
func (s *Service) stopTyping(cs *channelState) {
	cs.mu.Lock()
	stop := cs.typingStop
	cs.typingStop = nil
	cs.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// keepTyping shows the typing indicator until the returned function is called. A typing
// request already under way is let finish (so even a fast reply shows it once); the goroutine
// belongs to the service's wait group.
func (s *Service) keepTyping(ctx context.Context, channelID string) func() {
	stop := make(chan struct{})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(typingInterval)
		defer t.Stop()
		for {
			if err := s.opts.Discord.ChannelTyping(channelID, discordgo.WithContext(ctx)); err != nil && ctx.Err() == nil {
				s.logger.Debug("typing_failed", "channel_id", channelID, "error", err.Error())
			}
			select {
			case <-ctx.Done():
				return
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(stop) }) }
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

// followupInstructions ask the follow-up model (replyFollowupLlm) to review a draft.
const followupInstructions = `You are reviewing a draft chat reply before it is sent. Keep the
character and the language of the draft. Fix anything wrong, unkind, off-topic or too long;
otherwise keep it as it is. Answer with only the final message text, nothing else. If the draft
should not be sent at all, answer exactly [SKIP].`

// followup runs the optional second model pass over a draft. It returns the text to send,
// or false with the reviewer's reason (and refusal, if it refused) when it skipped the draft.
// A failing reviewer keeps the draft.
func (s *Service) followup(ctx context.Context, cfg *config.Config, t *turn, req llm.GenerateRequest, draft string, attrs []any) (string, decision.Reason, string, bool) {
	review := llm.GenerateRequest{
		Model:        cfg.ReplyFollowupLLM.Model,
		Instructions: req.Instructions + "\n\n" + followupInstructions,
		Messages: append(append([]llm.Message{}, req.Messages...),
			llm.Message{Role: llm.RoleUser, Content: "Draft reply to review:\n" + draft}),
	}
	model := s.opts.FollowupModel
	if model == nil {
		model = s.opts.Model
	}
	res, err := model.Generate(ctx, review)
	if err != nil {
		s.logger.Warn("reply_followup_failed", append(attrs, "error", err.Error())...)
		return draft, decision.ReasonModelReplied, "", true
	}
	text, _ := replyText(res)
	text, d := decision.ReplyDecision(decision.PipelineText, text, t.decision.Force)
	d.TurnID, d.ChannelID, d.UserID = t.msg.ID, t.msg.ChannelID, t.msg.AuthorID
	d.Signal, d.DirectAddressed = t.decision.Signal, t.decision.DirectAddressed
	s.opts.Decisions.Record(ctx, d, append(t.logAttrs(), slog.String("pass", "followup"))...)
	if d.Outcome != decision.OutcomeAllow {
		return "", d.Reason, res.Refusal, false
	}
	return text, d.Reason, "", true
}

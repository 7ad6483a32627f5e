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
)

// typingInterval re-sends the typing indicator before Discord's 10 s expiry.
const typingInterval = 8 * time.Second

// answer takes one coalesced batch from admission to a sent reply (or a logged skip).
func (s *Service) answer(cs *channelState, batch []*turn) {
	ctx := s.ctx
	cfg := s.cfg()
	start := s.now()
	slices.SortStableFunc(batch, func(a, b *turn) int { return compareIDs(a.msg.ID, b.msg.ID) })
	stopTyping := func() { s.stopTyping(cs) }
	defer stopTyping() // the indicator may have started when a turn was queued

	// Stage A again: the room may have moved on while the batch waited.
	var admitted []*turn
	for _, t := range batch {
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
		s.opts.Metrics.reply("denied")
		return
	}
	primary := admitted[len(admitted)-1]
	for _, t := range admitted {
		if t.addressed() {
			primary = t // the latest addressed turn is the one to answer
		}
	}
	explicit := primary.addressed()
	for _, t := range admitted {
		if t != primary && t.addressed() {
			// Answered together: the reply to primary covers it (the model sees the whole batch).
			s.logger.Info("turn_coalesced", "message_id", t.msg.ID, "channel_id", t.msg.ChannelID, "user_id", t.msg.AuthorID,
				"into", primary.msg.ID)
		}
	}
	attrs := []any{"message_id", primary.msg.ID, "channel_id", primary.msg.ChannelID, "user_id", primary.msg.AuthorID,
		"trigger_ids", triggerIDs(admitted), "signal", primary.decision.Signal.String(), "addressed", explicit}

	if ok, used := s.promptAllowed(ctx, cfg, primary.msg.ChannelID, explicit, s.now()); !ok {
		s.opts.Metrics.reply("rate_limited")
		s.logger.Warn("reply_rate_limited", append(attrs, "prompts_last_hour", used,
			"max_prompts_per_hour", cfg.Activity.MaxPromptsPerHour, "explicit_reserve", cfg.Activity.ExplicitReservePromptsPerHour)...)
		return
	}

	if primary.command != nil {
		if _, ok := resolvePersona(cfg, primary.command.persona); !ok {
			s.sendNotice(ctx, primary, "I don't have a persona called \""+primary.command.persona+"\". Try one of: "+strings.Join(cfg.PersonaNames(), ", ")+".")
			return
		}
	}

	if explicit {
		s.startTyping(cs) // usually already showing since the turn was queued
	}

	c := s.buildConvo(ctx, cfg, primary, admitted)
	tContext := s.now()
	s.opts.Metrics.phase("context", tContext.Sub(start))

	req := buildRequest(cfg, &c, primary.decision, s.now(), cfg.Bot.Name)
	s.recordPrompt(ctx, primary.msg.ChannelID, explicit, s.now())
	res, err := s.opts.Model.Generate(ctx, req)
	tModel := s.now()
	s.opts.Metrics.phase("model", tModel.Sub(tContext))
	if err != nil {
		stopTyping()
		s.modelFailed(ctx, primary, err, attrs)
		return
	}

	text, fallback := replyText(res)
	text, stageB := decision.ReplyDecision(decision.PipelineText, text, primary.decision.Force)
	stageB.TurnID, stageB.ChannelID, stageB.UserID = primary.msg.ID, primary.msg.ChannelID, primary.msg.AuthorID
	stageB.Signal, stageB.DirectAddressed = primary.decision.Signal, primary.decision.DirectAddressed
	s.opts.Decisions.Record(ctx, stageB, primary.logAttrs()...)
	if stageB.Outcome != decision.OutcomeAllow {
		s.opts.Metrics.reply("skipped")
		s.logger.Info("reply_skipped", append(attrs, "reason", stageB.Reason.String(), "force", primary.decision.Force,
			"latency_context_ms", ms(tContext.Sub(start)), "latency_model_ms", ms(tModel.Sub(tContext)))...)
		return
	}

	tFollow := s.now()
	if cfg.ReplyFollowupLLM.Enabled {
		revised, ok := s.followup(ctx, cfg, &c, primary, req, text, attrs)
		s.opts.Metrics.phase("followup", s.now().Sub(tFollow))
		if !ok {
			s.opts.Metrics.reply("skipped")
			return
		}
		text = revised
	}
	followupLatency := s.now().Sub(tFollow)

	plan := s.plan(cfg, &c, primary, res, fallback)
	plan.text = text
	stopTyping()
	tSend := s.now()
	sent, err := s.send(ctx, cfg, primary, &c, &plan)
	done := s.now()
	s.opts.Metrics.phase("send", done.Sub(tSend))
	s.opts.Metrics.phase("total", done.Sub(start))
	if err != nil {
		s.opts.Metrics.reply("failed")
		s.logger.Error("send_failed", append(attrs, "error", err.Error())...)
		return
	}
	s.opts.Metrics.reply("sent")
	s.opts.Metrics.target(plan.mode)
	event := "sent_message"
	if plan.replyTo != "" {
		event = "sent_reply"
	}
	s.logger.Info(event, append(attrs, "sent_ids", sent, "mode", plan.mode, "target_message_id", plan.replyTo,
		"fallback", plan.fallback, "persona", c.persona, "context", c.kind.String(), "model", res.Model,
		"latency_context_ms", ms(tContext.Sub(start)), "latency_model_ms", ms(tModel.Sub(tContext)),
		"latency_followup_ms", ms(followupLatency), "latency_send_ms", ms(done.Sub(tSend)),
		"latency_total_ms", ms(done.Sub(start)))...)
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

// followup runs the optional second model pass over a draft. It returns the text to send and
// false when the turn ends here (the reviewer skipped it). A failing reviewer keeps the draft.
func (s *Service) followup(ctx context.Context, cfg *config.Config, c *convo, t *turn, req llm.GenerateRequest, draft string, attrs []any) (string, bool) {
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
		return draft, true
	}
	text, _ := replyText(res)
	text, d := decision.ReplyDecision(decision.PipelineText, text, t.decision.Force)
	d.TurnID, d.ChannelID, d.UserID = t.msg.ID, t.msg.ChannelID, t.msg.AuthorID
	d.Signal, d.DirectAddressed = t.decision.Signal, t.decision.DirectAddressed
	s.opts.Decisions.Record(ctx, d, append(t.logAttrs(), slog.String("pass", "followup"))...)
	if d.Outcome != decision.OutcomeAllow {
		s.logger.Info("reply_skipped", append(attrs, "reason", d.Reason.String(), "pass", "followup", "persona", c.persona)...)
		return "", false
	}
	return text, true
}

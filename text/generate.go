package text

import (
	"context"
	"log/slog"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/llm"
)

// generate asks the reply model, reads its answer and runs Stage B over it, then the optional
// follow-up pass (replyFollowupLlm). It sets a.text and reports whether there is something to
// send. A turn the model declined ends here, except a forced one, which gets the placeholder
// reply (text.forcedReplyOnSkip). A failed model call apologises to an addressed user.
func (s *Service) generate(ctx context.Context, a *attempt) bool {
	p := a.primary
	s.recordPrompt(ctx, a.cs, p.msg.AuthorID, p.addressed(), s.now())
	res, err := s.opts.Model.Generate(ctx, a.req)
	a.tModel = s.now()
	s.opts.Metrics.phase("model", a.tModel.Sub(a.tContext))
	if err != nil {
		s.stopTyping(a.cs)
		s.modelFailed(ctx, p, err, a.attrs)
		return false
	}
	a.res = res
	a.ans = s.read(res, nil)
	return s.review(ctx, a)
}

// read reads a model result as the pipeline's answer and counts an unusable tool call.
func (s *Service) read(res *llm.Result, other func(string) bool) modelAnswer {
	ans := readAnswer(res, other)
	if ans.err != nil {
		s.opts.Metrics.invalidToolCall(ans.err.reason)
	}
	return ans
}

// review is Stage B over the model's answer, then the optional follow-up pass.
func (s *Service) review(ctx context.Context, a *attempt) bool {
	p := a.primary
	text, fallback := replyText(a.res, a.ans)
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

// replyText picks the text of a model answer: the tool call's text, else the free text. The
// second value names a fallback when the tool call was absent or unusable.
func replyText(res *llm.Result, ans modelAnswer) (string, string) {
	switch ans.kind {
	case answerSend:
		return ans.send.Text, ""
	case answerInvalidSend:
		if ans.send.Text != "" {
			return ans.send.Text, "invalid_tool_call"
		}
		return res.Text, "invalid_tool_call"
	}
	return res.Text, "free_text"
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
	text, _ := replyText(res, s.read(res, nil))
	text, d := decision.ReplyDecision(decision.PipelineText, text, t.decision.Force)
	d.TurnID, d.ChannelID, d.UserID = t.msg.ID, t.msg.ChannelID, t.msg.AuthorID
	d.Signal, d.DirectAddressed = t.decision.Signal, t.decision.DirectAddressed
	s.opts.Decisions.Record(ctx, d, append(t.logAttrs(), slog.String("pass", "followup"))...)
	if d.Outcome != decision.OutcomeAllow {
		return "", d.Reason, res.Refusal, false
	}
	return text, d.Reason, "", true
}

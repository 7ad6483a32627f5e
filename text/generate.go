package text

import (
	"context"
	"log/slog"
	"time"

	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/store"
)

// The model slots text charges its calls to (llm.Account), named by their config sections.
const (
	SlotReply       = "llm"
	SlotClassifier  = "llm.directAddressClassifier"
	SlotFollowup    = "replyFollowupLlm"
	SlotWebSearch   = "lookups.webSearch"
	SlotImageLookup = "lookups.image"
)

// generate is the two-stage reply. The reply model (llm1) answers through send_discord_message,
// or asks for lookups (with replyFollowupLlm enabled); when it asks for none, its answer is
// final. When it does, the lookups run (lookup.go) and the follow-up pass (replyFollowupLlm,
// its own provider and model) writes the final reply from their results. Stage B then reads
// the answer: a declined turn ends here, except a forced one, which gets the placeholder reply
// (text.forcedReplyOnSkip). A failed model call apologises to an addressed user. It sets a.text
// and reports whether there is something to send.
func (s *Service) generate(ctx context.Context, a *attempt) bool {
	p := a.primary
	s.recordPrompt(ctx, a.cs, p, s.now())
	res, err := s.opts.Model.Generate(llm.WithSlot(ctx, SlotReply), a.req)
	a.tModel = s.now()
	s.opts.Metrics.phase("llm1", a.tModel.Sub(a.tContext))
	if err != nil {
		s.stopTyping(a.cs)
		a.outcome = s.modelFailed(ctx, p, err, a.attrs)
		return false
	}
	a.res = res
	isLookup := func(name string) bool { return name != sendMessageToolName && offered(a.req.Tools, name) }
	a.ans = s.read(res, isLookup)
	calls := s.lookupCalls(a, res)
	if len(calls) == 0 {
		return s.review(ctx, a, "reply")
	}
	tLookup := s.now()
	results := s.runLookups(ctx, a, calls)
	a.lookupLatency = s.now().Sub(tLookup)
	s.opts.Metrics.phase("lookup", a.lookupLatency)
	return s.followup(ctx, a, results)
}

// offered reports whether a tool of that name is among tools.
func offered(tools []llm.Tool, name string) bool {
	for _, t := range tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// read reads a model result as the pipeline's answer and counts an unusable tool call.
func (s *Service) read(res *llm.Result, other func(string) bool) modelAnswer {
	ans := readAnswer(res, other)
	if ans.err != nil {
		s.opts.Metrics.invalidToolCall(ans.err.reason)
	}
	return ans
}

// followupInstructions tell the follow-up pass what to do with the lookups' results.
const followupInstructions = `You asked to look things up before answering; the results follow the conversation.
Now write your reply to the conversation, using what the lookups found where it helps (say so
plainly when a lookup failed or found nothing and it matters). Call send_discord_message with
your final message, or answer exactly [SKIP] if nobody needs you to speak. No more lookups.`

// followup runs the follow-up pass over the lookups' results: the same instructions and
// conversation (images included), the results, and the reply model's draft when it wrote one;
// only send_discord_message is offered. If the pass fails, the reply model's draft is used
// when it has one; otherwise the turn fails as a model failure does.
func (s *Service) followup(ctx context.Context, a *attempt, results []lookupResult) bool {
	msgs := append([]llm.Message{}, a.req.Messages...)
	notes := renderLookups(results)
	if draft, _ := replyText(a.res, a.ans); draft != "" {
		notes += "\nYour draft before the lookups: " + draft + "\n"
	}
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: notes})
	req := llm.GenerateRequest{
		Model:        a.cfg.ReplyFollowupLLM.Model,
		Instructions: a.req.Instructions + "\n\n" + followupInstructions,
		Messages:     msgs,
		Tools:        []llm.Tool{sendMessageTool},
	}
	tFollow := s.now()
	res, err := s.model(s.opts.FollowupModel).Generate(llm.WithSlot(ctx, SlotFollowup), req)
	a.followupLatency = s.now().Sub(tFollow)
	s.opts.Metrics.phase("followup", a.followupLatency)
	if err != nil {
		if draft, _ := replyText(a.res, a.ans); draft != "" {
			s.logger.Warn("reply_followup_failed", append(a.attrs, "error", err.Error(), "used", "draft")...)
			return s.review(ctx, a, "reply")
		}
		s.stopTyping(a.cs)
		a.outcome = s.modelFailed(ctx, a.primary, err, a.attrs)
		return false
	}
	a.res, a.ans = res, s.read(res, nil)
	return s.review(ctx, a, "followup")
}

// model returns g, or the reply model when g is nil.
func (s *Service) model(g Generator) Generator {
	if g == nil {
		return s.opts.Model
	}
	return g
}

// review is Stage B over the answer of a pass ("reply" or "followup").
func (s *Service) review(ctx context.Context, a *attempt, pass string) bool {
	p := a.primary
	text, fallback := replyText(a.res, a.ans)
	a.fallback = fallback
	text, stageB := decision.ReplyDecision(decision.PipelineText, text, p.decision.Force)
	stageB.TurnID, stageB.ChannelID, stageB.UserID = p.msg.ID, p.msg.ChannelID, p.msg.AuthorID
	stageB = stageB.Following(p.decision)
	if stageB.Outcome != decision.OutcomeAllow {
		// A skip is the turn's outcome: logged once, by declined (reply_skipped, or the
		// placeholder's sent_reply), not as a Stage B event of its own as well.
		s.opts.Decisions.Count(stageB)
		return s.declined(a, stageB.Reason, pass, a.res.Refusal)
	}
	s.opts.Decisions.Record(ctx, stageB, append(p.logAttrs(), slog.String("pass", pass))...)
	a.text = text
	return true
}

// declined handles a skip. A forced turn (a mention, a reply to the bot, a command, the bot's
// name) with text.forcedReplyOnSkip placeholder gets the placeholder reply; a refusal is a
// safety skip and stays a skip, as do unforced turns and the silent mode.
func (s *Service) declined(a *attempt, reason decision.Reason, pass, refusal string) bool {
	p, cfg := a.primary, a.cfg
	safetySkip := refusal != ""
	if p.decision.Force && !safetySkip && cfg.Text.ForcedReplyOnSkip == "placeholder" {
		s.logger.Info("reply_placeholder", append(a.attrs, "reason", reason.String(), "pass", pass, "persona", a.c.persona)...)
		a.text, a.placeholder = cfg.Text.ForcedReplyPlaceholder, true
		return true
	}
	s.opts.Metrics.reply("skipped")
	a.outcome = store.TurnSkipped
	// The Stage B decision's fields (as decision.Decision.Log names them) make this line the
	// decision feed's row too (the playground), in place of a second Stage B event.
	attrs := append(a.attrs, "pipeline", decision.PipelineText.String(), "stage", decision.StageB.String(),
		"outcome", decision.OutcomeDeny.String(), "turnId", p.msg.ID, "userId", p.msg.AuthorID,
		"reason", reason.String(), "pass", pass, "force", p.decision.Force, "safety", safetySkip, "persona", a.c.persona)
	attrs = append(attrs, a.latencies(time.Time{})...)
	if safetySkip {
		attrs = append(attrs, "refusal", refusal)
	}
	s.logger.Info("reply_skipped", attrs...)
	return false
}

// latencies are the attempt's cost in US dollars (cost_usd: its model calls at the configured
// prices) and its phases for its log line (llm1Ms, lookupMs, followupMs in the
// design's words), up to done (zero: no send phase).
func (a *attempt) latencies(done time.Time) []any {
	out := []any{"cost_usd", a.cost.USD(), "latency_context_ms", ms(a.tContext.Sub(a.start)), "latency_llm1_ms", ms(a.tModel.Sub(a.tContext)),
		"latency_lookup_ms", ms(a.lookupLatency), "latency_followup_ms", ms(a.followupLatency)}
	if !done.IsZero() {
		out = append(out, "latency_total_ms", ms(done.Sub(a.start)))
	}
	return out
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

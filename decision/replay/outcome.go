package replay

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"

	"github.com/banterbot/banter/decision"
)

// Routing is what the reply-routing table needs beyond the text policy (which names the
// initiative channels): text.targetedReplies and activity.initiativeReplyShare.
type Routing struct {
	TargetedReplies bool
	ReplyShare      float64
}

// Text outcome events, as the live text pipeline logs them: one per admitted turn.
const (
	eventSkipped = "reply_skipped"
	eventReply   = "sent_reply"
	eventMessage = "sent_message"
	eventFailed  = "reply_failed"
)

// textOutcome logs how an admitted text turn ended (with -llm): reply_skipped when Stage B
// skipped it, else sent_reply or sent_message as the routing table sends it (the generator
// answers in plain text, so the model never chooses a target), or reply_failed. It sets the
// result's outcome and counts it for the summary.
func (r *runner) textOutcome(ctx context.Context, res *Result, ev Event, d decision.Decision, sd decision.Decision) {
	attrs := []slog.Attr{slog.String("message_id", ev.ID), slog.String("channel_id", ev.ChannelID),
		slog.String("user_id", ev.AuthorID), slog.Any("trigger_ids", []string{ev.ID}), slog.Bool("addressed", d.DirectAddressed)}
	event := eventFailed
	switch {
	case res.Error != "":
		attrs = append(attrs, slog.String("error", res.Error))
	case sd.Skipped():
		event = eventSkipped
		attrs = append(attrs, slog.String("pipeline", sd.Pipeline.String()), slog.String("stage", sd.Stage.String()),
			slog.String("reason", sd.Reason.String()), slog.Bool("force", sd.Force))
	default:
		route := decision.Route(decision.RouteInput{
			Addressed:         d.DirectAddressed,
			InitiativeChannel: slices.Contains(r.opts.Text.InitiativeChannelIDs, ev.ChannelID),
			TargetedReplies:   r.opts.Routing.TargetedReplies,
			ReplyShare:        r.opts.Routing.ReplyShare,
			TriggerID:         ev.ID,
		})
		event = eventMessage
		if route.ReplyTo != "" {
			event = eventReply
		}
		attrs = append(attrs, slog.String("mode", route.Mode), slog.String("target_message_id", route.ReplyTo), slog.String("why", route.Why))
	}
	res.Outcome = event
	r.stats.outcomes[event]++
	if r.opts.Logger != nil {
		r.opts.Logger.LogAttrs(ctx, slog.LevelInfo, event, attrs...)
	}
}

// writeOutcomes writes the text outcome line of the summary, when Stage B ran.
func (s *stats) writeOutcomes(w io.Writer) {
	n := 0
	for _, c := range s.outcomes {
		n += c
	}
	if n == 0 {
		return
	}
	fmt.Fprintf(w, "\ntext outcomes: %d admitted turns: %d %s, %d %s, %d %s, %d %s\n", n, s.outcomes[eventReply], eventReply,
		s.outcomes[eventMessage], eventMessage, s.outcomes[eventSkipped], eventSkipped, s.outcomes[eventFailed], eventFailed)
}

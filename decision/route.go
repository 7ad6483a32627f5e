package decision

import (
	"context"
	"hash/fnv"
	"log/slog"
)

// How a text reply goes out (RouteDecision.Mode, the label of banter_reply_target_total).
const (
	ModeTriggerReply      = "trigger_reply"      // a reply to the message answered
	ModeTargetReply       = "target_reply"       // a reply to the message the model chose
	ModeBroadcast         = "broadcast"          // a plain message to the channel
	ModeFallbackBroadcast = "fallback_broadcast" // a plain message because the reply could not go where asked
)

// EventReplyDecision is the log event of a routing verdict (the design's ReplyDecision).
const EventReplyDecision = "reply_decision"

// RouteInput is what the reply-routing table reads for one reply.
type RouteInput struct {
	// Addressed: the turn answered addresses the bot (any signal but llm_decides, or a command).
	Addressed bool
	// InitiativeChannel: the channel is one of permissions.initiativeChannelIds.
	InitiativeChannel bool
	// TargetedReplies is text.targetedReplies: the model may choose the message it answers.
	TargetedReplies bool
	// ReplyShare is activity.initiativeReplyShare: the share of addressed turns in initiative
	// channels answered as replies (the rest go to the channel).
	ReplyShare float64
	// TriggerID is the message answered.
	TriggerID string
	// Target is the message the model chose (send_discord_message mode reply), "" for none.
	Target string
	// TargetRefused says why Target may not be answered ("" when it may): unknown_target (not shown),
	// not_in_burst, target_too_old.
	TargetRefused string
	// Fallback says why the model's answer was no usable tool call (free_text,
	// invalid_tool_call), "" when it was one.
	Fallback string
}

// RouteDecision is where a reply goes and why.
type RouteDecision struct {
	Mode     string // one of the Mode constants
	ReplyTo  string // the message replied to; "" posts to the channel
	Fallback string // why the reply fell back to a broadcast, when Mode is fallback_broadcast
	// Why names the row of the table that decided: unaddressed, model_target, addressed,
	// initiative_share, targeted_replies_off, or the reason a model target was refused.
	Why string
}

// Route is the reply-routing table (docs/text.md "Routing"):
//
//	unaddressed turn        a channel message; with text.targetedReplies on and a target the
//	                        model chose, a reply to it (a target it may not answer: a
//	                        fallback broadcast)
//	addressed, elsewhere    a reply: to the trigger, or with text.targetedReplies on to the
//	                        model's target when it may answer it
//	addressed, initiative   as above for activity.initiativeReplyShare of the turns (chosen by
//	                        a stable hash of the trigger's id), a channel message otherwise
//
// With text.targetedReplies off no model-chosen target is used anywhere.
func Route(in RouteInput) RouteDecision {
	if !in.Addressed {
		switch {
		case in.Fallback != "":
			return RouteDecision{Mode: ModeFallbackBroadcast, Fallback: in.Fallback, Why: in.Fallback}
		case in.Target == "":
			return RouteDecision{Mode: ModeBroadcast, Why: "unaddressed"}
		case !in.TargetedReplies:
			return RouteDecision{Mode: ModeBroadcast, Why: "targeted_replies_off"}
		case in.TargetRefused != "":
			return RouteDecision{Mode: ModeFallbackBroadcast, Fallback: in.TargetRefused, Why: in.TargetRefused}
		}
		return RouteDecision{Mode: ModeTargetReply, ReplyTo: in.Target, Why: "model_target"}
	}
	if in.InitiativeChannel && ShareOf(in.TriggerID) >= in.ReplyShare {
		return RouteDecision{Mode: ModeBroadcast, Why: "initiative_share"}
	}
	r := RouteDecision{Mode: ModeTriggerReply, ReplyTo: in.TriggerID, Why: "addressed"}
	switch {
	case in.Fallback != "" || in.Target == "" || in.Target == in.TriggerID:
	case !in.TargetedReplies:
		r.Why = "targeted_replies_off"
	case in.TargetRefused != "":
		r.Why = in.TargetRefused
	default:
		r.Mode, r.ReplyTo, r.Why = ModeTargetReply, in.Target, "model_target"
	}
	return r
}

// ShareOf maps an id to a stable number in [0, 1): the same message always gets the same
// routing, and over many messages the reply share is as configured.
func ShareOf(id string) float64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return float64(h.Sum64()>>11) / float64(1<<53)
}

// Log writes the verdict as one reply_decision event with the model's target and any extra
// context attributes. A nil logger is a no-op.
func (r RouteDecision) Log(ctx context.Context, logger *slog.Logger, in RouteInput, extra ...slog.Attr) {
	if logger == nil {
		return
	}
	attrs := append([]slog.Attr{slog.String("mode", r.Mode), slog.String("target_message_id", r.ReplyTo),
		slog.String("model_target_id", in.Target), slog.String("fallback", r.Fallback), slog.String("why", r.Why),
		slog.Bool("addressed", in.Addressed)}, extra...)
	logger.LogAttrs(ctx, slog.LevelInfo, EventReplyDecision, attrs...)
}

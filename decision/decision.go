package decision

import (
	"context"
	"log/slog"
	"strconv"
	"time"
)

// Decision is the explained verdict on one turn. Every Stage A and Stage B
// evaluation yields one; Log turns it into the structured event and
// Metrics.Observe counts it. String fields may alias the turn's strings.
type Decision struct {
	Pipeline Pipeline
	Stage    Stage
	Phase    Phase // text Stage A only
	Outcome  Outcome
	Reason   Reason
	Signal   Signal
	// Confidence in [0,1] of the addressing signal: 1 for direct, the name
	// matcher's confidence for names, the classifier's for
	// llm_direct_address. With llm_decides it is the weak cue of a name
	// that was only mentioned (or a look-alike too uncertain for the fast
	// path), else 0.
	Confidence float64
	// Force is set for turns that must be answered ([SKIP] only for safety):
	// direct, name_exact, name_alias, name_nickname and explicit commands.
	Force bool
	// DirectAddressed is true when the turn addresses the bot (any signal
	// except llm_decides).
	DirectAddressed bool
	// EagerTurn marks a voice turn admitted without the classifier: the
	// generation prompt must allow [SKIP] (Stage B decides).
	EagerTurn bool
	// Eagerness (0-100) that applies to the turn, for prompt guidance.
	Eagerness int
	// RetryAfter is set for deferred turns (OutcomeDefer).
	RetryAfter time.Duration

	// Classifier fields, set when a classifier was consulted.
	ClassifierModel    string
	ClassifierRaw      string
	ClassifierAttempts int
	ClassifierLatency  time.Duration
	ClassifierError    string

	// Context of the turn.
	TurnID    string // message id or utterance id
	ChannelID string
	UserID    string // author or speaker
}

// Allowed reports whether the turn goes on.
func (d Decision) Allowed() bool { return d.Outcome == OutcomeAllow }

// String renders the decision for humans, e.g.
// "text A allow name_address (name_exact 0.95, forced)".
func (d Decision) String() string {
	s := d.Pipeline.String() + " " + d.Stage.String() + " " + d.Outcome.String() + " " + d.Reason.String() +
		" (" + d.Signal.String() + " " + strconv.FormatFloat(d.Confidence, 'f', 2, 64)
	if d.Force {
		s += ", forced"
	}
	if d.EagerTurn {
		s += ", eager turn"
	}
	if d.RetryAfter > 0 {
		s += ", retry after " + d.RetryAfter.String()
	}
	if d.ClassifierAttempts > 0 {
		s += ", " + d.ClassifierModel + " said " + strconv.Quote(clip(d.ClassifierRaw, 40))
	}
	return s + ")"
}

// Stronger reports whether d should stand for a reply attempt rather than
// o, e.g. for a coalesced burst of messages: an admitted turn beats the
// rest, a forced one beats an unforced one, then the stronger signal and
// the higher confidence win.
func (d Decision) Stronger(o Decision) bool {
	if da, oa := d.Allowed(), o.Allowed(); da != oa {
		return da
	}
	if d.Force != o.Force {
		return d.Force
	}
	if d.Signal != o.Signal {
		return d.Signal != SignalUnknown && (o.Signal == SignalUnknown || d.Signal < o.Signal)
	}
	return d.Confidence > o.Confidence
}

// Skipped reports whether a Stage B decision dropped the reply.
func (d Decision) Skipped() bool { return d.Stage == StageB && d.Outcome == OutcomeDeny }

// Log event names.
const (
	EventReplyAdmission      = "reply_admission"       // text Stage A
	EventReplySkipped        = "reply_skipped"         // Stage B skip (text and voice)
	EventReplyAccepted       = "reply_accepted"        // Stage B reply kept
	EventVoiceTurnAddressing = "voice_turn_addressing" // voice Stage A
)

// Event returns the name of the log event for the decision.
func (d Decision) Event() string {
	switch {
	case d.Stage == StageB && d.Outcome == OutcomeAllow:
		return EventReplyAccepted
	case d.Stage == StageB:
		return EventReplySkipped
	case d.Pipeline == PipelineVoice:
		return EventVoiceTurnAddressing
	}
	return EventReplyAdmission
}

// Log writes the decision as one structured event (see Event) with its
// fields and any extra context attributes. Denials, deferrals and Stage B
// decisions log at Info, like admissions: every decision is explainable.
// A nil logger is a no-op.
func (d Decision) Log(ctx context.Context, logger *slog.Logger, extra ...slog.Attr) {
	if logger == nil {
		return
	}
	attrs := make([]slog.Attr, 0, 20+len(extra))
	attrs = append(attrs,
		slog.String("pipeline", d.Pipeline.String()),
		slog.String("stage", d.Stage.String()),
		slog.Bool("allow", d.Allowed()),
		slog.String("outcome", d.Outcome.String()),
		slog.String("reason", d.Reason.String()),
		slog.String("signal", d.Signal.String()),
		slog.Float64("confidence", d.Confidence),
		slog.Bool("force", d.Force),
		slog.Bool("directAddressed", d.DirectAddressed),
		slog.Int("eagerness", d.Eagerness),
	)
	if d.Pipeline == PipelineText && d.Stage == StageA {
		attrs = append(attrs, slog.String("phase", d.Phase.String()))
	}
	if d.EagerTurn {
		attrs = append(attrs, slog.Bool("isEagerTurn", true))
	}
	if d.RetryAfter > 0 {
		attrs = append(attrs, slog.Duration("retryAfter", d.RetryAfter))
	}
	if d.ClassifierModel != "" || d.ClassifierAttempts > 0 {
		attrs = append(attrs,
			slog.String("classifierModel", d.ClassifierModel),
			slog.String("classifierRaw", d.ClassifierRaw),
			slog.Int("classifierAttempts", d.ClassifierAttempts),
			slog.Duration("classifierLatency", d.ClassifierLatency),
		)
		if d.ClassifierError != "" {
			attrs = append(attrs, slog.String("classifierError", d.ClassifierError))
		}
	}
	if d.TurnID != "" {
		attrs = append(attrs, slog.String("turnId", d.TurnID))
	}
	if d.ChannelID != "" {
		attrs = append(attrs, slog.String("channelId", d.ChannelID))
	}
	if d.UserID != "" {
		attrs = append(attrs, slog.String("userId", d.UserID))
	}
	attrs = append(attrs, extra...)
	logger.LogAttrs(ctx, slog.LevelInfo, d.Event(), attrs...)
}

// Recorder logs and counts decisions. The zero value and a nil *Recorder
// do nothing.
type Recorder struct {
	Logger  *slog.Logger
	Metrics *Metrics
}

// Count counts the decision without logging it: for a pipeline that writes the turn's outcome
// itself, in one line (text's reply_skipped carries Stage B's skip).
func (r *Recorder) Count(d Decision) {
	if r == nil {
		return
	}
	r.Metrics.Observe(d)
}

// Record logs the decision (with extra context attributes) and counts it.
func (r *Recorder) Record(ctx context.Context, d Decision, extra ...slog.Attr) {
	if r == nil {
		return
	}
	r.Metrics.Observe(d)
	d.Log(ctx, r.Logger, extra...)
}

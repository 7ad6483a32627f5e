package voice

import (
	"log/slog"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/decision"
)

// addressingAttrs are the conversation context the voice_turn_addressing event carries beside
// the decision (the design's fields): the provider of the YES/NO classifier, who the bot is
// focused on and since when, whom it last answered and how long ago that reply ended, whether
// it is speaking, and how many members are in the channel.
func addressingAttrs(cfg *config.Config, t *decision.VoiceTurn) []slog.Attr {
	provider := cfg.Voice.ReplyDecisionLLM.Provider
	if provider == "" {
		provider = cfg.LLM.Provider
	}
	if provider == "" {
		provider = config.DefaultProvider
	}
	g := t.Engagement
	attrs := []slog.Attr{
		slog.String("classifier_provider", provider),
		slog.String("focused_speaker_id", g.FocusedSpeakerID),
		slog.Bool("speaker_focused", g.FocusedSpeakerID != "" && g.FocusedSpeakerID == t.SpeakerID),
		slog.String("last_reply_to_id", g.LastReplyToID),
		slog.Bool("bot_speaking", g.BotSpeaking),
		slog.Int("participants", len(t.Participants)),
	}
	if !g.FocusedAt.IsZero() {
		attrs = append(attrs, slog.Int64("since_focus_ms", t.At.Sub(g.FocusedAt).Milliseconds()))
	}
	if !g.LastReplyAt.IsZero() {
		attrs = append(attrs, slog.Int64("since_bot_reply_ms", t.At.Sub(g.LastReplyAt).Milliseconds()))
	}
	return attrs
}

package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Event is one line of a recorded conversation, oldest first. Two types:
//
//	{"type":"message","id":"1001","channel_id":"c1","author_id":"u1","author_name":"alice",
//	 "is_bot":false,"is_self":false,"content":"...","mentions_bot":false,"reply_to":null,
//	 "ts":"2026-11-21T10:00:00Z"}
//	{"type":"voice","id":"v1","channel_id":"vc1","speaker_id":"u1","speaker_name":"alice",
//	 "transcript":"...","duration_ms":1400,"ts":"..."}
//
// is_self marks the bot's own messages; reply_to is a message id. A voice
// event's ts is when the utterance started; it ends duration_ms later.
// Either type may say in which guild it was and the bot's nickname there at
// the time ("guild_id":"g1","bot_nickname":"Jarvis 🤖"), which the engines
// match as a name with bot.answerToNickname, as they did live.
//
// A labelled corpus (replay -labels) adds to each message or voice event
// "addressed" (true when a person would say the turn addresses the bot) and
// "why" (a short reason category, e.g. "vocative_end" or "noun_use"). A
// third type switches the bot's name and aliases for the events after it,
// so one corpus can hold several bots:
//
//	{"type":"bot","name":"Zorvik","aliases":["Zorv"]}
type Event struct {
	Type      string    `json:"type"`
	ID        string    `json:"id"`
	ChannelID string    `json:"channel_id"`
	TS        time.Time `json:"ts"`

	// The guild of a message or utterance and the bot's nickname there
	// when it was said ("" none): the nickname is a name in that guild
	// (decision.TextTurn.BotNickname). A nickname needs a guild.
	GuildID     string `json:"guild_id,omitempty"`
	BotNickname string `json:"bot_nickname,omitempty"`

	// Text messages.
	AuthorID    string  `json:"author_id,omitempty"`
	AuthorName  string  `json:"author_name,omitempty"`
	IsBot       bool    `json:"is_bot,omitempty"`
	IsSelf      bool    `json:"is_self,omitempty"`
	Content     string  `json:"content,omitempty"`
	MentionsBot bool    `json:"mentions_bot,omitempty"`
	ReplyTo     *string `json:"reply_to,omitempty"`

	// Voice utterances.
	SpeakerID   string `json:"speaker_id,omitempty"`
	SpeakerName string `json:"speaker_name,omitempty"`
	Transcript  string `json:"transcript,omitempty"`
	DurationMS  int64  `json:"duration_ms,omitempty"`

	// Labels (replay -labels): ignored by a plain replay.
	Addressed *bool  `json:"addressed,omitempty"`
	Why       string `json:"why,omitempty"`

	// Bot switches (type "bot").
	Name    string   `json:"name,omitempty"`
	Aliases []string `json:"aliases,omitempty"`
}

// Event types.
const (
	TypeMessage = "message"
	TypeVoice   = "voice"
	TypeBot     = "bot"
)

var errBadEvent = errors.New("bad event")

// ParseEvent decodes and validates one input line. Unknown fields are
// rejected (they are usually typos), as are missing ids, channels, authors
// or speakers, timestamps and negative durations.
func ParseEvent(line []byte) (Event, error) {
	var e Event
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return Event{}, fmt.Errorf("%w: invalid JSON: %w", errBadEvent, err)
	}
	if dec.More() {
		return Event{}, fmt.Errorf("%w: more than one JSON value on the line", errBadEvent)
	}
	if e.Type == TypeBot {
		if e.Name == "" {
			return Event{}, fmt.Errorf("%w: bot: missing name", errBadEvent)
		}
		return e, nil
	}
	missing := func(field string) error { return fmt.Errorf("%w: %s %q: missing %s", errBadEvent, e.Type, e.ID, field) }
	switch {
	case e.Type != TypeMessage && e.Type != TypeVoice:
		return Event{}, fmt.Errorf("%w: type %q: want %q, %q or %q", errBadEvent, e.Type, TypeMessage, TypeVoice, TypeBot)
	case e.ID == "":
		return Event{}, missing("id")
	case e.ChannelID == "":
		return Event{}, missing("channel_id")
	case e.TS.IsZero():
		return Event{}, missing("ts")
	case e.Type == TypeMessage && e.AuthorID == "":
		return Event{}, missing("author_id")
	case e.Type == TypeVoice && e.SpeakerID == "":
		return Event{}, missing("speaker_id")
	case e.DurationMS < 0:
		return Event{}, fmt.Errorf("%w: voice %q: negative duration_ms %d", errBadEvent, e.ID, e.DurationMS)
	case e.BotNickname != "" && e.GuildID == "":
		return Event{}, fmt.Errorf("%w: %s %q: bot_nickname %q without guild_id", errBadEvent, e.Type, e.ID, e.BotNickname)
	}
	return e, nil
}

// Result is one output line, in input order:
//
//	{"id":"1001","allow":true,"reason":"...","signal":"...","confidence":0.95,"force":true}
//
// allow is null when a classifier was needed and none was given (reason
// needs_classifier). retry_after_ms is set for deferred voice turns. With a
// generator (-llm), Stage B adds skipped, skip_reason and reply, and an admitted text turn its
// outcome: reply_skipped, sent_reply or sent_message (reply_failed when the model failed), the
// event the live bot logs for it.
type Result struct {
	ID           string  `json:"id"`
	Allow        *bool   `json:"allow"`
	Reason       string  `json:"reason"`
	Signal       string  `json:"signal"`
	Confidence   float64 `json:"confidence"`
	Force        bool    `json:"force"`
	RetryAfterMS int64   `json:"retry_after_ms,omitempty"`
	Skipped      *bool   `json:"skipped,omitempty"`
	SkipReason   string  `json:"skip_reason,omitempty"`
	Reply        string  `json:"reply,omitempty"`
	Outcome      string  `json:"outcome,omitempty"`
	Error        string  `json:"error,omitempty"`
}

package realtime

import (
	"encoding/base64"
	"encoding/json"
	"time"
)

// Client events of the Realtime API (GA). Each XxxCommand is what we send;
// AppendJSON appends its wire form to b.
// https://platform.openai.com/docs/api-reference/realtime-client-events

// Command is a client event.
type Command interface {
	// AppendJSON appends the event's JSON to b.
	AppendJSON(b []byte) []byte
	// Type returns the wire type, e.g. "session.update".
	Type() string
}

// AudioFormat is the PCM format both directions use: pcm16 at 24 kHz mono.
const (
	AudioFormatType = "audio/pcm"
	SampleRate      = 24000
)

// TurnDetection configures server-side turn detection. banter endpoints
// locally, so sessions normally send none (JSON null).
type TurnDetection struct {
	// Type is "server_vad" or "semantic_vad".
	Type              string   `json:"type"`
	Threshold         *float64 `json:"threshold,omitempty"`
	PrefixPaddingMs   int      `json:"prefix_padding_ms,omitempty"`
	SilenceDurationMs int      `json:"silence_duration_ms,omitempty"`
	CreateResponse    *bool    `json:"create_response,omitempty"`
	InterruptResponse *bool    `json:"interrupt_response,omitempty"`
}

// Session is the session configuration sent with session.update. Resend it
// after a reconnect to restore the session.
type Session struct {
	Instructions string
	// Voice is the output voice, e.g. "marin" or "alloy".
	Voice string
	// OutputModalities is ["audio"] (default) or ["text"].
	OutputModalities []string
	// TurnDetection nil sends null: no server VAD, no automatic responses.
	TurnDetection *TurnDetection
	// InputTranscriptionModel, when set, asks the server to transcribe
	// committed input audio with this model (e.g. "gpt-4o-transcribe").
	InputTranscriptionModel string
	// MaxOutputTokens bounds each response; 0 means the server default.
	MaxOutputTokens int
}

// SessionUpdateCommand is session.update.
type SessionUpdateCommand struct{ Session Session }

type wireFormat struct {
	Type string `json:"type"`
	Rate int    `json:"rate"`
}

// Type implements Command.
func (SessionUpdateCommand) Type() string { return "session.update" }

// AppendJSON implements Command.
func (c SessionUpdateCommand) AppendJSON(b []byte) []byte {
	s := c.Session
	mods := s.OutputModalities
	if len(mods) == 0 {
		mods = []string{"audio"}
	}
	type transcription struct {
		Model string `json:"model"`
	}
	type input struct {
		Format        wireFormat     `json:"format"`
		TurnDetection *TurnDetection `json:"turn_detection"`
		Transcription *transcription `json:"transcription,omitempty"`
	}
	type output struct {
		Format wireFormat `json:"format"`
		Voice  string     `json:"voice,omitempty"`
	}
	type audio struct {
		Input  input  `json:"input"`
		Output output `json:"output"`
	}
	type session struct {
		Type             string   `json:"type"`
		Instructions     string   `json:"instructions,omitempty"`
		OutputModalities []string `json:"output_modalities"`
		Audio            audio    `json:"audio"`
		MaxOutputTokens  int      `json:"max_output_tokens,omitempty"`
	}
	w := struct {
		Type    string  `json:"type"`
		Session session `json:"session"`
	}{Type: c.Type(), Session: session{
		Type: "realtime", Instructions: s.Instructions, OutputModalities: mods, MaxOutputTokens: s.MaxOutputTokens,
		Audio: audio{
			Input:  input{Format: wireFormat{AudioFormatType, SampleRate}, TurnDetection: s.TurnDetection},
			Output: output{Format: wireFormat{AudioFormatType, SampleRate}, Voice: s.Voice},
		},
	}}
	if s.InputTranscriptionModel != "" {
		w.Session.Audio.Input.Transcription = &transcription{Model: s.InputTranscriptionModel}
	}
	return appendMarshal(b, w)
}

// InputAudioAppendCommand is input_audio_buffer.append with PCM16 24 kHz
// mono audio (little-endian bytes). AppendJSON base64-encodes Audio into b
// without other allocations.
type InputAudioAppendCommand struct{ Audio []byte }

// Type implements Command.
func (InputAudioAppendCommand) Type() string { return "input_audio_buffer.append" }

// AppendJSON implements Command.
func (c InputAudioAppendCommand) AppendJSON(b []byte) []byte {
	b = append(b, `{"type":"input_audio_buffer.append","audio":"`...)
	b = base64.StdEncoding.AppendEncode(b, c.Audio)
	return append(b, `"}`...)
}

// InputAudioCommitCommand is input_audio_buffer.commit: the appended audio
// becomes a user item.
type InputAudioCommitCommand struct{}

// Type implements Command.
func (InputAudioCommitCommand) Type() string { return "input_audio_buffer.commit" }

// AppendJSON implements Command.
func (InputAudioCommitCommand) AppendJSON(b []byte) []byte {
	return append(b, `{"type":"input_audio_buffer.commit"}`...)
}

// InputAudioClearCommand is input_audio_buffer.clear.
type InputAudioClearCommand struct{}

// Type implements Command.
func (InputAudioClearCommand) Type() string { return "input_audio_buffer.clear" }

// AppendJSON implements Command.
func (InputAudioClearCommand) AppendJSON(b []byte) []byte {
	return append(b, `{"type":"input_audio_buffer.clear"}`...)
}

// ItemCreateCommand is conversation.item.create with one text message.
// Role is "user", "assistant" or "system".
type ItemCreateCommand struct {
	Role string
	Text string
	// PreviousItemID places the item after this one; empty appends.
	PreviousItemID string
}

// Type implements Command.
func (ItemCreateCommand) Type() string { return "conversation.item.create" }

// AppendJSON implements Command.
func (c ItemCreateCommand) AppendJSON(b []byte) []byte {
	partType := "input_text"
	if c.Role == "assistant" {
		partType = "output_text"
	}
	type part struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	type item struct {
		Type    string `json:"type"`
		Role    string `json:"role"`
		Content []part `json:"content"`
	}
	return appendMarshal(b, struct {
		Type           string `json:"type"`
		PreviousItemID string `json:"previous_item_id,omitempty"`
		Item           item   `json:"item"`
	}{c.Type(), c.PreviousItemID, item{"message", c.Role, []part{{partType, c.Text}}}})
}

// ResponseCreateCommand is response.create.
type ResponseCreateCommand struct {
	// Instructions override the session's for this response (the brain
	// strategy uses this to have the model voice given text).
	Instructions string
	// OutputModalities override the session's, e.g. ["audio"].
	OutputModalities []string
	// OutOfBand sends conversation "none": the response is not added to the
	// default conversation.
	OutOfBand bool
	// Metadata is echoed back on the response (e.g. a turn id).
	Metadata map[string]string
}

// Type implements Command.
func (ResponseCreateCommand) Type() string { return "response.create" }

// AppendJSON implements Command.
func (c ResponseCreateCommand) AppendJSON(b []byte) []byte {
	type response struct {
		Instructions     string            `json:"instructions,omitempty"`
		OutputModalities []string          `json:"output_modalities,omitempty"`
		Conversation     string            `json:"conversation,omitempty"`
		Metadata         map[string]string `json:"metadata,omitempty"`
	}
	r := response{Instructions: c.Instructions, OutputModalities: c.OutputModalities, Metadata: c.Metadata}
	if c.OutOfBand {
		r.Conversation = "none"
	}
	if r.Instructions == "" && len(r.OutputModalities) == 0 && r.Conversation == "" && len(r.Metadata) == 0 {
		return append(b, `{"type":"response.create"}`...)
	}
	return appendMarshal(b, struct {
		Type     string   `json:"type"`
		Response response `json:"response"`
	}{c.Type(), r})
}

// ResponseCancelCommand is response.cancel. An empty ResponseID cancels the
// in-progress response.
type ResponseCancelCommand struct{ ResponseID string }

// Type implements Command.
func (ResponseCancelCommand) Type() string { return "response.cancel" }

// AppendJSON implements Command.
func (c ResponseCancelCommand) AppendJSON(b []byte) []byte {
	if c.ResponseID == "" {
		return append(b, `{"type":"response.cancel"}`...)
	}
	return appendMarshal(b, struct {
		Type       string `json:"type"`
		ResponseID string `json:"response_id"`
	}{c.Type(), c.ResponseID})
}

// ItemTruncateCommand is conversation.item.truncate: after a barge-in, cut
// the assistant audio item to what was actually played so the model's
// context matches what listeners heard.
type ItemTruncateCommand struct {
	ItemID       string
	ContentIndex int
	// AudioEnd is how much of the item's audio was played.
	AudioEnd time.Duration
}

// Type implements Command.
func (ItemTruncateCommand) Type() string { return "conversation.item.truncate" }

// AppendJSON implements Command.
func (c ItemTruncateCommand) AppendJSON(b []byte) []byte {
	return appendMarshal(b, struct {
		Type         string `json:"type"`
		ItemID       string `json:"item_id"`
		ContentIndex int    `json:"content_index"`
		AudioEndMs   int64  `json:"audio_end_ms"`
	}{c.Type(), c.ItemID, c.ContentIndex, c.AudioEnd.Milliseconds()})
}

// ItemDeleteCommand is conversation.item.delete: remove an item from the
// conversation (the server answers conversation.item.deleted, or an error
// when no item has that id). After a false end banter deletes the cut
// answer and the first half of the turn it answered.
type ItemDeleteCommand struct {
	ItemID string
}

// Type implements Command.
func (ItemDeleteCommand) Type() string { return "conversation.item.delete" }

// AppendJSON implements Command.
func (c ItemDeleteCommand) AppendJSON(b []byte) []byte {
	return appendMarshal(b, struct {
		Type   string `json:"type"`
		ItemID string `json:"item_id"`
	}{c.Type(), c.ItemID})
}

// appendMarshal appends the JSON of v. The values marshalled here are plain
// structs of strings, ints and string maps, which cannot fail to encode.
func appendMarshal(b []byte, v any) []byte {
	out, err := json.Marshal(v)
	if err != nil {
		panic("realtime: marshal command: " + err.Error())
	}
	return append(b, out...)
}

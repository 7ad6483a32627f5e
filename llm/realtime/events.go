package realtime

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// EventType is the type of a server event. The zero value is EventUnknown;
// EventOther is a well-formed event of a type this package does not model.
type EventType uint8

// Server event types of the Realtime API (GA names).
// https://platform.openai.com/docs/api-reference/realtime-server-events
const (
	EventUnknown EventType = iota
	EventOther
	EventError                       // error
	EventSessionCreated              // session.created
	EventSessionUpdated              // session.updated
	EventInputAudioCommitted         // input_audio_buffer.committed
	EventInputAudioCleared           // input_audio_buffer.cleared
	EventSpeechStarted               // input_audio_buffer.speech_started
	EventSpeechStopped               // input_audio_buffer.speech_stopped
	EventItemAdded                   // conversation.item.added
	EventItemCreated                 // conversation.item.created (beta name, still sent by some servers)
	EventItemDone                    // conversation.item.done
	EventItemTruncated               // conversation.item.truncated
	EventInputTranscriptionDelta     // conversation.item.input_audio_transcription.delta
	EventInputTranscriptionCompleted // conversation.item.input_audio_transcription.completed
	EventInputTranscriptionFailed    // conversation.item.input_audio_transcription.failed
	EventResponseCreated             // response.created
	EventResponseDone                // response.done
	EventOutputItemAdded             // response.output_item.added
	EventOutputItemDone              // response.output_item.done
	EventContentPartAdded            // response.content_part.added
	EventContentPartDone             // response.content_part.done
	EventOutputAudioDelta            // response.output_audio.delta
	EventOutputAudioDone             // response.output_audio.done
	EventOutputAudioTranscriptDelta  // response.output_audio_transcript.delta
	EventOutputAudioTranscriptDone   // response.output_audio_transcript.done
	EventOutputTextDelta             // response.output_text.delta
	EventOutputTextDone              // response.output_text.done
	EventRateLimitsUpdated           // rate_limits.updated
	numEventTypes
)

var eventNames = [numEventTypes]string{
	EventUnknown:                     "unknown",
	EventOther:                       "other",
	EventError:                       "error",
	EventSessionCreated:              "session.created",
	EventSessionUpdated:              "session.updated",
	EventInputAudioCommitted:         "input_audio_buffer.committed",
	EventInputAudioCleared:           "input_audio_buffer.cleared",
	EventSpeechStarted:               "input_audio_buffer.speech_started",
	EventSpeechStopped:               "input_audio_buffer.speech_stopped",
	EventItemAdded:                   "conversation.item.added",
	EventItemCreated:                 "conversation.item.created",
	EventItemDone:                    "conversation.item.done",
	EventItemTruncated:               "conversation.item.truncated",
	EventInputTranscriptionDelta:     "conversation.item.input_audio_transcription.delta",
	EventInputTranscriptionCompleted: "conversation.item.input_audio_transcription.completed",
	EventInputTranscriptionFailed:    "conversation.item.input_audio_transcription.failed",
	EventResponseCreated:             "response.created",
	EventResponseDone:                "response.done",
	EventOutputItemAdded:             "response.output_item.added",
	EventOutputItemDone:              "response.output_item.done",
	EventContentPartAdded:            "response.content_part.added",
	EventContentPartDone:             "response.content_part.done",
	EventOutputAudioDelta:            "response.output_audio.delta",
	EventOutputAudioDone:             "response.output_audio.done",
	EventOutputAudioTranscriptDelta:  "response.output_audio_transcript.delta",
	EventOutputAudioTranscriptDone:   "response.output_audio_transcript.done",
	EventOutputTextDelta:             "response.output_text.delta",
	EventOutputTextDone:              "response.output_text.done",
	EventRateLimitsUpdated:           "rate_limits.updated",
}

// String returns the wire name ("response.output_audio.delta"), or "other"
// / "unknown".
func (t EventType) String() string {
	if t < numEventTypes {
		return eventNames[t]
	}
	return "EventType(" + strconv.Itoa(int(t)) + ")"
}

// eventTypeOf maps a wire name to its EventType without allocating.
func eventTypeOf(name []byte) EventType {
	switch string(name) {
	case "response.output_audio.delta":
		return EventOutputAudioDelta
	case "response.output_audio_transcript.delta":
		return EventOutputAudioTranscriptDelta
	}
	for t := EventError; t < numEventTypes; t++ {
		if string(name) == eventNames[t] {
			return t
		}
	}
	return EventOther
}

// ResponseInfo is the response object of response.created / response.done.
type ResponseInfo struct {
	ID string `json:"id"`
	// Status is "in_progress", "completed", "cancelled", "failed" or
	// "incomplete".
	Status        string `json:"status"`
	StatusDetails struct {
		Type   string `json:"type"`
		Reason string `json:"reason"`
		Error  struct {
			Type string `json:"type"`
			Code string `json:"code"`
		} `json:"error"`
	} `json:"status_details"`
	Usage Usage `json:"usage"`
}

// Usage is the usage of response.done: input tokens include the cached and audio ones, output
// tokens the audio ones.
type Usage struct {
	InputTokens       int `json:"input_tokens"`
	OutputTokens      int `json:"output_tokens"`
	InputTokenDetails struct {
		TextTokens   int `json:"text_tokens"`
		AudioTokens  int `json:"audio_tokens"`
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_token_details"`
	OutputTokenDetails struct {
		TextTokens  int `json:"text_tokens"`
		AudioTokens int `json:"audio_tokens"`
	} `json:"output_token_details"`
}

// TranscriptionUsage is the usage of an input transcription: tokens (Type "tokens") or
// seconds of audio (Type "duration").
type TranscriptionUsage struct {
	Type              string  `json:"type"`
	InputTokens       int     `json:"input_tokens"`
	OutputTokens      int     `json:"output_tokens"`
	Seconds           float64 `json:"seconds"`
	InputTokenDetails struct {
		TextTokens  int `json:"text_tokens"`
		AudioTokens int `json:"audio_tokens"`
	} `json:"input_token_details"`
}

// ErrorInfo is the payload of an error event.
type ErrorInfo struct {
	Type    string `json:"type"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Param   string `json:"param"`
	// EventID is the client event that caused the error, when known.
	EventID string `json:"event_id"`
}

// Event is one decoded server event. Decode fills it in place and reuses
// its Audio buffer; fields not carried by an event are reset to zero.
type Event struct {
	Type EventType
	// Name is the wire type, set only for EventOther (to log unmodelled
	// events).
	Name       string
	ResponseID string
	ItemID     string
	// PreviousItemID is set on item added/created events.
	PreviousItemID string
	OutputIndex    int
	ContentIndex   int
	// Audio is the decoded PCM (s16le at the session's output rate) of an
	// output_audio.delta. It is owned by the Event and overwritten by the
	// next Decode: copy it (or Clone the Event) to keep it.
	Audio []byte
	// Delta is the text of a transcript/text delta.
	Delta string
	// Transcript is the final text of *.done transcript events and input
	// transcription completion; Text is output_text.done's text.
	Transcript string
	Text       string
	// AudioEndMs is set on conversation.item.truncated.
	AudioEndMs int
	// ItemRole is the role of the item in item added/created/done events.
	ItemRole string
	Response ResponseInfo
	Error    ErrorInfo
	// TranscriptionUsage is the usage of an input transcription's completion (zero without).
	TranscriptionUsage TranscriptionUsage
	// SessionID is set on session.created / session.updated.
	SessionID string
}

// Clone returns a deep copy that does not share Audio with e.
func (e *Event) Clone() *Event {
	c := *e
	c.Audio = append([]byte(nil), e.Audio...)
	return &c
}

// errMalformed marks an event that does not decode; Conn counts and drops
// such events.
var errMalformed = errors.New("realtime: malformed server event")

// Decode parses one server event (a WebSocket text message) into e. The
// hot path, response.output_audio.delta, does not allocate once e.Audio
// has grown to the delta size and the ids repeat. On error e is left in an
// unspecified state and the error wraps a malformed-event sentinel.
func (e *Event) Decode(data []byte) error {
	audio := e.Audio[:0]
	respID, itemID := e.ResponseID, e.ItemID
	*e = Event{Audio: audio, ResponseID: respID, ItemID: itemID}
	var typ, delta []byte
	var sawResp, sawItem bool
	var nested nestedRaw
	err := forEachMember(data, func(key, val []byte) error {
		switch string(key) {
		case "type":
			s, ok := rawString(val)
			if !ok {
				return fmt.Errorf("%w: type is not a string", errSyntax)
			}
			typ = s
		case "delta":
			delta = val
		case "response_id":
			sawResp = true
			return setString(&e.ResponseID, val)
		case "item_id":
			sawItem = true
			return setString(&e.ItemID, val)
		case "previous_item_id":
			return setString(&e.PreviousItemID, val)
		case "output_index":
			return setInt(&e.OutputIndex, val)
		case "content_index":
			return setInt(&e.ContentIndex, val)
		case "audio_end_ms":
			return setInt(&e.AudioEndMs, val)
		case "transcript":
			return setString(&e.Transcript, val)
		case "text":
			return setString(&e.Text, val)
		case "response":
			nested.response = val
		case "error":
			nested.err = val
		case "item":
			nested.item = val
		case "session":
			nested.session = val
		case "usage":
			nested.usage = val
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w: %w", errMalformed, err)
	}
	if !sawResp {
		e.ResponseID = ""
	}
	if !sawItem {
		e.ItemID = ""
	}
	if typ == nil {
		return fmt.Errorf("%w: no type", errMalformed)
	}
	e.Type = eventTypeOf(typ)
	return e.decodeBody(typ, delta, &nested)
}

// nestedRaw holds the raw nested objects of an event, decoded by its type.
type nestedRaw struct{ response, err, item, session, usage []byte }

// decodeBody fills in the fields an event of e.Type carries.
func (e *Event) decodeBody(typ, delta []byte, nested *nestedRaw) error {
	switch e.Type {
	case EventOther:
		e.Name = string(typ)
	case EventOutputAudioDelta:
		if err := e.decodeAudio(delta); err != nil {
			return err
		}
	case EventOutputAudioTranscriptDelta, EventOutputTextDelta, EventInputTranscriptionDelta:
		if err := setString(&e.Delta, delta); err != nil || delta == nil {
			return fmt.Errorf("%w: %s without a string delta", errMalformed, e.Type)
		}
	case EventResponseCreated, EventResponseDone:
		if err := unmarshalNested(nested.response, &e.Response); err != nil || e.Response.ID == "" {
			return fmt.Errorf("%w: %s without a response object", errMalformed, e.Type)
		}
		e.ResponseID = e.Response.ID
	case EventInputTranscriptionCompleted:
		if nested.usage != nil && string(nested.usage) != "null" {
			if err := unmarshalNested(nested.usage, &e.TranscriptionUsage); err != nil {
				return fmt.Errorf("%w: %s with a usage that is not an object", errMalformed, e.Type)
			}
		}
	case EventError:
		if err := unmarshalNested(nested.err, &e.Error); err != nil || e.Error.Message == "" && e.Error.Code == "" {
			return fmt.Errorf("%w: error event without an error object", errMalformed)
		}
	case EventItemAdded, EventItemCreated, EventItemDone:
		var it struct {
			ID   string `json:"id"`
			Role string `json:"role"`
		}
		if err := unmarshalNested(nested.item, &it); err != nil {
			return fmt.Errorf("%w: %s without an item object", errMalformed, e.Type)
		}
		e.ItemID, e.ItemRole = it.ID, it.Role
	case EventSessionCreated, EventSessionUpdated:
		var s struct {
			ID string `json:"id"`
		}
		if err := unmarshalNested(nested.session, &s); err != nil {
			return fmt.Errorf("%w: %s without a session object", errMalformed, e.Type)
		}
		e.SessionID = s.ID
	}
	return nil
}

func unmarshalNested(raw []byte, v any) error {
	if len(raw) == 0 || raw[0] != '{' {
		return errSyntax
	}
	return json.Unmarshal(raw, v)
}

// decodeAudio base64-decodes the delta straight into e.Audio.
func (e *Event) decodeAudio(raw []byte) error {
	s, ok := rawString(raw)
	if !ok {
		return fmt.Errorf("%w: audio delta is not a string", errMalformed)
	}
	n := base64.StdEncoding.DecodedLen(len(s))
	if cap(e.Audio) < n {
		e.Audio = make([]byte, n)
	}
	m, err := base64.StdEncoding.Decode(e.Audio[:n], s)
	if err != nil {
		e.Audio = e.Audio[:0]
		return fmt.Errorf("%w: audio delta: %w", errMalformed, err)
	}
	e.Audio = e.Audio[:m]
	return nil
}

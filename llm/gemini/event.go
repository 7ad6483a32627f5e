package gemini

import (
	"encoding/json"
	"fmt"
	"time"

	"google.golang.org/genai"
)

// EventKind is what one server message carried that banter acts on.
type EventKind int

// Event kinds. A server message that carries several things (an audio part and a
// transcription, usage beside a turnComplete) is read as one Event with several fields set;
// Kind is the first of them in this order.
const (
	EventUnknown EventKind = iota
	// EventSetupComplete: the setup was accepted.
	EventSetupComplete
	// EventContent: serverContent (audio, transcriptions, turn state).
	EventContent
	// EventToolCall: the model calls functions; answer with SendToolResponse.
	EventToolCall
	// EventToolCallCancellation: calls the model no longer waits for.
	EventToolCallCancellation
	// EventGoAway: the connection ends soon; reconnect with the last Handle.
	EventGoAway
	// EventResumption: a new session resumption handle.
	EventResumption
)

// String names the kind for logs.
func (k EventKind) String() string {
	switch k {
	case EventSetupComplete:
		return "setup_complete"
	case EventContent:
		return "content"
	case EventToolCall:
		return "tool_call"
	case EventToolCallCancellation:
		return "tool_call_cancellation"
	case EventGoAway:
		return "go_away"
	case EventResumption:
		return "resumption"
	default:
		return "unknown"
	}
}

// Event is one server message (BidiGenerateContentServerMessage) as banter reads it. The
// audio slices alias the SDK's decoded message: they stay valid until the caller drops the
// Event (the SDK allocates each message afresh).
type Event struct {
	Kind EventKind
	// Audio holds the model's audio parts (pcm16 24 kHz mono, inlineData "audio/pcm;rate=24000").
	Audio [][]byte
	// Text holds the text parts (TEXT responses).
	Text string
	// InputTranscript and OutputTranscript are transcription pieces of the member's and the
	// model's speech.
	InputTranscript, OutputTranscript string
	// InputFinished marks the last piece of the input transcription of a turn (when the server
	// says so).
	InputFinished bool
	// GenerationComplete, TurnComplete and Interrupted are the turn's state.
	GenerationComplete, TurnComplete, Interrupted bool
	// Calls are the function calls of a toolCall; Cancelled the ids of a cancellation.
	Calls     []Call
	Cancelled []string
	// TimeLeft is goAway's time before the connection ends.
	TimeLeft time.Duration
	// Handle is a new resumption handle (Resumable), or "" while none may be used.
	Handle    string
	Resumable bool
	// UsageTokens is usageMetadata.totalTokenCount (0 when absent).
	UsageTokens int
	// Usage is usageMetadata's token counts (nil when the message carries none).
	Usage *Usage
}

// Usage is what a Live API message's usageMetadata reports, in its terms: Prompt includes
// Cached and AudioIn (the prompt's audio tokens) and the tool-use prompt; Response is the
// response's tokens, AudioOut its audio ones; Thoughts are thinking tokens (billed as output).
type Usage struct {
	Prompt, Cached, AudioIn, Response, Thoughts, AudioOut int
}

// usageOf reads usageMetadata.
func usageOf(m *genai.UsageMetadata) *Usage {
	audio := func(ds []*genai.ModalityTokenCount) int {
		n := 0
		for _, d := range ds {
			if d != nil && d.Modality == genai.MediaModalityAudio {
				n += int(d.TokenCount)
			}
		}
		return n
	}
	return &Usage{Prompt: int(m.PromptTokenCount + m.ToolUsePromptTokenCount), Cached: int(m.CachedContentTokenCount),
		AudioIn: audio(m.PromptTokensDetails), Response: int(m.ResponseTokenCount), Thoughts: int(m.ThoughtsTokenCount),
		AudioOut: audio(m.ResponseTokensDetails)}
}

// Call is one function call. Args is the call's arguments as JSON (an object; null when the
// model sent none): untrusted input, parsed by the tool that runs it.
type Call struct {
	ID, Name string
	Args     json.RawMessage
}

// FromMessage reads one decoded server message. It fails for a message that carries nothing
// banter knows, or a function call without an id (the Gemini API requires the id in the
// toolResponse).
func FromMessage(m *genai.LiveServerMessage) (Event, error) {
	var ev Event
	if m == nil {
		return ev, fmt.Errorf("gemini: empty server message")
	}
	if m.UsageMetadata != nil {
		ev.UsageTokens = int(m.UsageMetadata.TotalTokenCount)
		ev.Usage = usageOf(m.UsageMetadata)
	}
	kind := func(k EventKind) {
		if ev.Kind == EventUnknown {
			ev.Kind = k
		}
	}
	if m.SetupComplete != nil {
		kind(EventSetupComplete)
	}
	if sc := m.ServerContent; sc != nil {
		kind(EventContent)
		readContent(&ev, sc)
	}
	if tc := m.ToolCall; tc != nil {
		kind(EventToolCall)
		for _, fc := range tc.FunctionCalls {
			if fc == nil {
				continue
			}
			if fc.ID == "" {
				return Event{}, fmt.Errorf("gemini: toolCall %q without an id", fc.Name)
			}
			args, err := json.Marshal(fc.Args)
			if err != nil {
				return Event{}, fmt.Errorf("gemini: toolCall %q arguments: %w", fc.Name, err)
			}
			ev.Calls = append(ev.Calls, Call{ID: fc.ID, Name: fc.Name, Args: args})
		}
	}
	if c := m.ToolCallCancellation; c != nil {
		kind(EventToolCallCancellation)
		ev.Cancelled = append(ev.Cancelled, c.IDs...)
	}
	if g := m.GoAway; g != nil {
		kind(EventGoAway)
		ev.TimeLeft = g.TimeLeft
	}
	if u := m.SessionResumptionUpdate; u != nil {
		kind(EventResumption)
		ev.Resumable = u.Resumable
		if u.Resumable {
			ev.Handle = u.NewHandle
		}
	}
	if ev.Kind == EventUnknown && m.UsageMetadata == nil {
		return Event{}, fmt.Errorf("gemini: server message with nothing banter reads")
	}
	return ev, nil
}

// readContent reads serverContent: every part (since Gemini 3.1 one message can carry audio
// and text together), the transcriptions and the turn state.
func readContent(ev *Event, sc *genai.LiveServerContent) {
	if mt := sc.ModelTurn; mt != nil {
		for _, p := range mt.Parts {
			switch {
			case p == nil:
			case p.InlineData != nil && len(p.InlineData.Data) > 0:
				ev.Audio = append(ev.Audio, p.InlineData.Data)
			case p.Text != "" && !p.Thought:
				ev.Text += p.Text
			}
		}
	}
	if t := sc.InputTranscription; t != nil {
		ev.InputTranscript, ev.InputFinished = t.Text, t.Finished
	}
	if t := sc.OutputTranscription; t != nil {
		ev.OutputTranscript = t.Text
	}
	ev.GenerationComplete, ev.TurnComplete, ev.Interrupted = sc.GenerationComplete, sc.TurnComplete, sc.Interrupted
}

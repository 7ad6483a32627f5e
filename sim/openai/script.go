package openaisim

import (
	"fmt"
	"regexp"
	"time"
)

// SkipText is the reply text a Reply with Skip set produces: the bot's
// "I choose not to speak" marker.
const SkipText = "[SKIP]"

// Rule maps a request to an outcome. Rules are tried in the order they were
// added; the first whose Match accepts the request and whose Times budget is
// not spent wins. A request no rule matches gets the default reply.
type Rule struct {
	// Name labels the rule in recorded requests ([Recorded].Rule).
	Name string `yaml:"name" json:"name,omitempty"`
	// Match selects the requests this rule answers.
	Match Match `yaml:"match" json:"match"`
	// Reply is what the simulator answers (unless Fault.Status is set).
	Reply Reply `yaml:"reply" json:"reply"`
	// Latency is injected into the reply; the zero value means the server's
	// default latency ([WithLatency]).
	Latency Latency `yaml:"latency" json:"latency"`
	// Fault, when non-zero, replaces or corrupts the reply.
	Fault Fault `yaml:"fault" json:"fault"`
	// Times limits how many requests the rule answers; 0 means unlimited.
	// Times: 1 rules work as a queue of one-shot outcomes.
	Times int `yaml:"times" json:"times,omitempty"`
	// Respond, when set, computes the reply from the request instead of
	// using Reply (Go only, not in scripts): rule sets whose answers depend
	// on what was asked, such as the demo brain (DemoRules). It must be
	// safe for concurrent use and must not block.
	Respond func(Request) Reply `yaml:"-" json:"-"`
}

// Request is what a Respond function sees of a request: the fields rules
// match on.
type Request struct {
	Endpoint Endpoint
	Model    string
	// LastUser is the last user input (what Match.InputPattern searches).
	LastUser string
	// Prompt is the flattened prompt (what Match.PromptPattern searches).
	Prompt string
	// Tools are the names of the function tools offered.
	Tools []string
	// Audio is the uploaded or committed audio's duration (transcriptions).
	Audio time.Duration
	// AudioOffset is where a committed span starts in its transcription session's committed
	// audio (?intent=transcription; 0 for uploads and conversation sessions): with Audio,
	// which span of the speech is transcribed.
	AudioOffset time.Duration
}

// Match selects requests. Every non-zero field must accept the request.
type Match struct {
	// Endpoint restricts the rule to one endpoint; EndpointUnknown matches all.
	Endpoint Endpoint `yaml:"endpoint" json:"endpoint,omitempty"`
	// Model must equal the request's model exactly.
	Model string `yaml:"model" json:"model,omitempty"`
	// InputPattern is a regexp (RE2) searched in the last user input text
	// (last user message for responses/chat, speech input text, realtime
	// user text or transcript of the last audio item).
	InputPattern string `yaml:"input_pattern" json:"input_pattern,omitempty"`
	// PromptPattern is a regexp searched in the whole flattened prompt
	// (instructions + every input item), e.g. to tell a YES/NO classifier
	// prompt from a generation prompt.
	PromptPattern string `yaml:"prompt_pattern" json:"prompt_pattern,omitempty"`
	// HasTools, when set, requires the request to offer tools (true) or none.
	HasTools *bool `yaml:"has_tools" json:"has_tools,omitempty"`
	// Tool requires a function tool with this name, or a hosted tool of
	// this type ("web_search"), to be offered.
	Tool string `yaml:"tool" json:"tool,omitempty"`
	// MinAudio and MaxAudio bound the uploaded/committed audio duration
	// (inclusive); zero means unbounded.
	MinAudio time.Duration `yaml:"min_audio" json:"min_audio,omitempty"`
	MaxAudio time.Duration `yaml:"max_audio" json:"max_audio,omitempty"`
	// Stream, when set, requires a streaming (true) or non-streaming request.
	Stream *bool `yaml:"stream" json:"stream,omitempty"`
}

// Reply is a scripted outcome.
type Reply struct {
	// Text is the assistant text (streamed token by token). For speech it is
	// ignored: speech always voices the request's input.
	Text string `yaml:"text" json:"text,omitempty"`
	// Skip makes the text SkipText ("[SKIP]").
	Skip bool `yaml:"skip" json:"skip,omitempty"`
	// ToolCalls are function calls the model "makes" instead of (or after)
	// Text. Arguments are sent verbatim, so invalid JSON and hallucinated ids
	// can be scripted.
	ToolCalls []ToolCall `yaml:"tool_calls" json:"tool_calls,omitempty"`
	// Transcript answers transcription requests (REST and realtime input).
	Transcript string `yaml:"transcript" json:"transcript,omitempty"`
	// NoSpeech answers a transcription with an empty transcript (audio with no words in it,
	// such as a span of a transcription session that is all pause) instead of the default.
	NoSpeech bool `yaml:"no_speech" json:"no_speech,omitempty"`
	// Language is reported by verbose_json transcriptions; default "english".
	Language string `yaml:"language" json:"language,omitempty"`
	// Audio, when set, is sent instead of synthesized speech by speech
	// requests and realtime audio responses: pcm16 (s16le) 24 kHz mono, an
	// odd trailing byte is dropped. The simulator does not copy it; do not
	// modify it while the rule is in use.
	Audio []byte `yaml:"-" json:"-"`
	// Refusal makes a responses/chat reply a refusal with this text.
	Refusal string `yaml:"refusal" json:"refusal,omitempty"`
	// WebSearch makes a Responses reply that offers the hosted web_search
	// tool search first: a web_search_call item, then the message (Text, or
	// a default) citing the results with url_citation annotations.
	WebSearch *WebSearch `yaml:"web_search" json:"web_search,omitempty"`
}

// ToolCall is one function call in a reply.
type ToolCall struct {
	// Name is the function name; it need not be one of the offered tools.
	Name string `yaml:"name" json:"name,omitempty"`
	// Arguments is the raw JSON argument string (sent as-is, may be invalid).
	Arguments string `yaml:"arguments" json:"arguments"`
	// CallID is the call id; empty means generated ("call_sim...").
	CallID string `yaml:"call_id" json:"call_id,omitempty"`
}

// Latency is injected delay per phase. Every delay the simulator sleeps is
// recorded in [Recorded].Injected so callers can subtract it.
type Latency struct {
	// TimeToFirstToken delays the first output (first SSE delta, the whole
	// non-streamed body, a transcription result, the first realtime delta).
	TimeToFirstToken time.Duration `yaml:"time_to_first_token" json:"time_to_first_token,omitempty"`
	// PerToken delays each further token (streamed deltas; for non-streamed
	// bodies the sum is slept before answering).
	PerToken time.Duration `yaml:"per_token" json:"per_token,omitempty"`
	// TTSFirstByte delays the first byte of a speech body.
	TTSFirstByte time.Duration `yaml:"tts_first_byte" json:"tts_first_byte,omitempty"`
	// PerAudioChunk delays each further speech chunk (100 ms of audio each).
	PerAudioChunk time.Duration `yaml:"per_audio_chunk" json:"per_audio_chunk,omitempty"`
}

// IsZero reports whether no latency is configured.
func (l Latency) IsZero() bool { return l == Latency{} }

// Fault corrupts or replaces a reply. Each kind is reproducible on its own.
type Fault struct {
	// Status, when non-zero, answers with this HTTP status and an OpenAI JSON
	// error body instead of the reply (429 gets a retry-after header). On the
	// realtime handshake the upgrade is refused; inside a realtime response an
	// `error` event with response.done status "failed" is sent instead.
	Status int `yaml:"status" json:"status,omitempty"`
	// RetryAfter is sent as retry-after (seconds) and retry-after-ms with 429
	// and 503 statuses; default 1s for 429.
	RetryAfter time.Duration `yaml:"retry_after" json:"retry_after,omitempty"`
	// Message overrides the error message.
	Message string `yaml:"message" json:"message,omitempty"`
	// Timeout makes the simulator never answer: the request hangs until the
	// client gives up (or the server closes). Realtime responses stall.
	Timeout bool `yaml:"timeout" json:"timeout,omitempty"`
	// TruncateAfterEvents aborts a streamed reply after this many SSE events
	// (or a speech body after this many chunks) without a terminal event; a
	// non-streamed body is cut in half with a wrong Content-Length. Any
	// value > 0 triggers truncation; for non-streamed bodies the number is
	// not used.
	TruncateAfterEvents int `yaml:"truncate_after_events" json:"truncate_after_events,omitempty"`
	// StallAfterEvents stops a streamed reply after this many SSE events
	// (speech: chunks) and then sends nothing until the client gives up,
	// e.g. to exercise stream idle timeouts.
	StallAfterEvents int `yaml:"stall_after_events" json:"stall_after_events,omitempty"`
	// StreamErrorAfterEvents ends a streamed reply after this many SSE
	// events with OpenAI's in-stream error: an `error` event and
	// `response.failed` (responses), or `data: {"error":{...}}` (chat,
	// transcription, speech SSE). Status picks the error (default 500).
	StreamErrorAfterEvents int `yaml:"stream_error_after_events" json:"stream_error_after_events,omitempty"`
	// MalformedJSON makes the body (non-streamed) or the first delta event
	// (streamed, realtime) invalid JSON.
	MalformedJSON bool `yaml:"malformed_json" json:"malformed_json,omitempty"`
	// DropAfterEvents closes a realtime socket abruptly (no close frame)
	// after this many server events: counted from the handshake for
	// EndpointRealtime rules, from response.create for
	// EndpointRealtimeResponse rules.
	DropAfterEvents int `yaml:"drop_after_events" json:"drop_after_events,omitempty"`
	// DropOnClientEvent closes an OpenAI realtime socket abruptly (no close frame) when the
	// client sends an event of this type (EndpointRealtime rules), after recording it and
	// before acting on it: a connection lost at a chosen point of a conversation.
	DropOnClientEvent string `yaml:"drop_on_client_event" json:"drop_on_client_event,omitempty"`
	// IgnoreClientEvent makes an OpenAI realtime session record every client event of this type
	// and then do nothing with it (EndpointRealtime rules): no answer, no effect, as if the event
	// were lost on its way. A client that waits for the answer has to give up on its own.
	IgnoreClientEvent string `yaml:"ignore_client_event" json:"ignore_client_event,omitempty"`
	// CloseCode closes a Gemini Live socket with this WebSocket close code (1007 invalid
	// argument, 1008 policy, 1011 internal error) and Message (or the real API's usual reason
	// for the code): after setup for EndpointGeminiLive rules (instead of setupComplete), at the
	// start of the turn for EndpointGeminiResponse rules.
	CloseCode int `yaml:"close_code" json:"close_code,omitempty"`
}

// IsZero reports whether the fault is empty.
func (f Fault) IsZero() bool { return f == Fault{} }

// compiledRule is a Rule with its regexps compiled and its budget tracked.
type compiledRule struct {
	Rule
	input  *regexp.Regexp
	prompt *regexp.Regexp
	used   int
}

func compileRule(r Rule) (*compiledRule, error) {
	c := &compiledRule{Rule: r}
	var err error
	if r.Match.InputPattern != "" {
		if c.input, err = regexp.Compile(r.Match.InputPattern); err != nil {
			return nil, fmt.Errorf("openaisim: rule %q: input pattern: %w", r.Name, err)
		}
	}
	if r.Match.PromptPattern != "" {
		if c.prompt, err = regexp.Compile(r.Match.PromptPattern); err != nil {
			return nil, fmt.Errorf("openaisim: rule %q: prompt pattern: %w", r.Name, err)
		}
	}
	if r.Times < 0 {
		return nil, fmt.Errorf("openaisim: rule %q: negative Times %d", r.Name, r.Times)
	}
	return c, nil
}

// matchInput is what rules are matched against.
type matchInput struct {
	endpoint  Endpoint
	model     string
	lastUser  string
	prompt    string
	tools     []string
	audio     time.Duration
	pcm       []byte // a WAV upload's samples (transcriptions)
	hasAudio  bool
	streaming bool
	// audioOffset and session: a realtime session's committed item (transcriptions).
	audioOffset time.Duration
	session     string
}

func (c *compiledRule) matches(in *matchInput) bool {
	if c.Times > 0 && c.used >= c.Times {
		return false
	}
	m := &c.Match
	if m.Endpoint != EndpointUnknown && m.Endpoint != in.endpoint {
		return false
	}
	if m.Model != "" && m.Model != in.model {
		return false
	}
	if c.input != nil && !c.input.MatchString(in.lastUser) {
		return false
	}
	if c.prompt != nil && !c.prompt.MatchString(in.prompt) {
		return false
	}
	if m.HasTools != nil && *m.HasTools != (len(in.tools) > 0) {
		return false
	}
	if m.Tool != "" && !contains(in.tools, m.Tool) {
		return false
	}
	if m.MinAudio > 0 || m.MaxAudio > 0 {
		if !in.hasAudio {
			return false
		}
		if m.MinAudio > 0 && in.audio < m.MinAudio {
			return false
		}
		if m.MaxAudio > 0 && in.audio > m.MaxAudio {
			return false
		}
	}
	if m.Stream != nil && *m.Stream != in.streaming {
		return false
	}
	return true
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// outcome is the resolved result of rule matching for one request.
type outcome struct {
	rule    string
	reply   Reply
	latency Latency
	fault   Fault
	respond func(Request) Reply // computes reply outside the server's lock
}

// text returns the reply text, honouring Skip.
func (o *outcome) text() string {
	if o.reply.Skip {
		return SkipText
	}
	return o.reply.Text
}

// Bool returns a pointer to b, for Match.HasTools and Match.Stream.
func Bool(b bool) *bool { return &b }

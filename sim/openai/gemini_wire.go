package openaisim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The Gemini Live API's client messages (BidiGenerateContentClientMessage), as the Gemini
// Developer API reads them: camelCase proto3 JSON, one of setup | clientContent |
// realtimeInput | toolResponse per message. The structs are decoded strictly (an unknown field
// is refused, as the real API refuses it: "Invalid JSON payload received. Unknown name …");
// nested objects the simulator does not interpret are kept raw.
//
// https://ai.google.dev/api/live#bidigeneratecontentclientmessage
// google/ai/generativelanguage/v1beta/generative_service.proto (BidiGenerateContent*).

// gmClientMessage is one decoded client message: exactly one field is set.
type gmClientMessage struct {
	Setup         *gmSetup         `json:"setup"`
	ClientContent *gmClientContent `json:"clientContent"`
	RealtimeInput *gmRealtimeInput `json:"realtimeInput"`
	ToolResponse  *gmToolResponse  `json:"toolResponse"`
}

// gmSetup is BidiGenerateContentSetup.
type gmSetup struct {
	Model                    string                 `json:"model"`
	GenerationConfig         *gmGenerationConfig    `json:"generationConfig"`
	SystemInstruction        *gmContent             `json:"systemInstruction"`
	Tools                    []gmTool               `json:"tools"`
	RealtimeInputConfig      *gmRealtimeInputConfig `json:"realtimeInputConfig"`
	SessionResumption        *gmSessionResumption   `json:"sessionResumption"`
	ContextWindowCompression *gmCompression         `json:"contextWindowCompression"`
	InputAudioTranscription  json.RawMessage        `json:"inputAudioTranscription"`
	OutputAudioTranscription json.RawMessage        `json:"outputAudioTranscription"`
	Proactivity              json.RawMessage        `json:"proactivity"`
	HistoryConfig            json.RawMessage        `json:"historyConfig"`
	SafetySettings           json.RawMessage        `json:"safetySettings"`
}

// gmGenerationConfig is the part of GenerationConfig a Live setup accepts. The fields the proto
// says setup does not support (responseLogprobs, responseMimeType, logprobs, responseSchema,
// responseJsonSchema, stopSequences, routingConfig, audioTimestamp) are absent, so they are
// refused like unknown ones.
type gmGenerationConfig struct {
	ResponseModalities    []string        `json:"responseModalities"`
	Temperature           *float64        `json:"temperature"`
	TopP                  *float64        `json:"topP"`
	TopK                  *float64        `json:"topK"`
	CandidateCount        int             `json:"candidateCount"`
	MaxOutputTokens       int             `json:"maxOutputTokens"`
	PresencePenalty       *float64        `json:"presencePenalty"`
	FrequencyPenalty      *float64        `json:"frequencyPenalty"`
	Seed                  *int64          `json:"seed"`
	MediaResolution       string          `json:"mediaResolution"`
	SpeechConfig          json.RawMessage `json:"speechConfig"`
	ThinkingConfig        json.RawMessage `json:"thinkingConfig"`
	EnableAffectiveDialog *bool           `json:"enableAffectiveDialog"`
	TranslationConfig     json.RawMessage `json:"translationConfig"`
}

// gmContent is a Content: a role and its parts.
type gmContent struct {
	Role  string   `json:"role"`
	Parts []gmPart `json:"parts"`
}

// gmPart is one Part; only text and inline data are read.
type gmPart struct {
	Text                string          `json:"text"`
	InlineData          *gmBlob         `json:"inlineData"`
	FileData            json.RawMessage `json:"fileData"`
	FunctionCall        json.RawMessage `json:"functionCall"`
	FunctionResponse    json.RawMessage `json:"functionResponse"`
	ExecutableCode      json.RawMessage `json:"executableCode"`
	CodeExecutionResult json.RawMessage `json:"codeExecutionResult"`
	Thought             bool            `json:"thought"`
	ThoughtSignature    string          `json:"thoughtSignature"`
	VideoMetadata       json.RawMessage `json:"videoMetadata"`
}

// gmBlob is a Blob: base64 data and its MIME type.
type gmBlob struct {
	MimeType    string `json:"mimeType"`
	Data        []byte `json:"data"` // base64 on the wire
	DisplayName string `json:"displayName"`
}

// gmTool is one Tool: function declarations or a hosted tool.
type gmTool struct {
	FunctionDeclarations  []gmFunctionDeclaration `json:"functionDeclarations"`
	GoogleSearch          json.RawMessage         `json:"googleSearch"`
	GoogleSearchRetrieval json.RawMessage         `json:"googleSearchRetrieval"`
	CodeExecution         json.RawMessage         `json:"codeExecution"`
	URLContext            json.RawMessage         `json:"urlContext"`
}

// gmFunctionDeclaration is a FunctionDeclaration. Behavior is BLOCKING unless NON_BLOCKING.
type gmFunctionDeclaration struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description"`
	Parameters           json.RawMessage `json:"parameters"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
	Response             json.RawMessage `json:"response"`
	ResponseJSONSchema   json.RawMessage `json:"responseJsonSchema"`
	Behavior             string          `json:"behavior"`
}

// gmRealtimeInputConfig is RealtimeInputConfig.
type gmRealtimeInputConfig struct {
	AutomaticActivityDetection *gmActivityDetection `json:"automaticActivityDetection"`
	ActivityHandling           string               `json:"activityHandling"`
	TurnCoverage               string               `json:"turnCoverage"`
}

// gmActivityDetection is AutomaticActivityDetection (the server's VAD).
type gmActivityDetection struct {
	Disabled                 bool   `json:"disabled"`
	StartOfSpeechSensitivity string `json:"startOfSpeechSensitivity"`
	EndOfSpeechSensitivity   string `json:"endOfSpeechSensitivity"`
	PrefixPaddingMs          *int   `json:"prefixPaddingMs"`
	SilenceDurationMs        *int   `json:"silenceDurationMs"`
}

// gmSessionResumption is SessionResumptionConfig.
type gmSessionResumption struct {
	Handle      string `json:"handle"`
	Transparent bool   `json:"transparent"`
}

// gmCompression is ContextWindowCompressionConfig.
type gmCompression struct {
	TriggerTokens *gmInt64 `json:"triggerTokens"`
	SlidingWindow *struct {
		TargetTokens *gmInt64 `json:"targetTokens"`
	} `json:"slidingWindow"`
}

// gmInt64 is a proto3 int64: a JSON string ("100000") or, as protojson also accepts, a number.
type gmInt64 int64

// UnmarshalJSON reads a quoted or bare integer.
func (v *gmInt64) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("invalid int64 value %s", b)
	}
	*v = gmInt64(n)
	return nil
}

// gmClientContent is BidiGenerateContentClientContent.
type gmClientContent struct {
	Turns        []gmContent `json:"turns"`
	TurnComplete bool        `json:"turnComplete"`
}

// gmRealtimeInput is BidiGenerateContentRealtimeInput.
type gmRealtimeInput struct {
	MediaChunks    []gmBlob  `json:"mediaChunks"`
	Audio          *gmBlob   `json:"audio"`
	Video          *gmBlob   `json:"video"`
	Text           string    `json:"text"`
	AudioStreamEnd bool      `json:"audioStreamEnd"`
	ActivityStart  *struct{} `json:"activityStart"`
	ActivityEnd    *struct{} `json:"activityEnd"`
}

// gmToolResponse is BidiGenerateContentToolResponse.
type gmToolResponse struct {
	FunctionResponses []gmFunctionResponse `json:"functionResponses"`
}

// gmFunctionResponse is a FunctionResponse; the id is required on the Gemini API.
type gmFunctionResponse struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Response     json.RawMessage `json:"response"`
	Scheduling   string          `json:"scheduling"`
	WillContinue *bool           `json:"willContinue"`
	Parts        json.RawMessage `json:"parts"`
}

// gmCloseError is why the server closes a Live socket: a WebSocket close code (1007 invalid
// argument, 1008 policy, 1011 internal) and the reason text the real API sends.
type gmCloseError struct {
	Code   int
	Reason string
}

func (e *gmCloseError) Error() string { return fmt.Sprintf("close %d: %s", e.Code, e.Reason) }

// invalidArgument is the real API's 1007 close.
func invalidArgument(format string, args ...any) *gmCloseError {
	return &gmCloseError{Code: 1007, Reason: fmt.Sprintf(format, args...)}
}

// gmMessageKinds are the oneof fields of a client message, in proto order.
var gmMessageKinds = []string{"setup", "clientContent", "realtimeInput", "toolResponse"}

// decodeGeminiClientMessage parses one client message strictly: a JSON object with exactly one
// of the four oneof fields, each decoded with unknown fields refused. It returns the message's
// kind ("setup", …) with it, or the 1007 close the real API answers a malformed message with.
func decodeGeminiClientMessage(data []byte) (string, *gmClientMessage, *gmCloseError) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		return "", nil, invalidArgument("Invalid JSON payload received. %s", jsonProblem(err))
	}
	kind := ""
	for k := range top {
		if !contains(gmMessageKinds, k) {
			return "", nil, invalidArgument("Invalid JSON payload received. Unknown name %q: Cannot find field.", k)
		}
		if kind != "" {
			return "", nil, invalidArgument("Invalid JSON payload received. Oneof field 'message_type' is already set. Cannot set '%s'", protoName(k))
		}
		kind = k
	}
	if kind == "" {
		return "", nil, invalidArgument("Request contains an invalid argument: a client message needs one of setup, clientContent, realtimeInput, toolResponse.")
	}
	m := &gmClientMessage{}
	var dst any
	switch kind {
	case "setup":
		m.Setup = &gmSetup{}
		dst = m.Setup
	case "clientContent":
		m.ClientContent = &gmClientContent{}
		dst = m.ClientContent
	case "realtimeInput":
		m.RealtimeInput = &gmRealtimeInput{}
		dst = m.RealtimeInput
	default:
		m.ToolResponse = &gmToolResponse{}
		dst = m.ToolResponse
	}
	dec := json.NewDecoder(bytes.NewReader(top[kind]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return "", nil, invalidArgument("Invalid JSON payload received. %s at '%s'", jsonProblem(err), protoName(kind))
	}
	return kind, m, nil
}

// jsonProblem words a decoding error the way Google's JSON parser does.
func jsonProblem(err error) string {
	if err == nil {
		return "Expected an object."
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return "Unknown name " + name + ": Cannot find field."
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Sprintf("Unexpected token at offset %d.", syn.Offset)
	}
	return err.Error()
}

// protoName is a camelCase field's proto name (clientContent → client_content).
func protoName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// text joins the text parts of a content.
func (c *gmContent) text() string {
	var parts []string
	for _, p := range c.Parts {
		if p.Text != "" {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, " ")
}

// pcmRate reads the rate of an "audio/pcm;rate=16000" MIME type; 16000 when it names none, as
// the Live API assumes. ok is false for a type that is not raw PCM.
func pcmRate(mime string) (rate int, ok bool) {
	base, params, _ := strings.Cut(mime, ";")
	if strings.TrimSpace(base) != "audio/pcm" {
		return 0, false
	}
	rate = 16000
	for _, p := range strings.Split(params, ";") {
		if v, found := strings.CutPrefix(strings.TrimSpace(p), "rate="); found {
			n, err := strconv.Atoi(v)
			if err != nil || n < 8000 || n > 48000 {
				return 0, false
			}
			rate = n
		}
	}
	return rate, true
}

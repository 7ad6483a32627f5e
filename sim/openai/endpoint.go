package openaisim

import "fmt"

// Endpoint names an API surface of the simulator. Rules match on it and every
// recorded request carries it.
type Endpoint int

// Endpoints. The zero value EndpointUnknown in a [Match] means "any endpoint".
const (
	EndpointUnknown Endpoint = iota
	// EndpointResponses is POST /v1/responses.
	EndpointResponses
	// EndpointChatCompletions is POST /v1/chat/completions.
	EndpointChatCompletions
	// EndpointTranscriptions is POST /v1/audio/transcriptions.
	EndpointTranscriptions
	// EndpointSpeech is POST /v1/audio/speech.
	EndpointSpeech
	// EndpointModels is GET /v1/models and /v1/models/{id}.
	EndpointModels
	// EndpointRealtime is the WebSocket handshake at /v1/realtime. A rule
	// matching it can refuse the upgrade (Fault.Status) or drop the socket after
	// a number of server events (Fault.DropAfterEvents).
	EndpointRealtime
	// EndpointRealtimeResponse is one response.create on a realtime socket
	// (explicit, or automatic after server VAD commits a turn).
	EndpointRealtimeResponse
	// EndpointRealtimeTranscription is the input-audio transcription of a
	// committed realtime audio item (when the session enables it).
	EndpointRealtimeTranscription
	// EndpointGeminiLive is the Gemini Live WebSocket handshake (BidiGenerateContent). A rule
	// matching it can refuse the upgrade (Fault.Status), delay setupComplete
	// (Latency.TimeToFirstToken), close the socket after setup (Fault.CloseCode) or drop it
	// after a number of server messages (Fault.DropAfterEvents).
	EndpointGeminiLive
	// EndpointGeminiResponse is one model turn on a Gemini Live socket.
	EndpointGeminiResponse
	// EndpointGeminiTranscription is the transcription of a user activity's audio on a Gemini
	// Live socket (what the model heard; sent as inputTranscription when the setup asks).
	EndpointGeminiTranscription
	// EndpointEmbeddings is POST /v1/embeddings.
	EndpointEmbeddings
)

// String returns a short stable name, e.g. "responses".
func (e Endpoint) String() string {
	switch e {
	case EndpointResponses:
		return "responses"
	case EndpointChatCompletions:
		return "chat.completions"
	case EndpointTranscriptions:
		return "audio.transcriptions"
	case EndpointSpeech:
		return "audio.speech"
	case EndpointModels:
		return "models"
	case EndpointRealtime:
		return "realtime"
	case EndpointRealtimeResponse:
		return "realtime.response"
	case EndpointRealtimeTranscription:
		return "realtime.transcription"
	case EndpointGeminiLive:
		return "gemini.live"
	case EndpointGeminiResponse:
		return "gemini.response"
	case EndpointGeminiTranscription:
		return "gemini.transcription"
	case EndpointEmbeddings:
		return "embeddings"
	default:
		return "unknown"
	}
}

// endpointCount bounds the valid endpoints for parsing.
const endpointCount = EndpointEmbeddings + 1

// MarshalText encodes the endpoint by name (for YAML/JSON scripts).
func (e Endpoint) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// UnmarshalText parses an endpoint name as String returns it, or a short
// alias ("chat", "transcriptions", "speech"); "", "any" and "unknown" mean
// EndpointUnknown (any endpoint).
func (e *Endpoint) UnmarshalText(b []byte) error {
	s := string(b)
	switch s {
	case "", "any", "unknown":
		*e = EndpointUnknown
		return nil
	case "chat":
		*e = EndpointChatCompletions
		return nil
	case "transcriptions":
		*e = EndpointTranscriptions
		return nil
	case "speech":
		*e = EndpointSpeech
		return nil
	}
	for c := EndpointUnknown + 1; c < endpointCount; c++ {
		if c.String() == s {
			*e = c
			return nil
		}
	}
	return fmt.Errorf("openaisim: unknown endpoint %q", s)
}

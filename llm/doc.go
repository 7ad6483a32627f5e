// Package llm is banter's OpenAI client: text generation with the
// send_discord_message tool (Responses API or, for OpenAI-compatible
// servers, chat completions), streaming generation for voice, a small
// YES/NO classifier call, transcription and speech. It speaks the real API
// through openai-go v3 and is pointed at any compatible server (or the
// simulator in sim/openai) by Options.BaseURL. It knows nothing of Discord
// beyond the tool's name.
//
// Every method takes a context first, retries retryable failures itself
// (429 honouring retry-after, 5xx, timeouts, network errors, truncated
// bodies; bounded by Options.MaxRetries and MaxRetryDelay) and returns
// failures as *APIError with a Kind and Retryable flag to branch on.
// Streaming calls (Stream, Speak) return only after the first token/byte,
// so everything before that is retried too, and time to first token/byte is
// measured and exported.
//
// The realtime API (WebSocket) lives in the subpackage llm/realtime.
//
// See docs/llm.md for the API overview and configuration mapping.
package llm

// Package openaisim is a local simulator of the OpenAI API for tests, benchmarks
// and the sandbox. It speaks the same wire format as api.openai.com, as sent and
// parsed by github.com/openai/openai-go/v3 (v3.96.0):
//
//   - POST /v1/responses (input items, instructions, function tools, tool_choice,
//     function_call / function_call_output items, SSE streaming)
//   - POST /v1/chat/completions (tools, SSE streaming with [DONE])
//   - POST /v1/audio/transcriptions (multipart; WAV or raw pcm16; json, text,
//     verbose_json, srt, vtt; SSE when stream=true)
//   - POST /v1/audio/speech (pcm s16le 24 kHz mono or wav, chunked body, or SSE
//     with stream_format=sse); audio length is proportional to the text and the
//     signal is speech-like (syllable-rate modulated harmonics with pitch glides)
//   - POST /v1/embeddings (float or base64 vectors, dimensions; a deterministic
//     stand-in for a model: hashed words and trigrams with a small synonym table, Embed)
//   - GET /v1/models, GET /v1/models/{id}
//   - GET /v1/realtime?model=... (WebSocket, GA realtime event names)
//
// What the simulator answers is scripted with [Rule]s: a [Match] over the
// request (endpoint, model, a regexp over the last user input, tool presence,
// audio length) selects a [Reply] (text, [SKIP], tool calls, transcript),
// injected [Latency] (time to first token, per token, TTS time to first byte)
// and an optional [Fault] (HTTP status with retry-after, timeout, truncated
// stream, malformed JSON, socket drop). Requests that match no rule get a
// sensible default (an echo of the user's words, a default transcript, speech
// synthesized from the input text).
//
// Every request is recorded ([Server.Requests]) with its flattened prompt,
// tools, model, audio duration and the latency the simulator injected into it,
// so benchmarks can report overhead = measured − injected. Every realtime
// client event is recorded too ([Server.RealtimeEvents]).
//
// Scripts load from YAML or JSON ([ParseScript], [WithScript]); a running
// simulator also serves control endpoints under /_sim/ (recorded requests,
// adding rules). Tests start one with [Serve]; `banter sim openai` runs
// [RunStandalone].
//
// Performance (BenchmarkResponsesNew, BenchmarkSynthesize; 2 shared cores):
// a Responses round trip through openai-go costs ≈1.8× the same call against
// a bare canned handler (≈250 µs vs ≈140 µs), and speech synthesis (a
// formant synthesizer) runs ≈1,350× faster than real time (≈2.6× the cost
// of writing a plain sine).
// Production code must not import this package (see ARCHITECTURE.md): point
// the real clients at [Server.BaseURL] instead.
package openaisim

// Package gemini is banter's client for the Gemini Live API (BidiGenerateContent), a thin
// layer over Google's own Go SDK, google.golang.org/genai (its Live client): Open dials and
// sends the setup (audio out with input and output transcriptions, session resumption always
// on, context window compression), Conn sends member audio (realtimeInput.audio, pcm16 mono),
// activityStart/activityEnd, text turns and tool responses, and Next reads server messages
// into an Event (FromMessage, no I/O: audio parts, transcriptions, turn state, tool calls,
// goAway, resumption handles). A close is a *CloseError whose Action says whether to resume
// with the last handle, restart without one, or give up (close.go: 1007, 1008, 1011).
// Transcriber hears speech through the API's input transcription, one activity per utterance
// on connections of its own (transcriber.go). Config.Metrics counts connects, messages and audio
// in the banter_realtime_* families (llm/realtime.NewMetricsFor with provider "gemini").
//
// Why the SDK and not our own socket: it is Google's reference for the wire format (camelCase
// setup, where each field goes, the JSON it reads from text and binary frames), and its cost
// fits the latency budget: a message is decoded twice (JSON to a map, the map re-encoded and
// decoded into the typed struct), 0.33 ms and 69 allocations (41 kB) for a 200 ms audio part
// (BenchmarkReceiveAudioPart, 2 shared cores), against the 5 ms own-overhead budget of time to
// first audio. It does not fit a CPU budget at scale as well: that is about 20 times what
// llm/realtime's own decoder spends per second of OpenAI audio (11-16 µs, 0 allocations, per
// 100 ms delta), so a Gemini voice capacity run is the measurement that would call for our own
// decoder. Its limits, worked around here: Connect takes no context for its
// dial (Open returns on ctx and abandons the dial), and its sends are not safe for concurrent
// use (Conn serialises them).
//
// Protocol reference: https://ai.google.dev/api/live; shared notes in
// docs/realtime.md ("Gemini Live").
package gemini

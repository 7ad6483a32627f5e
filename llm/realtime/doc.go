// Package realtime is a client for the OpenAI Realtime API (GA event set)
// over gorilla/websocket: dial /v1/realtime?model=... with a bearer key,
// send client events (session.update, input_audio_buffer.append/commit/
// clear, conversation.item.create/truncate, response.create/cancel) and read
// server events into a caller-owned Event whose output audio is decoded
// from base64 straight into a reused buffer.
//
// Codec and transport are separate: commands.go and events.go (with the
// allocation-free top-level JSON scanner in scan.go) do no I/O; Conn owns
// the socket and starts no goroutines — the caller runs the read loop.
//
// Reconnecting is decided by the caller (voice/realtime): a Conn is one
// socket. When ReadEvent fails, call Open again with the same Session (it
// dials with back-off and re-applies the session, so the instructions
// survive) and re-create the conversation items the model should remember. Malformed server events never end the read loop; they
// are counted (banter_realtime_malformed_events_total) and skipped.
//
// Performance (2-core EPYC, same-run baselines, BenchmarkDecodeAudioDelta
// and BenchmarkAppendAudio): decoding a 100 ms output_audio.delta takes
// 11-16 µs with 0 allocations against 49-60 µs and 8 allocations for
// encoding/json + base64.DecodeString; encoding a 20 ms append takes 1.3 µs
// with 0 allocations against 6-7 µs and 11 allocations for json.Marshal.
//
// Protocol reference: https://platform.openai.com/docs/api-reference/realtime
package realtime

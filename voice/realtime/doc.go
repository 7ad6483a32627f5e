// Package realtime is banter's voice.mode realtime: a Bridge owns the OpenAI
// Realtime socket (llm/realtime over gorilla/websocket) of one voice session
// and applies the decision engine in one of two strategies
// (voice.realtimeReplyStrategy):
//
//   - native: Stage A is the gate. Respond takes every decided turn; only an
//     admitted one is forwarded (input_audio_buffer.append in 100 ms chunks
//     of pcm16 24 kHz mono, commit) and answered (response.create). A denied
//     turn is logged as realtime_reply_skipped and never reaches the model:
//     there is no "forward everything" path. No local [SKIP] stage.
//   - brain: the session's own generation writes the reply; SpeakReply runs
//     it through Stage B (decision.StreamFilter) and a [SKIP] or empty reply
//     sends nothing, otherwise Speak has the realtime model voice exactly
//     that text (a response whose instructions carry it).
//
// Endpointing stays local: the session is configured with turn_detection
// null unless ServerTurnDetection, and even then with create_response and
// interrupt_response false, so the server never answers on its own.
//
// Audio out: the model's output_audio.delta (24 kHz mono) is queued by the
// socket's read loop and turned into 20 ms Opus frames (audio.Talker:
// resample to 48 kHz stereo, encode) by a player goroutine that hands them
// to Config.Sink (discord/voice Conn.SendOpus, which paces), so the read
// loop never waits for pacing. The player counts the frames the Sink
// accepted per item: that is what listeners heard.
//
// Interrupt (barge-in) stops output at once (queued audio dropped, the
// frame in flight cancelled), sends response.cancel if the response is
// still streaming, waits for its response.done, and then truncates the
// item (conversation.item.truncate) at audio_end_ms = frames played × 20 ms
// (clamped to the audio received). Truncating only after response.done is
// also what the simulator requires (it refuses a truncate that races the
// cancel, real OpenAI accepts both orders).
//
// Sessions: a dropped socket is reopened with back-off (llm/realtime Open
// retries handshakes; the Bridge retries Open, 500 ms doubling to 30 s);
// a session older than SessionMax is rolled over to a fresh one once no
// response is in progress (turns wait meanwhile). Both restore the
// instructions plus a summary of the recent turns (speakers' transcripts and
// the bot's transcripts, cut where it was interrupted). A response lost
// with the socket is logged (realtime_reply_lost) and counted as failed.
// Malformed server events are counted by llm/realtime
// (banter_realtime_malformed_events_total) and skipped.
//
// Responder adapts the Bridge to the voice session (voice.Responder): one
// Bridge per voice session, audio written into the session's voice.Playback,
// barge-in by cancelling the reply's context (truncate at Playback.Played).
//
// Logs: realtime_reply_requested and realtime_reply_skipped (strategy,
// turn, speaker, Stage A reason and signal, skip_reason, latency_ms from the
// end of speech), realtime_interrupted, realtime_socket_dropped,
// realtime_reconnected, realtime_reply_lost. Never per packet. Metrics: see
// NewMetrics.
//
// Performance (go test -bench . -benchtime 3000x, 2-core EPYC at load
// average 12-17, same-run baselines): the output path per 20 ms frame
// (queue, hand-off to the player goroutine, resample, Opus encode, sink) is
// allocation-free (TestPlayerFrameAllocs); it costs what the bare
// audio.Talker costs plus the hand-off, the encoder dominating:
//
//	BenchmarkTalkerFrame-2        330-539 µs/op   0 allocs/op  (baseline: bare Talker)
//	BenchmarkPlayerFrame-2        430-916 µs/op   0 allocs/op
//	BenchmarkForwardFrame-2        43-55 µs/op    0 allocs/op  (48k stereo → 24k mono + append JSON)
//
// From an item's first 100 ms audio delta to its first Opus frame at the
// sink: median 141-157 µs, against 127-145 µs for the same frame encoded
// inline by a bare Talker (BenchmarkFirstDeltaToFrame vs
// BenchmarkFirstDeltaDirect): the queue and goroutine hand-off add ~15 µs,
// far under the 5 ms budget. (One allocation per reply, not per frame: the
// idle signal.) On a quiet machine the Talker frame is ~160 µs. Through the
// bot's real discord/voice Conn on the voice simulator, from the first delta
// to the first Opus packet written to UDP (Op 5, transport encryption,
// send; BenchmarkFirstDeltaToPacket, a new talk spurt each time): median
// 255-259 µs.
package realtime

// Package realtime is banter's voice.mode realtime: a Bridge owns the OpenAI
// Realtime socket (llm/realtime over gorilla/websocket) of one voice session
// and applies the decision engine in one of two strategies
// (voice.realtimeReplyStrategy):
//
//   - native: Stage A is the gate. The Responder forwards only an admitted
//     turn (input_audio_buffer.append in 100 ms chunks of pcm16 24 kHz mono,
//     commit) and asks for the answer (response.create). A denied turn is
//     logged as realtime_reply_skipped and never reaches the model: there is
//     no "forward everything" path. No local [SKIP] stage.
//   - brain: the session's own generation writes the reply; Stage B
//     (decision.ReplyDecision) drops a [SKIP] or empty reply and nothing is
//     sent, otherwise the realtime model voices exactly that text (a
//     response whose instructions carry it).
//
// Endpointing stays local: the session is configured with turn_detection
// null unless ServerTurnDetection, and even then with create_response and
// interrupt_response false, so the server never answers on its own.
//
// Audio out: the socket's read loop hands the model's output_audio.delta
// (24 kHz mono) of the reply in progress to the replying goroutine (a
// channel of reused buffers), which writes it into the voice session's
// voice.Playback: resample, Opus encode, paced sends on the voice
// connection. The read loop never waits for pacing; Playback counts what
// went out: that is what listeners heard.
//
// A cut (the reply's context ends: barge-in, leave; or the Playback fails)
// stops the writes at once, sends response.cancel if the response is still
// streaming, waits for its response.done, and then truncates the item
// (conversation.item.truncate) at audio_end_ms = Playback.Played (clamped
// to the audio received). Truncating only after response.done is also what
// the simulator requires (it refuses a truncate that races the cancel, real
// OpenAI accepts both orders). After a false end (the member went on, and
// the whole is answered as a new turn) the session calls TakeBack
// (voice.TakeBacker): the summary loses the turn's lines, and the next
// reply first deletes the answer's item and the turn's forwarded audio
// items (conversation.item.delete); on Gemini, which cannot delete, replies
// wait for a fresh session started from that summary.
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
// Responder adapts the Bridge to the voice session (voice.Responder), one
// per voice session (Sessions is voice.Options.NewResponder): its Bridge is
// dialled on the session's first reply and closed when the session ends.
// A provider that gives up (a close not worth retrying) or fails to start is
// not redialled before a jittered back-off doubling from GiveUpBackoff
// (backoff.go). The Gemini Live API is the other provider (gemini.go), and
// GeminiHearing makes the voice session hear through Gemini's own input
// transcription on it (hearing.go). docs/realtime.md covers both.
//
// Logs (with the session's guild_id and channel_id): realtime_reply_requested
// and realtime_reply_skipped (strategy, turn, speaker, Stage A reason and
// signal, skip_reason, latency_ms from the end of speech),
// realtime_interrupted, realtime_socket_dropped, realtime_reconnected,
// realtime_reply_lost, realtime_reply_retry. Never per packet. Metrics: see
// NewMetrics.
//
// Performance (go test -run '^$' -bench . -benchtime 2000x, 2-core EPYC at
// load average 13, same-run baselines encoding as Playback does: audio
// application, 64 kbit/s, complexity 5). A reply's output path per 20 ms
// delta (read loop hand-off, Playback: resample, encode, pacing bookkeeping,
// send) is allocation-free (TestReplyFrameAllocs):
//
//	BenchmarkTalkerFrame-2          59-63 µs/op   0 allocs/op  (baseline: bare Talker)
//	BenchmarkReplyFrame-2           74-93 µs/op   0 allocs/op
//	BenchmarkForwardFrame-2         43-55 µs/op   0 allocs/op  (48k stereo → 24k mono + append JSON)
//
// From a reply's first 100 ms audio delta to its first Opus frame at the
// Playback's sender: median 74 µs, against 60.5 µs for the same frame
// encoded inline by a bare Talker (BenchmarkFirstDeltaToFrame vs
// BenchmarkFirstDeltaDirect): the hand-off adds ~14 µs, far under the 5 ms
// budget (7 allocations per reply, none per frame). Through the bot's real
// discord/voice Conn on the voice simulator, to the first Opus packet
// written to UDP (Op 5, transport encryption, send;
// BenchmarkFirstDeltaToPacket, a new talk spurt each time): median
// 146-162 µs.
package realtime

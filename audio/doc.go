// Package audio composes the audio building blocks into the two per-stream
// pipelines the voice layer uses, without knowing anything about Discord:
//
//   - Listener, one per speaker: jitter buffer → Opus decode (loss
//     concealment, FEC) → downmix and resample to 16 or 24 kHz mono → VAD
//     and endpointing → utterance events with audio.
//   - Talker, one per outgoing stream: PCM in any format (TTS or realtime
//     24 kHz mono) → 20 ms Opus frames, encoded in the input's format when
//     libopus takes it (24 kHz mono TTS is not resampled or upmixed; a
//     Discord client decodes the packets at 48 kHz stereo). Pacing the frames onto the wire is discord/voice's job
//     (Conn.SendOpus).
//
// The building blocks are subpackages: opus (codec), resample, vad
// (detector and endpointer), jitter (reorder buffer), wav (in-memory WAV),
// pcm (formats and sample helpers). Hot paths allocate nothing per frame;
// docs/audio.md has the design notes and benchmark figures.
package audio

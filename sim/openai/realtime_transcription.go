package openaisim

import (
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"
)

// Realtime transcription sessions: /v1/realtime?intent=transcription (GA). The client
// configures the session with session.update {type: "transcription"}, appends input audio and
// commits it (or lets server VAD commit); each committed item is transcribed
// (conversation.item.input_audio_transcription.delta/completed, or .failed). There are no
// responses and no conversation items beyond the committed audio.
// https://platform.openai.com/docs/guides/realtime-transcription

// intentTranscription is the handshake's ?intent= for a transcription session.
const intentTranscription = "transcription"

// ruleContinued names the outcome of a later commit of the transcription session whose
// first commit took a queued transcript: the words of that transcript were all heard there.
const ruleContinued = "queued transcript (continued)"

// defaultTranscriptionSession is a new transcription session's configuration
// (RealtimeTranscriptionSessionCreateResponseGA).
func defaultTranscriptionSession(id string, now time.Time) map[string]any {
	return map[string]any{
		"type": "transcription", "object": "realtime.transcription_session", "id": id,
		"expires_at": now.Add(time.Hour).Unix(), "include": nil,
		"audio": map[string]any{
			"input": map[string]any{
				"format":          map[string]any{"type": "audio/pcm", "rate": 24000},
				"transcription":   nil,
				"noise_reduction": nil,
				"turn_detection": map[string]any{
					"type": "server_vad", "threshold": 0.5, "prefix_padding_ms": 300, "silence_duration_ms": 500,
				},
			},
		},
	}
}

// sessionTypeMismatch refuses a session.update whose type is not the session's kind.
func (c *rtSession) sessionTypeMismatch(upd map[string]any) (param, msg string) {
	want := "realtime"
	if c.transcriptionOnly {
		want = "transcription"
	}
	if typ, _ := upd["type"].(string); typ != want {
		return "session.type", fmt.Sprintf("Invalid value: '%v'. This is a %s session; session.type must be '%s'.", upd["type"], want, want)
	}
	return "", ""
}

// refuseInTranscription answers a client event a transcription session does not take
// (responses, conversation items); it reports whether it did.
func (c *rtSession) refuseInTranscription(ev *rtClientEvent) bool {
	if !c.transcriptionOnly {
		return false
	}
	c.sendError(ev.EventID, "invalid_request_error", "invalid_value", "type",
		fmt.Sprintf("Invalid value: '%s'. A transcription session takes 'session.update' and 'input_audio_buffer.*' events only.", ev.Type))
	return true
}

// rtTranscription is one committed item waiting for its transcript.
type rtTranscription struct {
	it     *rtItem
	offset time.Duration // where the item's audio starts in the session's committed audio
}

// queueTranscription transcribes committed items in commit order, each after the injected
// transcription latency, on the session's own goroutine (the read loop goes on taking audio).
func (c *rtSession) queueTranscription(t rtTranscription) {
	c.mu.Lock()
	if c.tq == nil {
		c.tq = make(chan rtTranscription, 64)
		q := c.tq
		c.wg.Go(func() {
			for {
				select {
				case <-c.ctx.Done():
					return
				case t := <-q:
					c.transcribe(t.it, t.offset)
				}
			}
		})
	}
	q := c.tq
	c.mu.Unlock()
	select {
	case q <- t:
	case <-c.ctx.Done():
	}
}

// transcribe answers the input transcription of a committed audio item: after the rule's
// time to first token (in transcription sessions), its deltas, then completed; or failed.
func (c *rtSession) transcribe(it *rtItem, offset time.Duration) {
	d := time.Duration(it.audioMs) * time.Millisecond
	model := c.model
	if c.transcriptionOnly {
		c.mu.Lock()
		model, _ = c.pathLocked("audio", "input", "transcription", "model").(string)
		c.mu.Unlock()
	}
	rec := &Recorded{Endpoint: EndpointRealtimeTranscription, RequestID: c.requestID, Method: "WS", Path: "/v1/realtime", Model: model, AudioDuration: d, At: c.s.now()}
	in := matchInput{endpoint: EndpointRealtimeTranscription, model: model, audio: d, hasAudio: true}
	if c.transcriptionOnly {
		// Its commits are spans of one stream of speech (ruleContinued, Request.AudioOffset).
		in.session, in.audioOffset = c.id, offset
	}
	o := c.s.resolve(&in)
	rec.Rule, rec.Fault = o.rule, o.fault
	c.s.track(rec)
	defer c.s.untrack(rec) // also when the session ends first, unrecorded
	if c.transcriptionOnly && c.s.wait(c.ctx, o.latency.TimeToFirstToken, &rec.Injected.FirstToken) != nil {
		return
	}
	if o.fault.Status != 0 {
		rec.Status = o.fault.Status
		c.s.record(rec)
		c.send(map[string]any{"type": "conversation.item.input_audio_transcription.failed", "item_id": it.id, "content_index": 0,
			"error": errorFor(o.fault.Status, o.fault.Message)})
		return
	}
	rec.Status = http.StatusOK
	text := transcriptFor(&o, d)
	if o.rule == ruleContinued {
		text = ""
	}
	rec.LastUserText = text
	c.mu.Lock()
	it.text = text
	c.mu.Unlock()
	for _, tok := range tokens(text) {
		c.send(map[string]any{"type": "conversation.item.input_audio_transcription.delta", "item_id": it.id, "content_index": 0, "delta": tok})
	}
	// Models billed by token report tokens; whisper-1, billed by the minute, reports seconds.
	usage := map[string]any{"type": "duration", "seconds": math.Ceil(d.Seconds())}
	rec.Usage = Usage{Seconds: math.Ceil(d.Seconds())}
	if !strings.Contains(model, "whisper") {
		usage, rec.Usage = transcriptionTokens(d.Seconds(), len(tokens(text)), "")
	}
	c.s.record(rec)
	c.send(map[string]any{"type": "conversation.item.input_audio_transcription.completed", "item_id": it.id, "content_index": 0,
		"transcript": text, "usage": usage})
}

// SaidRules answer every transcription of a member's speech with text, whichever way the client
// transcribes it: an upload gets text; in a transcription session the first span hears all of
// it and the later spans of the same session nothing more (Reply.NoSpeech). name names both
// rules.
func SaidRules(name, text string) []Rule {
	return []Rule{
		{Name: name, Match: Match{Endpoint: EndpointTranscriptions}, Reply: Reply{Transcript: text}},
		{Name: name, Match: Match{Endpoint: EndpointRealtimeTranscription}, Respond: func(r Request) Reply {
			if r.AudioOffset > 0 {
				return Reply{NoSpeech: true}
			}
			return Reply{Transcript: text}
		}},
	}
}

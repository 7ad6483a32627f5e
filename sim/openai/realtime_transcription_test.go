package openaisim

import (
	"net/http"
	"testing"

	"github.com/gorilla/websocket"
)

// dialTranscription opens a transcription session (?intent=transcription) and configures it
// with manual commits and model.
func dialTranscription(t *testing.T, s *Server, model string) *rtClient {
	t.Helper()
	h := http.Header{"Authorization": {"Bearer sk-sim-test"}}
	conn, res, err := websocket.DefaultDialer.Dial(s.RealtimeURL()+"?intent=transcription", h)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, res)
	}
	t.Cleanup(func() { conn.Close() })
	c := &rtClient{t: t, conn: conn}
	ev := c.next()
	if sess, _ := ev["session"].(map[string]any); ev["type"] != "session.created" || sess["type"] != "transcription" || sess["object"] != "realtime.transcription_session" {
		t.Fatalf("first event %v", ev)
	}
	c.send(map[string]any{"type": "session.update", "session": map[string]any{"type": "transcription",
		"audio": map[string]any{"input": map[string]any{"turn_detection": nil, "transcription": map[string]any{"model": model}}}}})
	if ev := c.next(); ev["type"] != "session.updated" {
		t.Fatalf("update: %v", ev)
	}
	return c
}

// commitSpans commits n spans of 300 ms one after the other and returns their transcripts.
func (c *rtClient) commitSpans(n int) []any {
	var got []any
	for range n {
		c.appendAudio(silence(300 * 1e6))
		c.send(map[string]any{"type": "input_audio_buffer.commit"})
		evs := c.until("conversation.item.input_audio_transcription.completed")
		got = append(got, evs[len(evs)-1]["transcript"])
	}
	return got
}

// TestTranscriptionSession: a transcription session transcribes each commit with the
// session's model; it refuses responses and conversation items and a realtime session
// type; and a queued transcript is the whole of its speech (later commits hear nothing new).
func TestTranscriptionSession(t *testing.T) {
	s := serve(t, WithRules(Rule{Name: "stt", Match: Match{Endpoint: EndpointRealtimeTranscription, Model: "gpt-4o-transcribe"},
		Respond: func(r Request) Reply { return Reply{Transcript: "span at " + r.AudioOffset.String()} }}))
	c := dialTranscription(t, s, "gpt-4o-transcribe")
	if got := c.commitSpans(2); got[0] != "span at 0s" || got[1] != "span at 300ms" {
		t.Errorf("transcripts %q, want each span's start", got)
	}
	for _, typ := range []string{"response.create", "conversation.item.create"} {
		c.send(map[string]any{"type": typ, "event_id": "e1"})
		ev := c.next()
		if e, _ := ev["error"].(map[string]any); ev["type"] != "error" || e["event_id"] != "e1" {
			t.Errorf("%s in a transcription session: %v", typ, ev)
		}
	}
	c.send(map[string]any{"type": "session.update", "session": map[string]any{"type": "realtime"}})
	if ev := c.next(); ev["type"] != "error" {
		t.Errorf("realtime type in a transcription session: %v", ev)
	}

	s.QueueTranscripts("hey banter what's up", "next utterance")
	q := dialTranscription(t, s, "gpt-4o-transcribe")
	got := q.commitSpans(2)
	if got[0] != "hey banter what's up" || got[1] != "" {
		t.Errorf("queued transcript over two commits of one session: %q", got)
	}
	if got := dialTranscription(t, s, "gpt-4o-transcribe").commitSpans(1); got[0] != "next utterance" {
		t.Errorf("a new session takes the next queued transcript: %q", got)
	}

	if _, res, err := websocket.DefaultDialer.Dial(s.RealtimeURL()+"?intent=translation", http.Header{"Authorization": {"Bearer sk-sim-test"}}); err == nil || res == nil || res.StatusCode != http.StatusBadRequest {
		t.Errorf("unknown intent: %v %v", err, res)
	}
}

// TestSaidRules: one utterance said, heard once whichever way it is transcribed.
func TestSaidRules(t *testing.T) {
	s := serve(t, WithRules(SaidRules("said", "banter, can you hear me?")...))
	c := dialTranscription(t, s, "gpt-4o-transcribe")
	got := c.commitSpans(2)
	if got[0] != "banter, can you hear me?" || got[1] != "" {
		t.Errorf("spans of one session heard %q", got)
	}
	if o := s.resolve(&matchInput{endpoint: EndpointTranscriptions, audio: 2 * 1e9, hasAudio: true}); o.reply.Transcript != "banter, can you hear me?" {
		t.Errorf("an upload heard %+v", o.reply)
	}
}

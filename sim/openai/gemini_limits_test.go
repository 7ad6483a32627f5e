package openaisim

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Session limits and compression on the Gemini face, on its own clock (GeminiAdvance): no test
// waits for the time it ages the sessions by.

// gmSetupWith is a text-answering setup with resumption, a system instruction, and extra (a
// JSON fragment such as a compression config, or "").
func gmSetupWith(handle, extra string) string {
	s := `{"setup":{"model":"models/gemini-3.8-live","generationConfig":{"responseModalities":["TEXT"]},` +
		`"systemInstruction":{"parts":[{"text":"You are Banter."}]},"sessionResumption":{"handle":"` + handle + `"}`
	if extra != "" {
		s += "," + extra
	}
	return s + "}}"
}

// gmTextTurn sends a text turn and reads until its turnComplete; it returns the last
// resumption handle seen and whether a goAway came meanwhile.
func gmTextTurn(t *testing.T, c *websocket.Conn, text string) (handle string, goAway bool) {
	t.Helper()
	gmSend(t, c, websocket.TextMessage, `{"clientContent":{"turns":[{"role":"user","parts":[{"text":"`+text+`"}]}],"turnComplete":true}}`)
	for {
		m, err := gmRead(t, c)
		if err != nil {
			t.Fatalf("turn %q: %v", text, err)
		}
		if _, ok := m["goAway"]; ok {
			goAway = true
		}
		if u, ok := m["sessionResumptionUpdate"].(map[string]any); ok {
			handle, _ = u["newHandle"].(string)
		}
		if sc, ok := m["serverContent"].(map[string]any); ok && sc["turnComplete"] == true {
			// the handle for the conversation with this turn follows the turnComplete
			u := gmReadUntil(t, c, "sessionResumptionUpdate")["sessionResumptionUpdate"].(map[string]any)
			handle, _ = u["newHandle"].(string)
			return handle, goAway
		}
	}
}

// gmOpen dials and sends a setup, returning the connection once setupComplete arrived.
func gmOpen(t *testing.T, s *Server, setup string) *websocket.Conn {
	t.Helper()
	c := gmDial(t, s, http.Header{"x-goog-api-key": {"gk-test"}}, "")
	gmSend(t, c, websocket.TextMessage, setup)
	gmReadUntil(t, c, "setupComplete")
	return c
}

func advance(t *testing.T, s *Server, d time.Duration) {
	t.Helper()
	if err := s.GeminiAdvance(d); err != nil {
		t.Fatal(err)
	}
}

func TestGeminiSessionLimit(t *testing.T) {
	t.Parallel()
	const deadline = "Deadline expired before operation could complete."
	const compression = `"contextWindowCompression":{"slidingWindow":{}}`
	video := `{"realtimeInput":{"video":{"mimeType":"image/jpeg","data":"/9j/"}}}`
	tests := []struct {
		name    string
		extra   string // setup fragment
		video   bool
		before  time.Duration // aged by this: still open, answers
		limit   time.Duration // then by this: the session's end (0: none)
		wantEnd bool
	}{
		{name: "audio only: 15 minutes", before: 14*time.Minute + 30*time.Second, limit: 30 * time.Second, wantEnd: true},
		{name: "video: 2 minutes", video: true, before: 90 * time.Second, limit: 30 * time.Second, wantEnd: true},
		{name: "compression: no limit", extra: compression, before: 3 * time.Hour},
		{name: "compression with video: no limit", extra: compression, video: true, before: 3 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// No connection limit here: only the session's (the next test crosses both).
			s := serve(t, WithGeminiConnectionLimit(0, 10*time.Second))
			c := gmOpen(t, s, gmSetupWith("", tt.extra))
			if tt.video {
				gmSend(t, c, websocket.TextMessage, video)
			}
			handle, _ := gmTextTurn(t, c, "remember the word teal")
			advance(t, s, tt.before)
			if h, away := gmTextTurn(t, c, "still there?"); away {
				t.Fatalf("goAway before the session's limit")
			} else {
				handle = h
			}
			if !tt.wantEnd {
				sess := s.GeminiSessions()
				if len(sess) != 1 || !strings.Contains(strings.Join(sess[0].History, "\n"), "teal") {
					t.Errorf("sessions %+v: want the conversation kept", sess)
				}
				return
			}
			advance(t, s, tt.limit-5*time.Second) // goAway 10 s before the end
			ga := gmReadUntil(t, c, "goAway")["goAway"].(map[string]any)
			if left, err := time.ParseDuration(ga["timeLeft"].(string)); err != nil || left > 5*time.Second {
				t.Errorf("goAway %v: want at most the 5 s left", ga)
			}
			advance(t, s, 5*time.Second)
			if ce := gmClosed(t, c); ce.Code != websocket.CloseInternalServerErr || ce.Text != deadline {
				t.Errorf("closed %d %q, want 1011 %q", ce.Code, ce.Text, deadline)
			}
			c2 := gmDial(t, s, http.Header{"x-goog-api-key": {"gk-test"}}, "")
			gmSend(t, c2, websocket.TextMessage, gmSetupWith(handle, tt.extra))
			if ce := gmClosed(t, c2); ce.Code != 1008 || !strings.Contains(ce.Text, "session not found") {
				t.Errorf("resuming the ended session: closed %d %q, want 1008 session not found", ce.Code, ce.Text)
			}
		})
	}
}

// TestGeminiSessionLimitSpansConnections: the session's 15 minutes count across the connections
// a resumption continues it on: after a 10-minute connection limit, the resumed connection ends
// with the session 5 minutes later.
func TestGeminiSessionLimitSpansConnections(t *testing.T) {
	t.Parallel()
	s := serve(t) // the defaults: 10-minute connections, 15-minute sessions, goAway 10 s before
	c := gmOpen(t, s, gmSetupWith("", ""))
	handle, _ := gmTextTurn(t, c, "remember the word teal")
	advance(t, s, 10*time.Minute)
	if ce := gmClosed(t, c); ce.Code != websocket.CloseNormalClosure {
		t.Fatalf("closed %d %q at the connection limit, want 1000", ce.Code, ce.Text)
	}
	c = gmOpen(t, s, gmSetupWith(handle, ""))
	if _, away := gmTextTurn(t, c, "and now?"); away {
		t.Fatal("goAway on the resumed connection before the session's end")
	}
	advance(t, s, 5*time.Minute)
	if ce := gmClosed(t, c); ce.Code != websocket.CloseInternalServerErr {
		t.Errorf("closed %d %q at the session's end, want 1011", ce.Code, ce.Text)
	}
}

// TestGeminiCompressionSlidingWindow: past triggerTokens, the oldest turns go until the context
// is within targetTokens, the window starts at a user turn, the system instruction stays.
func TestGeminiCompressionSlidingWindow(t *testing.T) {
	t.Parallel()
	s := serve(t, WithRules(Rule{Match: Match{Endpoint: EndpointGeminiResponse}, Reply: Reply{Text: "Noted, all of it."}}))
	c := gmOpen(t, s, gmSetupWith("", `"contextWindowCompression":{"triggerTokens":"40","slidingWindow":{"targetTokens":"20"}}`))
	words := []string{"teal", "amber", "violet", "olive", "crimson", "indigo"}
	for _, w := range words {
		gmTextTurn(t, c, "please remember the colour "+w)
	}
	sess := s.GeminiSessions()
	if len(sess) != 1 || sess[0].Compressions == 0 {
		t.Fatalf("sessions %+v: want compressions", sess)
	}
	h := sess[0].History
	if len(h) == 0 || !strings.HasPrefix(h[0], "user: ") || strings.Contains(strings.Join(h, "\n"), "teal") {
		t.Errorf("history %q: want a window starting at a user turn, without the first turn", h)
	}
	recs := s.RequestsFor(EndpointGeminiResponse)
	last := recs[len(recs)-1]
	if strings.Contains(last.Prompt, "teal") || !strings.Contains(last.Prompt, "You are Banter.") || !strings.Contains(last.Prompt, "indigo") {
		t.Errorf("last turn's prompt %q: want the instruction and the newest turn, not the first", last.Prompt)
	}
}

// TestGeminiAdvanceControl: the control API moves the face's clock; a bad duration is refused.
func TestGeminiAdvanceControl(t *testing.T) {
	t.Parallel()
	s := serve(t, WithGeminiConnectionLimit(0, 10*time.Second))
	c := gmOpen(t, s, gmSetupWith("", ""))
	for _, q := range []string{"", "-1m", "soon"} {
		resp, err := http.Post(strings.TrimSuffix(s.BaseURL(), "/v1")+"/_sim/gemini/advance?by="+q, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("advance by %q: %d, want 400", q, resp.StatusCode)
		}
	}
	resp, err := http.Post(strings.TrimSuffix(s.BaseURL(), "/v1")+"/_sim/gemini/advance?by=15m", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if ce := gmClosed(t, c); resp.StatusCode != http.StatusOK || ce.Code != websocket.CloseInternalServerErr {
		t.Errorf("advance 15m: %d, closed %d %q; want 200 and the session's end", resp.StatusCode, ce.Code, ce.Text)
	}
}

// TestGeminiTranscriptionOfSpeechContinued: a queued transcript taken by an activity's audio is
// also what the same speech, longer, is heard as (a client transcribed the words at a pause,
// then the whole utterance), as for uploads.
func TestGeminiTranscriptionOfSpeechContinued(t *testing.T) {
	t.Parallel()
	s := serve(t)
	c := gmOpen(t, s, `{"setup":{"model":"models/gemini-3.8-live","inputAudioTranscription":{},`+
		`"realtimeInputConfig":{"automaticActivityDetection":{"disabled":true}}}}`)
	s.QueueTranscripts("hey banter, how are you?")
	speech := tone16k(600)
	for _, pcm := range [][]byte{speech[:len(speech)/2], speech} {
		gmSend(t, c, websocket.TextMessage, `{"realtimeInput":{"activityStart":{}}}`)
		gmSend(t, c, websocket.TextMessage, gmAudioMsg(pcm))
		gmSend(t, c, websocket.TextMessage, `{"realtimeInput":{"activityEnd":{}}}`)
		sc := gmReadUntil(t, c, "serverContent")["serverContent"].(map[string]any)
		for sc["inputTranscription"] == nil {
			sc = gmReadUntil(t, c, "serverContent")["serverContent"].(map[string]any)
		}
		if got := sc["inputTranscription"].(map[string]any)["text"]; got != "hey banter, how are you?" {
			t.Fatalf("heard %v after %d bytes, want the queued transcript", got, len(pcm))
		}
		for sc["turnComplete"] != true {
			sc = gmReadUntil(t, c, "serverContent")["serverContent"].(map[string]any)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/banterbot/banter/sim/discord/simtest"
	"github.com/banterbot/banter/sim/openai/openaitest"
)

// Every end-to-end test here and in text/, voice/ and voice/realtime starts
// its simulators with simtest.Serve and openaitest.Serve, which check every
// request the bot sends (Discord REST, OpenAI HTTP, Realtime client events)
// against the official specs (package conform) and fail the test at cleanup
// on any violation.

// recordingTB is a testing.TB whose errors and cleanups a test inspects:
// the simulators' helpers report to it instead of failing the real test.
type recordingTB struct {
	testing.TB
	mu       sync.Mutex
	errors   []string
	cleanups []func()
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, strings.TrimSpace(fmt.Sprintf(format, args...)))
}

func (r *recordingTB) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

// finish runs the cleanups, last first, as the testing package does, and
// returns the errors they reported (the OpenAI simulator's first: it
// started last).
func (r *recordingTB) finish() []string {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	r.cleanups = nil
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.errors
}

// TestConformanceCatchesViolations: the check the test helpers turn on
// reports nothing for conforming requests, and fails the test for a
// Discord body, an OpenAI body and a Realtime client event that break the
// specs but that the simulators accept.
func TestConformanceCatchesViolations(t *testing.T) {
	for _, tc := range []struct {
		name     string
		violate  bool
		wantErrs []string
	}{
		{"conforming requests", false, nil},
		{"one violation of each kind", true, []string{"/v1/chat/completions", "realtime client event", "/api/v10/channels/"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recordingTB{TB: t}
			dsim := simtest.Serve(rec)
			osim := openaitest.Serve(rec)
			g := dsim.CreateGuild("g")
			ch := dsim.CreateTextChannel(g, "general")
			post := func(url, auth, body string) {
				t.Helper()
				req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, bytes.NewReader([]byte(body)))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Authorization", auth)
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
			messages := dsim.APIBaseURL() + "/api/v10/channels/" + string(ch) + "/messages"
			post(messages, "Bot "+dsim.Token(), `{"content":"fine"}`)
			post(osim.BaseURL()+"/chat/completions", "Bearer sk-test", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`)
			ws, _, err := websocket.DefaultDialer.Dial(osim.RealtimeURL()+"?model=gpt-realtime", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			event := `{"type":"input_audio_buffer.clear"}`
			if tc.violate {
				// An embed title over Discord's 256-character limit; a chat
				// message whose content is a number; a realtime event with
				// a field its schema does not have the type of.
				post(messages, "Bot "+dsim.Token(), `{"content":"x","embeds":[{"title":"`+strings.Repeat("t", 300)+`"}]}`)
				post(osim.BaseURL()+"/chat/completions", "Bearer sk-test", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":7}]}`)
				event = `{"type":"input_audio_buffer.clear","event_id":7}`
			}
			if err := ws.WriteMessage(websocket.TextMessage, []byte(event)); err != nil {
				t.Fatal(err)
			}
			// The event is checked before it is answered: read its answer.
			if _, _, err := ws.ReadMessage(); err != nil { // session.created
				t.Fatal(err)
			}
			if _, _, err := ws.ReadMessage(); err != nil { // input_audio_buffer.cleared
				t.Fatal(err)
			}
			errs := rec.finish()
			if len(errs) != len(tc.wantErrs) {
				t.Fatalf("reported %d violations, want %d: %q", len(errs), len(tc.wantErrs), errs)
			}
			for i, want := range tc.wantErrs {
				if !strings.Contains(errs[i], want) {
					t.Errorf("violation %d: %q lacks %q", i, errs[i], want)
				}
			}
		})
	}
}

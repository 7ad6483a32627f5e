package realtime

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

type rtEnv struct {
	sim     *openaisim.Server
	metrics *Metrics
	cfg     Config
}

func newRTEnv(t *testing.T, rules ...openaisim.Rule) *rtEnv {
	t.Helper()
	return newRTEnvWith(t, nil, rules...)
}

// newRTEnvWith is newRTEnv with more simulator options.
func newRTEnvWith(t *testing.T, opts []openaisim.Option, rules ...openaisim.Rule) *rtEnv {
	t.Helper()
	sim := openaitest.Serve(t, append(opts, openaisim.WithRules(rules...), openaisim.WithAPIKey("sk-rt"))...)
	m := NewMetrics(prometheus.NewRegistry())
	return &rtEnv{sim: sim, metrics: m,
		cfg: Config{URL: sim.BaseURL(), APIKey: "sk-rt", Model: "gpt-realtime", Metrics: m}}
}

func (e *rtEnv) dial(t *testing.T) *Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dial(ctx, e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	var ev Event
	if err := c.ReadEvent(ctx, &ev); err != nil || ev.Type != EventSessionCreated || ev.SessionID == "" {
		t.Fatalf("first event %+v, %v", ev, err)
	}
	return c
}

// collected is what a response produced.
type collected struct {
	responseID, itemID string
	audio              []byte
	transcript         strings.Builder
	done               Event
	types              []EventType
}

// readResponse reads events until response.done. onAudio, if set, is
// called after each audio delta and may send commands.
func readResponse(t *testing.T, c *Conn, onAudio func(*collected)) *collected {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out collected
	var ev Event
	for {
		if err := c.ReadEvent(ctx, &ev); err != nil {
			t.Fatalf("read: %v (after %v)", err, out.types)
		}
		out.types = append(out.types, ev.Type)
		switch ev.Type {
		case EventResponseCreated:
			out.responseID = ev.ResponseID
		case EventOutputAudioDelta:
			out.itemID = ev.ItemID
			out.audio = append(out.audio, ev.Audio...)
			if onAudio != nil {
				onAudio(&out)
			}
		case EventOutputAudioTranscriptDelta:
			out.transcript.WriteString(ev.Delta)
		case EventError:
			t.Logf("server error event: %+v", ev.Error)
		case EventResponseDone:
			out.done = *ev.Clone()
			return &out
		}
	}
}

func TestRealtimeRoundTrip(t *testing.T) {
	env := newRTEnv(t, openaisim.Rule{Name: "weather",
		Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeResponse, InputPattern: "weather"},
		Reply: openaisim.Reply{Text: "Sunny all day."}})
	c := env.dial(t)
	ctx := context.Background()

	sess := Session{Instructions: "You are banter. Be brief.", Voice: "marin"}
	if err := c.UpdateSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	var ev Event
	if err := c.ReadEvent(ctx, &ev); err != nil || ev.Type != EventSessionUpdated {
		t.Fatalf("after session.update: %+v %v", ev, err)
	}
	// The server saw turn detection off, our voice, pcm 24 kHz.
	var upd struct {
		Session struct {
			Instructions string `json:"instructions"`
			Audio        struct {
				Input struct {
					TurnDetection json.RawMessage `json:"turn_detection"`
				} `json:"input"`
				Output struct {
					Voice string `json:"voice"`
				} `json:"output"`
			} `json:"audio"`
		} `json:"session"`
	}
	raw := firstEvent(t, env.sim, "session.update")
	if err := json.Unmarshal(raw, &upd); err != nil {
		t.Fatal(err)
	}
	if string(upd.Session.Audio.Input.TurnDetection) != "null" || upd.Session.Audio.Output.Voice != "marin" ||
		upd.Session.Instructions != sess.Instructions {
		t.Errorf("session.update as received: %s", raw)
	}

	// Audio in: 500 ms appended in 20 ms frames and committed.
	frame := pcmRamp(960)
	for range 25 {
		if err := c.AppendAudio(ctx, frame); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Send(ctx, InputAudioCommitCommand{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, EventInputAudioCommitted)

	// A text turn, then a response.
	if err := c.Send(ctx, ItemCreateCommand{Role: "user", Text: "what's the weather like?"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Send(ctx, ResponseCreateCommand{}); err != nil {
		t.Fatal(err)
	}
	got := readResponse(t, c, nil)
	if got.transcript.String() != "Sunny all day." {
		t.Errorf("transcript %q", got.transcript.String())
	}
	if len(got.audio) < 4800 || len(got.audio)%2 != 0 {
		t.Errorf("%d bytes of output audio", len(got.audio))
	}
	if got.done.Response.Status != "completed" || got.done.ResponseID != got.responseID || got.responseID == "" {
		t.Errorf("done %+v (created %q)", got.done.Response, got.responseID)
	}
	rec := lastOf(t, env.sim.RequestsFor(openaisim.EndpointRealtimeResponse))
	if rec.Rule != "weather" || rec.Voice != "marin" || rec.Instructions != sess.Instructions {
		t.Errorf("recorded response rule=%q voice=%q instr=%q", rec.Rule, rec.Voice, rec.Instructions)
	}
	if v := counterValue(t, env.metrics.audioSent); v != 25*960 {
		t.Errorf("audio sent bytes = %v", v)
	}
	if v := counterValue(t, env.metrics.audioReceived); v != float64(len(got.audio)) {
		t.Errorf("audio received bytes = %v, want %d", v, len(got.audio))
	}
	if v := counterValue(t, env.metrics.events[EventResponseDone]); v != 1 {
		t.Errorf("response.done count = %v", v)
	}
}

// TestRealtimeBargeIn cancels a response mid-audio and truncates the item
// to what was "played".
func TestRealtimeBargeIn(t *testing.T) {
	env := newRTEnv(t, openaisim.Rule{Name: "long",
		Match:   openaisim.Match{Endpoint: openaisim.EndpointRealtimeResponse},
		Reply:   openaisim.Reply{Text: "This is a long answer that goes on and on about many things for quite a while."},
		Latency: openaisim.Latency{PerToken: 20 * time.Millisecond}})
	c := env.dial(t)
	ctx := context.Background()
	if err := c.Send(ctx, ItemCreateCommand{Role: "user", Text: "tell me everything"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Send(ctx, ResponseCreateCommand{}); err != nil {
		t.Fatal(err)
	}
	var playedMs int
	interrupted := false
	got := readResponse(t, c, func(col *collected) {
		if interrupted || len(col.audio) < 2400 {
			return
		}
		interrupted = true
		playedMs = len(col.audio) / (SampleRate * 2 / 1000)
		if err := c.Send(ctx, ResponseCancelCommand{ResponseID: col.responseID}); err != nil {
			t.Fatal(err)
		}
	})
	if !interrupted {
		t.Fatal("response ended before enough audio to interrupt")
	}
	if got.done.Response.Status != "cancelled" {
		t.Errorf("status %q, want cancelled", got.done.Response.Status)
	}
	// Truncate once the cancel is confirmed: the simulator only learns how
	// much audio an in-progress item has when the response ends.
	if err := c.Send(ctx, ItemTruncateCommand{ItemID: got.itemID, AudioEnd: time.Duration(playedMs) * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	ev := waitFor(t, c, EventItemTruncated)
	if ev.AudioEndMs != playedMs || ev.ItemID != got.itemID {
		t.Errorf("truncated %s at %d ms, want %s at %d", ev.ItemID, ev.AudioEndMs, got.itemID, playedMs)
	}
	tr := env.sim.Truncations()
	if len(tr) != 1 || tr[0].AudioEndMs != playedMs || tr[0].ItemID != got.itemID {
		t.Errorf("simulator truncations %+v", tr)
	}
}

func TestRealtimeMalformedEventsSkipped(t *testing.T) {
	env := newRTEnv(t, openaisim.Rule{Name: "bad",
		Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeResponse},
		Reply: openaisim.Reply{Text: "Still here."}, Fault: openaisim.Fault{MalformedJSON: true}})
	c := env.dial(t)
	ctx := context.Background()
	_ = c.Send(ctx, ItemCreateCommand{Role: "user", Text: "hi"})
	_ = c.Send(ctx, ResponseCreateCommand{})
	got := readResponse(t, c, nil)
	if got.done.Response.Status != "completed" {
		t.Errorf("status %q", got.done.Response.Status)
	}
	if v := counterValue(t, env.metrics.malformed); v != 1 {
		t.Errorf("malformed events counted %v, want 1", v)
	}
}

// TestRealtimeDropAndRedial shows the recovery the owner performs: the read
// fails when the socket drops; a new Conn with the same Session carries on.
func TestRealtimeDropAndRedial(t *testing.T) {
	env := newRTEnv(t,
		openaisim.Rule{Name: "drop", Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeResponse},
			Reply: openaisim.Reply{Text: "I will be cut off mid sentence here."}, Fault: openaisim.Fault{DropAfterEvents: 4}, Times: 1},
		openaisim.Rule{Name: "ok", Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeResponse},
			Reply: openaisim.Reply{Text: "Back again."}})
	sess := Session{Instructions: "Persona: banter.", Voice: "alloy"}
	ctx := context.Background()
	c := env.dial(t)
	_ = c.UpdateSession(ctx, sess)
	_ = c.Send(ctx, ItemCreateCommand{Role: "user", Text: "hi"})
	_ = c.Send(ctx, ResponseCreateCommand{})
	var ev Event
	var err error
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for err == nil {
		err = c.ReadEvent(rctx, &ev)
	}
	if rctx.Err() != nil {
		t.Fatalf("socket never dropped: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Logf("close after drop: %v", err) // the peer is gone; best effort
	}
	if err2 := c.Close(); err2 != c.Close() {
		t.Error("Close is not idempotent")
	}

	c2 := env.dial(t)
	if err := c2.UpdateSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	_ = c2.Send(ctx, ItemCreateCommand{Role: "user", Text: "hi again"})
	_ = c2.Send(ctx, ResponseCreateCommand{})
	got := readResponse(t, c2, nil)
	if got.transcript.String() != "Back again." {
		t.Errorf("after redial: %q", got.transcript.String())
	}
	if rec := lastOf(t, env.sim.RequestsFor(openaisim.EndpointRealtimeResponse)); rec.Instructions != sess.Instructions {
		t.Errorf("instructions not restored: %q", rec.Instructions)
	}
}

func TestRealtimeHandshakeRefused(t *testing.T) {
	env := newRTEnv(t, openaisim.Rule{Name: "busy", Match: openaisim.Match{Endpoint: openaisim.EndpointRealtime},
		Fault: openaisim.Fault{Status: 429}, Times: 1})
	ctx := context.Background()
	_, err := Dial(ctx, env.cfg)
	var he *HandshakeError
	if !errors.As(err, &he) || he.Status != 429 || !he.Retryable {
		t.Fatalf("err = %v, want retryable 429 HandshakeError", err)
	}
	bad := env.cfg
	bad.APIKey = "sk-wrong"
	_, err = Dial(ctx, bad)
	if !errors.As(err, &he) || he.Status != 401 || he.Retryable {
		t.Fatalf("err = %v, want 401 HandshakeError", err)
	}
	if strings.Contains(err.Error(), "sk-wrong") {
		t.Error("error leaks the key")
	}
	if v := counterValue(t, env.metrics.connects.WithLabelValues("refused")); v != 2 {
		t.Errorf("refused connects = %v", v)
	}
}

func TestRealtimeReadCancel(t *testing.T) {
	env := newRTEnv(t)
	c := env.dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var ev Event
	err := c.ReadEvent(ctx, &ev) // nothing is coming
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded", err)
	}
}

func TestRealtimeURL(t *testing.T) {
	tests := []struct{ base, want string }{
		{"", "wss://api.openai.com/v1/realtime?model=m"},
		{"https://api.openai.com/v1", "wss://api.openai.com/v1/realtime?model=m"},
		{"http://127.0.0.1:8080/v1/", "ws://127.0.0.1:8080/v1/realtime?model=m"},
		{"wss://example.com/v1/realtime", "wss://example.com/v1/realtime?model=m"},
	}
	for _, tt := range tests {
		got, err := realtimeURL(tt.base, "m", "")
		if err != nil || got != tt.want {
			t.Errorf("realtimeURL(%q) = %q, %v; want %q", tt.base, got, err, tt.want)
		}
	}
	for _, bad := range []string{"ftp://x/v1", "nohost"} {
		if _, err := realtimeURL(bad, "m", ""); err == nil {
			t.Errorf("realtimeURL(%q) accepted", bad)
		}
	}
	if _, err := realtimeURL("https://x/v1", "", ""); err == nil {
		t.Error("empty model accepted")
	}
}

func waitFor(t *testing.T, c *Conn, typ EventType) Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var ev Event
	for {
		if err := c.ReadEvent(ctx, &ev); err != nil {
			t.Fatalf("waiting for %v: %v", typ, err)
		}
		if ev.Type == typ {
			return *ev.Clone()
		}
	}
}

func firstEvent(t *testing.T, sim *openaisim.Server, typ string) json.RawMessage {
	t.Helper()
	for _, e := range sim.RealtimeEvents() {
		if e.Type == typ {
			return e.Raw
		}
	}
	t.Fatalf("no %s received", typ)
	return nil
}

func lastOf[T any](t *testing.T, s []T) T {
	t.Helper()
	if len(s) == 0 {
		t.Fatal("nothing recorded")
	}
	return s[len(s)-1]
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func TestOpen(t *testing.T) {
	sess := Session{Instructions: "Persona: banter.", Voice: "marin"}
	tests := []struct {
		name     string
		rule     openaisim.Rule
		sess     Session
		key      string
		attempts int
		dials    int
		wantErr  func(error) bool
		offSpec  bool // the request is off the spec on purpose: no conformance check
	}{
		{name: "ready at once", sess: sess, attempts: 3, dials: 1},
		{name: "handshake 503 twice then ok",
			rule: openaisim.Rule{Name: "busy", Match: openaisim.Match{Endpoint: openaisim.EndpointRealtime},
				Fault: openaisim.Fault{Status: 503, RetryAfter: time.Millisecond}, Times: 2},
			sess: sess, attempts: 5, dials: 3},
		{name: "attempts exhausted",
			rule: openaisim.Rule{Name: "busy", Match: openaisim.Match{Endpoint: openaisim.EndpointRealtime},
				Fault: openaisim.Fault{Status: 429}},
			sess: sess, attempts: 2, dials: 2,
			wantErr: func(err error) bool { var he *HandshakeError; return errors.As(err, &he) && he.Status == 429 }},
		{name: "bad key not retried", key: "sk-wrong", sess: sess, attempts: 5, dials: -1, // refused before any endpoint is recorded
			wantErr: func(err error) bool { var he *HandshakeError; return errors.As(err, &he) && he.Status == 401 }},
		{name: "invalid session not retried", sess: Session{TurnDetection: &TurnDetection{Type: "psychic_vad"}}, attempts: 5, dials: 1, offSpec: true,
			wantErr: func(err error) bool { var se *SessionError; return errors.As(err, &se) && se.Info.Message != "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rules []openaisim.Rule
			if tt.rule.Name != "" {
				rules = append(rules, tt.rule)
			}
			var opts []openaisim.Option
			if tt.offSpec { // the session is off OpenAI's spec on purpose
				opts = append(opts, openaisim.WithoutConformance())
			}
			env := newRTEnvWith(t, opts, rules...)
			cfg := env.cfg
			if tt.key != "" {
				cfg.APIKey = tt.key
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := Open(ctx, cfg, tt.sess, tt.attempts)
			if tt.dials < 0 {
				// The simulator records an unauthorized request without an endpoint.
				refused := 0
				for _, r := range env.sim.Requests() {
					if r.Status == http.StatusUnauthorized {
						refused++
					}
				}
				if refused != 1 {
					t.Errorf("%d refused handshakes, want 1: a non-retryable refusal was retried", refused)
				}
			}
			if got := len(env.sim.RequestsFor(openaisim.EndpointRealtime)); tt.dials >= 0 && got != tt.dials {
				t.Errorf("%d dials, want %d", got, tt.dials)
			}
			if tt.wantErr != nil {
				if err == nil || !tt.wantErr(err) {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var upd struct {
				Session struct {
					Instructions string `json:"instructions"`
				} `json:"session"`
			}
			if err := json.Unmarshal(firstEvent(t, env.sim, "session.update"), &upd); err != nil || upd.Session.Instructions != sess.Instructions {
				t.Errorf("session.update instructions %q, %v", upd.Session.Instructions, err)
			}
			// The session is usable.
			_ = c.Send(ctx, ItemCreateCommand{Role: "user", Text: "hello"})
			_ = c.Send(ctx, ResponseCreateCommand{})
			if got := readResponse(t, c, nil); got.done.Response.Status != "completed" {
				t.Errorf("response status %q", got.done.Response.Status)
			}
		})
	}
}

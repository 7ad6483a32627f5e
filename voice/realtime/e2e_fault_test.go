package realtime

import (
	"errors"
	"strings"
	"testing"
	"time"

	openaisim "github.com/banterbot/banter/sim/openai"
)

// sessionInstructions returns the instructions of every session.update
// sent, in order.
func (h *harness) sessionInstructions() []string {
	var out []string
	for _, e := range h.clientEvents("session.update") {
		var ev struct {
			Session struct {
				Instructions string `json:"instructions"`
			} `json:"session"`
		}
		if err := jsonUnmarshal(e.Raw, &ev); err != nil {
			h.t.Fatal(err)
		}
		out = append(out, ev.Session.Instructions)
	}
	return out
}

// sessions counts the distinct realtime sessions that received events.
func (h *harness) sessions() int {
	seen := map[string]bool{}
	for _, e := range h.oa.RealtimeEvents() {
		seen[e.Session] = true
	}
	return len(seen)
}

// TestSocketDropRecovery: the realtime socket drops in the middle of a
// response; the Bridge reconnects with back-off, restores the instructions
// with a summary of the conversation, and the next turn is answered.
func TestSocketDropRecovery(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{strategy: StrategyNative, rules: []openaisim.Rule{
		{Name: "drop", Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeResponse},
			Fault: openaisim.Fault{DropAfterEvents: 6}, Times: 1},
	}})
	if d := h.say("hey-banter-weather.wav", "hey banter, what's the weather like today?"); !d.Allowed() {
		t.Fatalf("Stage A denied: %v", d)
	}
	// The reply was lost with the socket (some of it played: not asked again).
	if o := h.reply(); !errors.Is(o.err, errReplyLost) {
		t.Fatalf("Respond = %+v, %v; want the reply lost", o.res, o.err)
	}
	deadline := time.Now().Add(guard)
	for h.metric("banter_voice_realtime_reconnects_total") < 1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := h.metric("banter_voice_realtime_reconnects_total"); n != 1 {
		t.Fatalf("reconnects = %v, want 1", n)
	}
	if n := h.metric("banter_voice_realtime_responses_failed_total"); n != 1 {
		t.Errorf("failed responses = %v, want 1 (lost with the socket)", n)
	}
	if ev := h.logs.Events("realtime_reply_lost"); len(ev) != 1 {
		t.Errorf("realtime_reply_lost logs: %v", ev)
	}
	// The next turn goes to the new session and is answered.
	if d := h.say("hey-banter-weather.wav", "hey banter, are you back?"); !d.Allowed() {
		t.Fatalf("Stage A denied: %v", d)
	}
	if o := h.reply(); o.err != nil || o.res.Spoken == "" {
		t.Fatalf("Respond = %+v, %v", o.res, o.err)
	}
	if n := h.sessions(); n != 2 {
		t.Errorf("%d realtime sessions, want 2", n)
	}
	instr := h.sessionInstructions()
	if len(instr) != 2 {
		t.Fatalf("%d session.update, want 2", len(instr))
	}
	if !strings.HasPrefix(instr[1], "You are banter") || !strings.Contains(instr[1], "Alice: hey banter, what's the weather like today?") {
		t.Errorf("restored instructions lack the persona or the summary:\n%s", instr[1])
	}
	if n := len(h.oa.RequestsFor(openaisim.EndpointRealtimeResponse)); n != 2 {
		t.Errorf("%d realtime responses, want 2", n)
	}
}

// TestMalformedServerEventsIgnored: a malformed server event in the middle
// of a response is counted and skipped; the answer still plays in full and
// the socket stays up.
func TestMalformedServerEventsIgnored(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{strategy: StrategyNative, rules: []openaisim.Rule{
		{Name: "malformed", Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeResponse},
			Fault: openaisim.Fault{MalformedJSON: true}, Times: 1},
	}})
	if d := h.say("hey-banter-weather.wav", "hey banter, what's the weather like today?"); !d.Allowed() {
		t.Fatalf("Stage A denied: %v", d)
	}
	if o := h.reply(); o.err != nil || o.res.Spoken == "" {
		t.Fatalf("Respond = %+v, %v", o.res, o.err)
	}
	if n := h.metric("banter_realtime_malformed_events_total"); n != 1 {
		t.Errorf("malformed events counted = %v, want 1", n)
	}
	rec := h.oa.RequestsFor(openaisim.EndpointRealtimeResponse)
	if len(rec) != 1 || rec[0].Rule != "malformed" {
		t.Fatalf("realtime responses: %+v", rec)
	}
	if got, want := int(h.sent.frames.Load()), rec[0].AudioBytes/frameBytes; got < want-1 {
		t.Errorf("the playback sent %d of %d frames", got, want)
	}
	if n := h.metric("banter_voice_realtime_reconnects_total"); n != 0 {
		t.Errorf("reconnects = %v after a malformed event", n)
	}
	if n := h.sessions(); n != 1 {
		t.Errorf("%d sessions", n)
	}
}

// TestRolloverKeepsConversation: once SessionMax has passed, the Bridge
// moves to a fresh session (no response in progress is cut) whose
// instructions carry a summary of the turns so far, and answers there.
func TestRolloverKeepsConversation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{strategy: StrategyNative, bridge: func(c *Config) { c.SessionMax = 6 * time.Second }})
	if d := h.say("hey-banter-weather.wav", "hey banter, what's the weather like today?"); !d.Allowed() {
		t.Fatalf("Stage A denied: %v", d)
	}
	if o := h.reply(); o.err != nil || o.res.Spoken == "" {
		t.Fatalf("Respond = %+v, %v", o.res, o.err)
	}
	// The next rollover after the answer (every 6 s; under load one may
	// already have happened before the turn) carries the summary. Its
	// realtime_reconnected log comes once the new session is set up.
	rollovers := func() int {
		n := 0
		for _, e := range h.logs.Events("realtime_reconnected") {
			if e["cause"] == "rollover" {
				n++
			}
		}
		return n
	}
	before := rollovers()
	for deadline := time.Now().Add(guard); rollovers() == before; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no rollover: %d sessions", h.sessions())
		}
	}
	instr := h.sessionInstructions()
	if last := instr[len(instr)-1]; !strings.Contains(last, "Alice: hey banter, what's the weather like today?") || !strings.Contains(last, "- You: ") {
		t.Errorf("rollover instructions lack the summary:\n%s", last)
	}
	if n := h.metric("banter_voice_realtime_reconnects_total"); n < 1 {
		t.Errorf("reconnects = %v", n)
	}
	if d := h.say("hey-banter-weather.wav", "hey banter, still there?"); !d.Allowed() {
		t.Fatalf("Stage A denied: %v", d)
	}
	if o := h.reply(); o.err != nil || o.res.Spoken == "" {
		t.Fatalf("Respond = %+v, %v", o.res, o.err)
	}
	if ev := h.logs.Events("realtime_reply_lost"); len(ev) != 0 {
		t.Errorf("a rollover lost a reply: %v", ev)
	}
}

// TestServerTurnDetectionStillGated: with serverTurnDetection on, the
// session asks for server VAD without automatic responses, so the only
// response is the one requested for the admitted turn.
func TestServerTurnDetectionStillGated(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{strategy: StrategyNative, bridge: func(c *Config) { c.ServerTurnDetection = true }})
	if d := h.say("hey-banter-weather.wav", "hey banter, what's the weather like today?"); !d.Allowed() {
		t.Fatalf("Stage A denied: %v", d)
	}
	if o := h.reply(); o.err != nil || o.res.Spoken == "" {
		t.Fatalf("Respond = %+v, %v", o.res, o.err)
	}
	upd := h.clientEvents("session.update")
	if len(upd) != 1 || !strings.Contains(string(upd[0].Raw), `"turn_detection":{"type":"server_vad"`) ||
		!strings.Contains(string(upd[0].Raw), `"create_response":false`) {
		t.Fatalf("session.update: %s", upd[0].Raw)
	}
	if n := len(h.oa.RequestsFor(openaisim.EndpointRealtimeResponse)); n != 1 {
		t.Errorf("%d realtime responses, want only the requested one", n)
	}
}

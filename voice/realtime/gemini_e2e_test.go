package realtime

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	openaisim "github.com/banterbot/banter/sim/openai"
)

// The Gemini provider end to end: the bot's voice connection, hearing, STT and Stage A as for
// OpenAI, the Responder on the simulator's Gemini Live face.

// geminiMessages returns the Gemini client messages of the given type.
func (h *harness) geminiMessages(typ string) []openaisim.RealtimeEvent {
	var out []openaisim.RealtimeEvent
	for _, e := range h.oa.GeminiMessages() {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// TestGeminiNativeAnswered: an admitted turn goes to Gemini as one activity of 16 kHz audio;
// the model's 24 kHz answer is played in full and heard.
func TestGeminiNativeAnswered(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{strategy: StrategyNative, gemini: true})
	if d := h.say("hey-banter-weather.wav", "hey banter, what's the weather like today?"); !d.Allowed() {
		t.Fatalf("Stage A denied an addressed turn: %v", d)
	}
	o := h.reply()
	if o.err != nil || o.res.Skipped || o.res.Spoken == "" || o.res.Spoken != o.res.Text {
		t.Fatalf("Respond = %+v, %v", o.res, o.err)
	}
	audio := h.geminiMessages("realtimeInput.audio")
	if len(h.geminiMessages("realtimeInput.activityStart")) != 1 || len(h.geminiMessages("realtimeInput.activityEnd")) != 1 || len(audio) == 0 ||
		!strings.Contains(string(audio[0].Raw), `audio/pcm;rate=16000`) {
		t.Fatalf("client messages: %d audio, want one activity of 16 kHz audio", len(audio))
	}
	rec := h.oa.RequestsFor(openaisim.EndpointGeminiResponse)
	if len(rec) != 1 || rec[0].AudioDuration < time.Second {
		t.Fatalf("Gemini turns %+v: want one answering >= 1 s of forwarded audio", rec)
	}
	wantFrames := rec[0].AudioBytes / frameBytes
	if got := int(h.sent.frames.Load()); got < wantFrames-1 || got > wantFrames+1 {
		t.Errorf("the playback sent %d frames, the model sent %d frames of audio", got, wantFrames)
	}
	h.waitHeard(wantFrames - 2)
	if ev := h.logs.Events("realtime_reply_requested"); len(ev) != 1 || ev[0]["provider"] != "gemini" {
		t.Errorf("realtime_reply_requested logs: %v", ev)
	}
	if ev := h.logs.Events("realtime_transcripts"); len(ev) != 1 || ev[0]["said"] != o.res.Text || ev[0]["heard"] == "" {
		t.Errorf("realtime_transcripts logs: %v, want what Gemini heard and said", ev)
	}
	mfs, err := h.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "banter_voice_realtime_frames_sent_total" {
			continue
		}
		if l := mf.GetMetric()[0].GetLabel(); len(l) != 1 || l[0].GetName() != "provider" || l[0].GetValue() != "gemini" {
			t.Errorf("frames_sent_total labels %v, want provider=gemini", l)
		}
	}
}

// TestGeminiBrainSpeaksText: the brain's text is what Gemini is told to voice, as a text
// turn; no member audio reaches Gemini.
func TestGeminiBrainSpeaksText(t *testing.T) {
	t.Parallel()
	const text = "It is sunny and warm today."
	h := newHarness(t, harnessOptions{strategy: StrategyBrain, gemini: true, rules: []openaisim.Rule{
		{Match: openaisim.Match{Endpoint: openaisim.EndpointResponses}, Reply: openaisim.Reply{Text: text}},
		{Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiResponse, InputPattern: "Read the text below aloud"}, Reply: openaisim.Reply{Text: text}},
	}})
	h.say("hey-banter-weather.wav", "hey banter, what's the weather like today?")
	o := h.reply()
	if o.err != nil || o.res.Spoken != text {
		t.Fatalf("Respond = %+v, %v", o.res, o.err)
	}
	cc := h.geminiMessages("clientContent")
	if len(cc) != 1 || !strings.Contains(string(cc[0].Raw), text) || len(h.geminiMessages("realtimeInput.audio")) != 0 {
		t.Fatalf("client messages %v: want one text turn with the brain's text and no audio", h.oa.GeminiMessages())
	}
}

// TestGeminiConversationOutlivesTwoConnections: the server ends the connection twice (goAway);
// each time the bridge resumes with its handle, and the third connection's answer refers to
// what was said on the first.
func TestGeminiConversationOutlivesTwoConnections(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{strategy: StrategyNative, gemini: true, rules: []openaisim.Rule{
		{Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiResponse}, Reply: openaisim.Reply{Text: "Oslo has rain today."}, Times: 1},
		{Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiResponse, PromptPattern: `(?s)model: Oslo has rain today\..*model: Noted\..*user:`},
			Reply: openaisim.Reply{Text: "Earlier I said Oslo has rain."}},
		{Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiResponse}, Reply: openaisim.Reply{Text: "Noted."}},
	}})
	answers := []string{"Oslo has rain today.", "Noted.", "Earlier I said Oslo has rain."}
	for i, want := range answers {
		h.say("hey-banter-weather.wav", "hey banter, what's the weather like today?")
		if o := h.reply(); o.err != nil || o.res.Spoken != want {
			t.Fatalf("turn %d: Respond = %+v, %v; want %q", i+1, o.res, o.err, want)
		}
		if i == len(answers)-1 {
			break
		}
		if n := h.oa.GeminiGoAway(10 * time.Second); n != 1 {
			t.Fatalf("goAway told %d connections", n)
		}
		waitLogged(t, h, "realtime_reconnected", i+1)
	}
	if got := len(h.oa.RequestsFor(openaisim.EndpointGeminiLive)); got != 3 {
		t.Errorf("%d connections, want 3", got)
	}
	for _, ev := range h.logs.Events("realtime_reconnected") {
		if ev["cause"] != "go_away" || ev["resumed"] != true {
			t.Errorf("reconnect %v: want a resumption after goAway", ev)
		}
	}
}

// waitLogged waits until the harness has logged event n times.
func waitLogged(t *testing.T, h *harness, event string, n int) {
	t.Helper()
	for deadline := time.Now().Add(guard); len(h.logs.Events(event)) < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s logged %d times, want %d", event, len(h.logs.Events(event)), n)
		}
	}
}

// TestGeminiBargeInInterrupts: a barge-in mid-answer stops the frames at once and interrupts
// the model with an empty activity; the model's turn ends interrupted and the next turn is
// answered on the same connection, the history holding only what was played.
func TestGeminiBargeInInterrupts(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("This is a rather long answer that keeps going for a while. ", 4)
	h := newHarness(t, harnessOptions{strategy: StrategyNative, gemini: true, rules: []openaisim.Rule{
		{Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiResponse}, Reply: openaisim.Reply{Text: long},
			Latency: openaisim.Latency{PerToken: 60 * time.Millisecond}, Times: 1},
		{Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiResponse}, Reply: openaisim.Reply{Text: "Sorry, go on."}},
	}})
	h.say("hey-banter-weather.wav", "hey banter, tell me a long story")
	h.waitHeard(25)
	h.interrupt()
	o := h.reply()
	if !errors.Is(o.err, context.Canceled) || o.res.Spoken == "" || len(o.res.Spoken) >= len(strings.TrimSpace(long)) {
		t.Fatalf("Respond = %+v, %v; want a cut part of the answer and context.Canceled", o.res, o.err)
	}
	if sent := h.sent.frames.Load(); o.played != time.Duration(sent)*20*time.Millisecond {
		t.Errorf("played %v, %d frames sent", o.played, sent)
	}
	if n := len(h.geminiMessages("realtimeInput.activityStart")); n != 2 {
		t.Errorf("%d activityStart messages, want the turn's and the interruption's", n)
	}
	if ev := h.logs.Events("realtime_interrupted"); len(ev) != 1 || ev[0]["cancelled"] != true || ev[0]["provider"] != "gemini" {
		t.Errorf("realtime_interrupted logs: %v", ev)
	}
	h.say("hey-banter-weather.wav", "hey banter, what's the weather like today?")
	if o := h.reply(); o.err != nil || o.res.Spoken != "Sorry, go on." {
		t.Fatalf("after the barge-in: Respond = %+v, %v", o.res, o.err)
	}
	if n := len(h.oa.RequestsFor(openaisim.EndpointGeminiLive)); n != 1 {
		t.Errorf("%d connections, want the same one throughout", n)
	}
}

// TestGeminiServerTurnDetectionAndToolCall: with the server's activity detection the turn's
// audio is followed by audioStreamEnd (no activity marks); a call to a tool banter does not
// offer is answered at once with an error, so the connection survives and the model answers.
func TestGeminiServerTurnDetectionAndToolCall(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{strategy: StrategyNative, gemini: true, rules: []openaisim.Rule{
		{Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiResponse}, Times: 1,
			Reply: openaisim.Reply{ToolCalls: []openaisim.ToolCall{{Name: "weather", Arguments: `{"city":"Oslo"}`, CallID: "w1"}}}},
		{Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiResponse, PromptPattern: `function_response w1: .*no tool named weather`},
			Reply: openaisim.Reply{Text: "I cannot look that up."}},
	}, bridge: func(c *Config) { c.Gemini.ManualActivity = false }})
	h.say("hey-banter-weather.wav", "hey banter, what's the weather like today?")
	if o := h.reply(); o.err != nil || o.res.Spoken != "I cannot look that up." {
		t.Fatalf("Respond = %+v, %v", o.res, o.err)
	}
	if n := len(h.geminiMessages("realtimeInput.activityStart")) + len(h.geminiMessages("realtimeInput.activityEnd")); n != 0 {
		t.Errorf("%d activity marks sent under the server's detection", n)
	}
	if len(h.geminiMessages("realtimeInput.audioStreamEnd")) != 1 || len(h.geminiMessages("toolResponse")) != 1 {
		t.Errorf("client messages: want one audioStreamEnd and one toolResponse, got %v", h.oa.GeminiMessages())
	}
}

// TestGeminiCloses: how the bridge answers a server's close mid-turn that it retries. The reply
// in progress is lost; after 1011 the bridge resumes the conversation with its handle.
func TestGeminiCloses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		code    int
		logged  string
		resumed bool
	}{
		{code: 1011, logged: "realtime_reconnected", resumed: true},
		// 1007 gives up: TestGeminiGiveUpBackoff.
	} {
		t.Run(fmt.Sprint(tc.code), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, harnessOptions{strategy: StrategyNative, gemini: true, rules: []openaisim.Rule{
				{Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiResponse}, Fault: openaisim.Fault{CloseCode: tc.code}, Times: 1},
				{Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiResponse}, Reply: openaisim.Reply{Text: "Back again."}},
			}})
			h.say("hey-banter-weather.wav", "hey banter, what's the weather like today?")
			if o := h.reply(); o.err == nil {
				t.Fatalf("Respond = %+v, want the reply lost with the connection", o.res)
			}
			waitLogged(t, h, tc.logged, 1)
			h.say("hey-banter-weather.wav", "hey banter, are you back?")
			if o := h.reply(); o.err != nil || o.res.Spoken != "Back again." {
				t.Fatalf("after close %d: Respond = %+v, %v", tc.code, o.res, o.err)
			}
			ev := h.logs.Events("realtime_socket_dropped")
			if len(ev) != 1 || ev[0]["close_code"] != float64(tc.code) {
				t.Errorf("realtime_socket_dropped %v, want close_code %d", ev, tc.code)
			}
			if tc.resumed {
				if ev := h.logs.Events("realtime_reconnected"); ev[0]["resumed"] != true {
					t.Errorf("reconnect %v: want resumed", ev[0])
				}
			}
			if n := len(h.oa.RequestsFor(openaisim.EndpointGeminiLive)); n != 2 {
				t.Errorf("%d connections, want 2", n)
			}
		})
	}
}

// TestGeminiConversationOutlivesConnectionLimits: the same conversation with the server's own
// connection limit shortened to 4 s (goAway 3 s before it): however the goAways fall between and
// during the turns, every reconnection resumes the conversation, and after at least two of
// them the answer still refers to the first turn.
func TestGeminiConversationOutlivesConnectionLimits(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{strategy: StrategyNative, gemini: true,
		sim: []openaisim.Option{openaisim.WithGeminiConnectionLimit(4*time.Second, 3*time.Second)},
		rules: []openaisim.Rule{
			{Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiResponse}, Reply: openaisim.Reply{Text: "Oslo has rain today."}, Times: 1},
			{Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiResponse, PromptPattern: `(?s)model: Oslo has rain today\..*user:`},
				Reply: openaisim.Reply{Text: "Earlier I said Oslo has rain."}},
		}})
	h.say("hey-banter-weather.wav", "hey banter, what's the weather like today?")
	if o := h.reply(); o.err != nil || o.res.Spoken != "Oslo has rain today." {
		t.Fatalf("turn 1: Respond = %+v, %v", o.res, o.err)
	}
	waitLogged(t, h, "realtime_reconnected", 2) // two connection limits passed
	h.say("hey-banter-weather.wav", "hey banter, what did you say?")
	if o := h.reply(); o.err != nil || o.res.Spoken != "Earlier I said Oslo has rain." {
		t.Fatalf("after two connection limits: Respond = %+v, %v", o.res, o.err)
	}
	for _, ev := range h.logs.Events("realtime_reconnected") {
		if ev["cause"] != "go_away" || ev["resumed"] != true {
			t.Errorf("reconnect %v: want a resumption after goAway", ev)
		}
	}
	if n := len(h.logs.Events("realtime_reply_lost")); n != 0 {
		t.Errorf("%d replies lost to a connection limit", n)
	}
}

// TestGeminiSessionOutlivesSessionLimit: twenty minutes pass on the simulator's clock after the
// first answer, past a connection limit (10 min) and the 15-minute limit of a session without
// context window compression. With compression (banter's setup) the session has no limit: the
// bridge resumes it after goAway and the answer comes from the server's own history. Without it
// the session is gone: the resumption is refused (1008 session not found) and the bridge starts
// a new session from banter's summary, which still carries the first answer.
func TestGeminiSessionOutlivesSessionLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		compression int
		resumed     bool
		pattern     string // what the later answer needs in the model's context
	}{
		{name: "compression", compression: 0, resumed: true, pattern: `(?s)model: Oslo has rain today\..*user:`},
		{name: "no compression", compression: -1, resumed: false, pattern: `(?s)You: Oslo has rain today\.`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, harnessOptions{strategy: StrategyNative, gemini: true,
				bridge: func(c *Config) { c.Gemini.CompressionTriggerTokens = tc.compression },
				rules: []openaisim.Rule{
					{Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiResponse}, Reply: openaisim.Reply{Text: "Oslo has rain today."}, Times: 1},
					{Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiResponse, PromptPattern: tc.pattern},
						Reply: openaisim.Reply{Text: "Earlier I said Oslo has rain."}},
				}})
			h.say("hey-banter-weather.wav", "hey banter, what's the weather like today?")
			if o := h.reply(); o.err != nil || o.res.Spoken != "Oslo has rain today." {
				t.Fatalf("turn 1: Respond = %+v, %v", o.res, o.err)
			}
			if err := h.oa.GeminiAdvance(20 * time.Minute); err != nil {
				t.Fatal(err)
			}
			waitLogged(t, h, "realtime_reconnected", 1)
			h.say("hey-banter-weather.wav", "hey banter, what did you say?")
			if o := h.reply(); o.err != nil || o.res.Spoken != "Earlier I said Oslo has rain." {
				t.Fatalf("after 20 minutes: Respond = %+v, %v", o.res, o.err)
			}
			ev := h.logs.Events("realtime_reconnected")
			if len(ev) != 1 || ev[0]["cause"] != "go_away" || ev[0]["resumed"] != tc.resumed {
				t.Errorf("reconnects %v: want one after goAway, resumed %v", ev, tc.resumed)
			}
			var setups []string
			for _, m := range h.geminiMessages("setup") {
				setups = append(setups, string(m.Raw))
			}
			if want := tc.compression == 0; strings.Contains(setups[0], "contextWindowCompression") != want {
				t.Errorf("setup %s: want contextWindowCompression %v", setups[0], want)
			}
		})
	}
}

// TestGeminiNativeTurnContext: a native turn's own instructions reach Gemini as a text turn
// without turnComplete just before the turn's audio (the Live API has no per-response
// instructions), without the [SKIP] instruction; the same context is not sent again on the
// next turn, and the model's context holds it for both answers.
func TestGeminiNativeTurnContext(t *testing.T) {
	t.Parallel()
	const turnContext = "You are banter in a voice call."
	h := newHarness(t, harnessOptions{strategy: StrategyNative, gemini: true})
	for range 2 {
		h.say("hey-banter-weather.wav", "hey banter, what's the weather like today?")
		if o := h.reply(); o.err != nil || o.res.Spoken == "" {
			t.Fatalf("Respond = %+v, %v", o.res, o.err)
		}
	}
	var order []string
	for _, m := range h.oa.GeminiMessages() {
		order = append(order, m.Type)
	}
	cc := h.geminiMessages("clientContent")
	if len(cc) != 1 || !strings.Contains(string(cc[0].Raw), turnContext) || strings.Contains(string(cc[0].Raw), "[SKIP]") ||
		strings.Contains(string(cc[0].Raw), `"turnComplete":true`) {
		t.Fatalf("clientContent messages %v: want the turn's context once, without [SKIP] or turnComplete", cc)
	}
	if i := slices.Index(order, "clientContent"); i < 0 || i+1 >= len(order) || order[i+1] != "realtimeInput.activityStart" {
		t.Errorf("messages %v: want the context just before the turn's activity", order)
	}
	for _, r := range h.oa.RequestsFor(openaisim.EndpointGeminiResponse) {
		if !strings.Contains(r.Prompt, turnContext) {
			t.Errorf("Gemini turn prompt %q: want the turn's context", r.Prompt)
		}
	}
}

// TestGeminiStaleFreshSignal: a take-back's signal that finds a fresh connection already up (a
// reconnect after a drop or goAway opened it without a handle while the take-back was pending)
// leaves that connection alone: still one read loop on it, no new connection, and the next turn
// answered whole there.
func TestGeminiStaleFreshSignal(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{strategy: StrategyNative, gemini: true, rules: []openaisim.Rule{
		{Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiResponse}, Reply: openaisim.Reply{Text: "Oslo has rain today."}},
	}})
	h.say("hey-banter-weather.wav", "hey banter, what's the weather like today?")
	if o := h.reply(); o.err != nil {
		t.Fatal(o.err)
	}
	h.responder.mu.Lock()
	g, ok := h.responder.b.(*geminiBridge)
	h.responder.mu.Unlock()
	if !ok {
		t.Fatalf("provider %T, want the Gemini bridge", h.responder.b)
	}
	// Three signals, each sent once the one before was taken: after the third, the supervisor has
	// handled the first two to the end (a read loop it started for them is running by then).
	for range 3 {
		g.fresh <- struct{}{}
	}
	buf := make([]byte, 1<<20)
	loop := fmt.Sprintf("(*geminiBridge).readLoop(%p", g) // this bridge's, by its receiver
	if n := strings.Count(string(buf[:runtime.Stack(buf, true)]), loop); n != 1 {
		t.Errorf("%d read loops on the connection, want 1", n)
	}
	h.say("hey-banter-weather.wav", "hey banter, what's the weather like today?")
	if o := h.reply(); o.err != nil || o.res.Spoken != "Oslo has rain today." {
		t.Fatalf("after the stale signals: Respond = %+v, %v", o.res, o.err)
	}
	if n := len(h.oa.RequestsFor(openaisim.EndpointGeminiLive)); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

package realtime

import (
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/decision"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// TestNativeAdmittedTurnAnswered: a member asks the bot by name; Stage A
// admits the turn, its audio is forwarded and the model's spoken answer
// reaches the member through the voice simulator, decoded.
func TestNativeAdmittedTurnAnswered(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{strategy: StrategyNative, eagerness: 0})
	d := h.say("hey-banter-weather.wav", "hey banter, what's the weather like today?")
	if !d.Allowed() {
		t.Fatalf("Stage A denied an addressed turn: %v", d)
	}
	h.waitHeard(50, 15*time.Second)
	h.waitIdle(15 * time.Second)

	appends := h.clientEvents("input_audio_buffer.append")
	if len(appends) == 0 || len(h.clientEvents("input_audio_buffer.commit")) != 1 || len(h.clientEvents("response.create")) != 1 {
		t.Fatalf("client events: %d appends, %d commits, %d response.create",
			len(appends), len(h.clientEvents("input_audio_buffer.commit")), len(h.clientEvents("response.create")))
	}
	rec := h.oa.RequestsFor(openaisim.EndpointRealtimeResponse)
	if len(rec) != 1 || rec[0].AudioDuration < time.Second {
		t.Fatalf("realtime responses %+v: want one answering >= 1 s of forwarded audio", rec)
	}
	// What the member decoded is the model's speech (energy well above
	// silence) and as long as the audio the model sent.
	heard := h.member.HeardPCM(testBot)
	if r := rms(heard); r < 300 {
		t.Errorf("member heard RMS %.0f: not speech", r)
	}
	wantFrames := rec[0].AudioBytes / 960
	if got := len(h.member.Heard(testBot)); got < wantFrames-2 || got > wantFrames+2 {
		t.Errorf("member heard %d frames, model sent %d frames of audio", got, wantFrames)
	}
	if ev := h.logs.events("realtime_reply_requested"); len(ev) != 1 || ev[0]["reason"] != d.Reason.String() || ev[0]["latency_ms"] == nil {
		t.Errorf("realtime_reply_requested logs: %v", ev)
	}
	if n := h.metric("banter_voice_realtime_first_frame_seconds"); n != 1 {
		t.Errorf("first frame observations = %v, want 1", n)
	}
}

// TestNativeDeniedTurnNeverForwarded: at eagerness 0 a remark not addressed
// to the bot is denied by Stage A, and none of its audio reaches the model.
func TestNativeDeniedTurnNeverForwarded(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{strategy: StrategyNative, eagerness: 0})
	d := h.say("two-questions.wav", "what do you think about pineapple on pizza? and be honest")
	if d.Allowed() {
		t.Fatalf("Stage A admitted a non-addressed turn at eagerness 0: %v", d)
	}
	time.Sleep(300 * time.Millisecond)
	for _, typ := range []string{"input_audio_buffer.append", "input_audio_buffer.commit", "response.create"} {
		if n := len(h.clientEvents(typ)); n != 0 {
			t.Errorf("%d %s events sent for a denied turn", n, typ)
		}
	}
	if n := len(h.member.Heard(testBot)); n != 0 {
		t.Errorf("member heard %d frames", n)
	}
	ev := h.logs.events("realtime_reply_skipped")
	if len(ev) != 1 || ev[0]["skip_reason"] != d.Reason.String() {
		t.Errorf("realtime_reply_skipped logs: %v", ev)
	}
	if n := h.metric("banter_voice_realtime_replies_skipped_total"); n != 1 {
		t.Errorf("skipped = %v", n)
	}
}

// TestBrainSkip: the brain's generation answers [SKIP]; nothing is sent to
// the realtime model and the member hears nothing.
func TestBrainSkip(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{strategy: StrategyBrain, eagerness: 0, rules: []openaisim.Rule{
		{Name: "skip", Match: openaisim.Match{Endpoint: openaisim.EndpointResponses}, Reply: openaisim.Reply{Skip: true}},
	}})
	d := h.say("hey-banter-weather.wav", "hey banter, what's the weather like today?")
	if !d.Allowed() {
		t.Fatalf("Stage A denied: %v", d)
	}
	if len(h.oa.RequestsFor(openaisim.EndpointResponses)) != 1 {
		t.Fatal("the brain did not generate")
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(h.clientEvents("response.create")); n != 0 {
		t.Errorf("%d response.create sent after [SKIP]", n)
	}
	if n := len(h.clientEvents("input_audio_buffer.append")); n != 0 {
		t.Errorf("%d appends in brain mode", n)
	}
	if n := len(h.member.Heard(testBot)); n != 0 {
		t.Errorf("member heard %d frames after [SKIP]", n)
	}
	ev := h.logs.events("realtime_reply_skipped")
	if len(ev) != 1 || ev[0]["skip_reason"] != decision.ReasonLLMSkip.String() {
		t.Errorf("realtime_reply_skipped logs: %v", ev)
	}
}

// TestBrainSpeaksText: the brain's text (not [SKIP]) is voiced by the
// realtime model: the response's instructions carry exactly that text and
// the member hears it.
func TestBrainSpeaksText(t *testing.T) {
	t.Parallel()
	const reply = "It is sunny and warm today."
	h := newHarness(t, harnessOptions{strategy: StrategyBrain, eagerness: 0, rules: []openaisim.Rule{
		{Name: "brain", Match: openaisim.Match{Endpoint: openaisim.EndpointResponses}, Reply: openaisim.Reply{Text: reply}},
		{Name: "voice", Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeResponse, PromptPattern: "Text:\n" + reply},
			Reply: openaisim.Reply{Text: reply}},
	}})
	if d := h.say("hey-banter-weather.wav", "hey banter, what's the weather like today?"); !d.Allowed() {
		t.Fatalf("Stage A denied: %v", d)
	}
	h.waitHeard(25, 15*time.Second)
	h.waitIdle(15 * time.Second)
	rec := h.oa.RequestsFor(openaisim.EndpointRealtimeResponse)
	if len(rec) != 1 || rec[0].Rule != "voice" || !strings.HasSuffix(rec[0].Instructions, "\n"+reply) {
		t.Fatalf("realtime responses: %+v", rec)
	}
	if got, want := len(h.member.Heard(testBot)), rec[0].AudioBytes/960; got < want-2 || got > want+2 {
		t.Errorf("member heard %d frames of %d", got, want)
	}
}

// TestInterruptTruncatesAtPlayedOffset: while the model is still streaming
// a long answer, Interrupt stops the audio at once, cancels the response
// and truncates the item to what was actually played.
func TestInterruptTruncatesAtPlayedOffset(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("This is a rather long answer that keeps going for a while. ", 4)
	h := newHarness(t, harnessOptions{strategy: StrategyNative, rules: []openaisim.Rule{
		{Name: "long", Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeResponse},
			Reply: openaisim.Reply{Text: long}, Latency: openaisim.Latency{PerToken: 60 * time.Millisecond}},
	}})
	if d := h.say("hey-banter-weather.wav", "hey banter, tell me a long story"); !d.Allowed() {
		t.Fatalf("Stage A denied: %v", d)
	}
	h.waitHeard(25, 15*time.Second)
	ok, err := h.bridge.Interrupt(t.Context())
	if !ok || err != nil {
		t.Fatalf("Interrupt = %v, %v", ok, err)
	}
	sent := int(h.metric("banter_voice_realtime_frames_sent_total"))
	time.Sleep(300 * time.Millisecond)
	if n := int(h.metric("banter_voice_realtime_frames_sent_total")); n != sent {
		t.Errorf("frames kept going after Interrupt: %d then %d", sent, n)
	}
	tr := h.oa.Truncations()
	if len(tr) != 1 {
		t.Fatalf("truncations: %+v", tr)
	}
	if tr[0].AudioEndMs != sent*20 {
		t.Errorf("truncated at %d ms, the sink accepted %d frames (%d ms)", tr[0].AudioEndMs, sent, sent*20)
	}
	if tr[0].AudioEndMs >= tr[0].AudioMs {
		t.Errorf("truncated at %d ms of %d ms received: nothing cut", tr[0].AudioEndMs, tr[0].AudioMs)
	}
	heard := len(h.member.Heard(testBot))
	if d := heard*20 - tr[0].AudioEndMs; d < -100 || d > 0 {
		t.Errorf("member heard %d ms, truncated at %d ms", heard*20, tr[0].AudioEndMs)
	}
	// Order on the wire: cancel, its response.done, then the truncate.
	var order []string
	for _, e := range h.oa.RealtimeEvents() {
		if e.Type == "response.cancel" || e.Type == "conversation.item.truncate" {
			order = append(order, e.Type)
		}
	}
	if strings.Join(order, ",") != "response.cancel,conversation.item.truncate" {
		t.Errorf("client events %v", order)
	}
	if ev := h.logs.events("realtime_interrupted"); len(ev) != 1 || ev[0]["cancelled"] != true || ev[0]["truncated"] != true {
		t.Errorf("realtime_interrupted logs: %v", ev)
	}
}

package realtime

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/decision"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// TestNativeAdmittedTurnAnswered: a member asks the bot by name; Stage A
// admits the turn, its audio is forwarded and the model's spoken answer
// reaches the member through the session's Playback and the voice
// simulator, decoded.
func TestNativeAdmittedTurnAnswered(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{strategy: StrategyNative, eagerness: 0})
	d := h.say("hey-banter-weather.wav", "hey banter, what's the weather like today?")
	if !d.Allowed() {
		t.Fatalf("Stage A denied an addressed turn: %v", d)
	}
	o := h.reply()
	if o.err != nil || o.res.Skipped || o.res.Spoken == "" || o.res.Spoken != o.res.Text {
		t.Fatalf("Respond = %+v, %v", o.res, o.err)
	}
	appends := h.clientEvents("input_audio_buffer.append")
	if len(appends) == 0 || len(h.clientEvents("input_audio_buffer.commit")) != 1 || len(h.clientEvents("response.create")) != 1 {
		t.Fatalf("client events: %d appends, %d commits, %d response.create",
			len(appends), len(h.clientEvents("input_audio_buffer.commit")), len(h.clientEvents("response.create")))
	}
	rec := h.oa.RequestsFor(openaisim.EndpointRealtimeResponse)
	if len(rec) != 1 || rec[0].AudioDuration < time.Second || strings.Contains(rec[0].Instructions, "[SKIP]") {
		t.Fatalf("realtime responses %+v: want one answering >= 1 s of forwarded audio, no [SKIP] instruction", rec)
	}
	// What went out is the model's audio, all of it; what the member decoded
	// is speech (energy well above silence).
	wantFrames := rec[0].AudioBytes / frameBytes
	if got := int(h.sent.frames.Load()); got < wantFrames-1 || got > wantFrames+1 {
		t.Errorf("the playback sent %d frames, the model sent %d frames of audio", got, wantFrames)
	}
	if o.played != time.Duration(h.sent.frames.Load())*20*time.Millisecond {
		t.Errorf("Playback.Played %v, %d frames sent", o.played, h.sent.frames.Load())
	}
	h.waitHeard(wantFrames - 2)
	if r := rms(h.member.HeardPCM(testBot)); r < 300 {
		t.Errorf("member heard RMS %.0f: not speech", r)
	}
	if ev := h.logs.Events("realtime_reply_requested"); len(ev) != 1 || ev[0]["reason"] != d.Reason.String() || ev[0]["latency_ms"] == nil {
		t.Errorf("realtime_reply_requested logs: %v", ev)
	}
	for _, m := range []string{"banter_voice_realtime_first_frame_seconds", "banter_voice_realtime_first_audio_seconds"} {
		if n := h.metric(m); n != 1 {
			t.Errorf("%s observations = %v, want 1", m, n)
		}
	}
	if n := int(h.metric("banter_voice_realtime_frames_sent_total")); n != int(h.sent.frames.Load()) {
		t.Errorf("frames_sent_total %d, playback sent %d", n, h.sent.frames.Load())
	}
}

// TestNativeDeniedTurnNeverForwarded: at eagerness 0 a remark not addressed
// to the bot is denied by Stage A; handed to the Responder anyway, none of
// its audio reaches the model.
func TestNativeDeniedTurnNeverForwarded(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{strategy: StrategyNative, eagerness: 0})
	d := h.say("two-questions.wav", "what do you think about pineapple on pizza? and be honest")
	if d.Allowed() {
		t.Fatalf("Stage A admitted a non-addressed turn at eagerness 0: %v", d)
	}
	// Respond returning is the event: nothing of it runs on after.
	if o := h.reply(); o.err != nil || !o.res.Skipped || o.res.Spoken != "" {
		t.Fatalf("Respond = %+v, %v", o.res, o.err)
	}
	for _, typ := range []string{"input_audio_buffer.append", "input_audio_buffer.commit", "response.create"} {
		if n := len(h.clientEvents(typ)); n != 0 {
			t.Errorf("%d %s events sent for a denied turn", n, typ)
		}
	}
	if n := h.sent.frames.Load(); n != 0 {
		t.Errorf("the playback sent %d frames", n)
	}
	ev := h.logs.Events("realtime_reply_skipped")
	if len(ev) != 1 || ev[0]["skip_reason"] != d.Reason.String() {
		t.Errorf("realtime_reply_skipped logs: %v", ev)
	}
	if n := h.metric("banter_voice_realtime_replies_skipped_total"); n != 1 {
		t.Errorf("skipped = %v", n)
	}
}

// TestBrainSkip: the brain's generation answers [SKIP]; nothing is sent to
// the realtime model and nothing is played.
func TestBrainSkip(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{strategy: StrategyBrain, eagerness: 0, rules: []openaisim.Rule{
		{Name: "skip", Match: openaisim.Match{Endpoint: openaisim.EndpointResponses}, Reply: openaisim.Reply{Skip: true}},
	}})
	d := h.say("hey-banter-weather.wav", "hey banter, what's the weather like today?")
	if !d.Allowed() {
		t.Fatalf("Stage A denied: %v", d)
	}
	o := h.reply()
	if o.err != nil || !o.res.Skipped || o.res.Spoken != "" || !o.res.StageB.Skipped() {
		t.Fatalf("Respond = %+v, %v", o.res, o.err)
	}
	if len(h.oa.RequestsFor(openaisim.EndpointResponses)) != 1 {
		t.Fatal("the brain did not generate")
	}
	if n := len(h.clientEvents("response.create")); n != 0 {
		t.Errorf("%d response.create sent after [SKIP]", n)
	}
	if n := len(h.clientEvents("input_audio_buffer.append")); n != 0 {
		t.Errorf("%d appends in brain mode", n)
	}
	if n := h.sent.frames.Load(); n != 0 {
		t.Errorf("the playback sent %d frames after [SKIP]", n)
	}
	ev := h.logs.Events("realtime_reply_skipped")
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
	o := h.reply()
	if o.err != nil || o.res.Spoken != reply {
		t.Fatalf("Respond = %+v, %v", o.res, o.err)
	}
	rec := h.oa.RequestsFor(openaisim.EndpointRealtimeResponse)
	if len(rec) != 1 || rec[0].Rule != "voice" || !strings.HasSuffix(rec[0].Instructions, "\n"+reply) {
		t.Fatalf("realtime responses: %+v", rec)
	}
	want := rec[0].AudioBytes / frameBytes
	if got := int(h.sent.frames.Load()); got < want-1 || got > want+1 {
		t.Errorf("the playback sent %d frames of %d", got, want)
	}
	h.waitHeard(want - 2)
}

// TestInterruptTruncatesAtPlayedOffset: while the model is still streaming
// a long answer, the session cancels the reply (barge-in): Respond returns
// at once with what was spoken, the response is cancelled and the item
// truncated to exactly what the Playback played.
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
	h.waitHeard(25)
	h.interrupt()
	o := h.reply()
	if !errors.Is(o.err, context.Canceled) {
		t.Errorf("Respond error %v, want context.Canceled", o.err)
	}
	if o.res.Spoken == "" || len(o.res.Spoken) >= len(strings.TrimSpace(long)) {
		t.Errorf("spoken %q: want a cut part of the answer", o.res.Spoken)
	}
	// After Respond returned and the spurt ended, the frames that went out
	// are exactly the ones Played counts: the frame in flight was cancelled,
	// nothing was sent after the cut.
	if sent := h.sent.frames.Load(); o.played != time.Duration(sent)*20*time.Millisecond {
		t.Errorf("played %v, %d frames sent", o.played, sent)
	}
	tr := waitTruncations(t, h.oa, 1)
	if len(tr) != 1 {
		t.Fatalf("truncations: %+v", tr)
	}
	if want := int(o.played / time.Millisecond); tr[0].AudioEndMs != want {
		t.Errorf("truncated at %d ms, playback played %d ms", tr[0].AudioEndMs, want)
	}
	if tr[0].AudioEndMs >= tr[0].AudioMs {
		t.Errorf("truncated at %d ms of %d ms received: nothing cut", tr[0].AudioEndMs, tr[0].AudioMs)
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
	if ev := h.logs.Events("realtime_interrupted"); len(ev) != 1 || ev[0]["cancelled"] != true || ev[0]["truncated"] != true {
		t.Errorf("realtime_interrupted logs: %v", ev)
	}
	if n := h.metric("banter_voice_realtime_interruptions_total"); n != 1 {
		t.Errorf("interruptions = %v", n)
	}
}

package realtime

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/llm"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
	"github.com/banterbot/banter/voice"
)

// TestResponderNative: the voice session's Responder (voice.Responder)
// forwards an admitted turn and plays the answer through the session's
// Playback; the member hears it.
func TestResponderNative(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{responder: true, strategy: StrategyNative})
	if d := h.say("hey-banter-weather.wav", "hey banter, what's the weather like today?"); !d.Allowed() {
		t.Fatalf("Stage A denied: %v", d)
	}
	o := h.reply(20 * time.Second)
	if o.err != nil || o.res.Skipped || o.res.Spoken == "" || o.res.Spoken != o.res.Text {
		t.Fatalf("Respond = %+v, %v", o.res, o.err)
	}
	rec := h.oa.RequestsFor(openaisim.EndpointRealtimeResponse)
	if len(rec) != 1 || rec[0].AudioDuration < time.Second || strings.Contains(rec[0].Instructions, "[SKIP]") {
		t.Fatalf("realtime responses: %+v", rec)
	}
	if got, want := len(h.member.Heard(testBot)), rec[0].AudioBytes/960; got < want-2 || got > want+2 {
		t.Errorf("member heard %d frames of %d", got, want)
	}
	if o.played < time.Duration(rec[0].AudioBytes/48)*time.Millisecond-40*time.Millisecond {
		t.Errorf("playback played %v of %d ms", o.played, rec[0].AudioBytes/48)
	}
}

// TestResponderBargeIn: the session cancels the reply's context (barge-in);
// Respond returns at once with what was spoken, the response is cancelled
// and the item truncated at what the Playback played.
func TestResponderBargeIn(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("This is a rather long answer that keeps going for a while. ", 4)
	h := newHarness(t, harnessOptions{responder: true, strategy: StrategyNative, rules: []openaisim.Rule{
		{Name: "long", Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeResponse},
			Reply: openaisim.Reply{Text: long}, Latency: openaisim.Latency{PerToken: 60 * time.Millisecond}},
	}})
	if d := h.say("hey-banter-weather.wav", "hey banter, tell me a long story"); !d.Allowed() {
		t.Fatalf("Stage A denied: %v", d)
	}
	h.waitHeard(25, 15*time.Second)
	h.interrupt()
	o := h.reply(5 * time.Second)
	if !errors.Is(o.err, context.Canceled) {
		t.Errorf("Respond error %v, want context.Canceled", o.err)
	}
	if o.res.Spoken == "" || len(o.res.Spoken) >= len(strings.TrimSpace(long)) {
		t.Errorf("spoken %q: want a cut part of the answer", o.res.Spoken)
	}
	tr := h.oa.Truncations()
	if len(tr) != 1 {
		t.Fatalf("truncations %+v", tr)
	}
	if want := int(o.played / time.Millisecond); tr[0].AudioEndMs != want {
		t.Errorf("truncated at %d ms, playback played %d ms", tr[0].AudioEndMs, want)
	}
	if n := len(h.clientEvents("response.cancel")); n != 1 {
		t.Errorf("%d response.cancel", n)
	}
}

// TestResponderBrainSkip: through the Responder, the brain's [SKIP] sends
// nothing to the realtime model.
func TestResponderBrainSkip(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{responder: true, strategy: StrategyBrain, rules: []openaisim.Rule{
		{Name: "skip", Match: openaisim.Match{Endpoint: openaisim.EndpointResponses}, Reply: openaisim.Reply{Skip: true}},
	}})
	if d := h.say("hey-banter-weather.wav", "hey banter, what's the weather like today?"); !d.Allowed() {
		t.Fatalf("Stage A denied: %v", d)
	}
	o := h.reply(10 * time.Second)
	if o.err != nil || !o.res.Skipped || o.res.Spoken != "" || !o.res.StageB.Skipped() {
		t.Fatalf("Respond = %+v, %v", o.res, o.err)
	}
	if n := len(h.clientEvents("response.create")); n != 0 {
		t.Errorf("%d response.create after [SKIP]", n)
	}
}

// TestResponderRetriesLostReply: the socket drops after the response
// started but before any audio; the Responder asks again on the new session
// (forwarding the turn again) and the member hears the answer.
func TestResponderRetriesLostReply(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{responder: true, strategy: StrategyNative, rules: []openaisim.Rule{
		{Name: "drop", Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeResponse},
			Fault: openaisim.Fault{DropAfterEvents: 2}, Times: 1},
	}})
	if d := h.say("hey-banter-weather.wav", "hey banter, what's the weather like today?"); !d.Allowed() {
		t.Fatalf("Stage A denied: %v", d)
	}
	o := h.reply(20 * time.Second)
	if o.err != nil || o.res.Spoken == "" {
		t.Fatalf("Respond = %+v, %v", o.res, o.err)
	}
	if n := len(h.logs.events("realtime_reply_retry")); n != 1 {
		t.Errorf("%d realtime_reply_retry, want 1", n)
	}
	if n := len(h.clientEvents("input_audio_buffer.commit")); n != 2 {
		t.Errorf("%d commits, want 2 (the turn forwarded again)", n)
	}
	if h.sessions() != 2 {
		t.Errorf("%d sessions", h.sessions())
	}
	h.waitHeard(25, 5*time.Second)
}

// frameSender is a voice.Sender that accepts frames at once.
type frameSender struct{ sink *testSink }

func (s frameSender) SendOpus(ctx context.Context, opus []byte) error { return s.sink.send(ctx, opus) }
func (s frameSender) StopSpeaking(ctx context.Context) error          { return s.sink.stop(ctx) }

func (p *Responder) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.bridges)
}

// TestResponderSessionsReleaseIdle: one Bridge per voice session (the join
// greeting included), closed by Release for its guild or when idle.
func TestResponderSessionsReleaseIdle(t *testing.T) {
	oa := openaitest.Serve(t, openaisim.WithRules(openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointResponses},
		Reply: openaisim.Reply{Text: "Hi all."}}))
	client, err := llm.New(llm.Options{BaseURL: oa.BaseURL(), APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	sink, logs := newTestSink(), &logBuffer{}
	var clock atomic.Int64 // the Responder's clock, advanced by the test
	clock.Store(time.Now().UnixNano())
	cfg := simConfig(oa, StrategyBrain, sink, logs)
	cfg.Now = func() time.Time { return time.Unix(0, clock.Load()) }
	p, err := NewResponder(ResponderOptions{Config: cfg, Gen: client, Model: "gpt-5-mini", IdleClose: 40 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pb1, err := voice.NewPlayback(frameSender{sink}, pcm.Mono24k(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	pb2, err := voice.NewPlayback(frameSender{sink}, pcm.Mono24k(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	mark := func(voice.Phase, time.Time) {}
	greeting := &voice.Reply{Instructions: "Greet.", Out: pb1, Mark: mark}
	if res, err := p.Respond(t.Context(), greeting); err != nil || res.Spoken != "Hi all." {
		t.Fatalf("greeting: %+v, %v", res, err)
	}
	turn := &voice.Reply{Turn: &voice.Turn{ID: "u1", GuildID: "g2", SpeakerName: "Bob", Transcript: "banter, hi"},
		Decision: decision.Decision{Outcome: decision.OutcomeAllow}, Instructions: "Answer.", Out: pb2, Mark: mark}
	if res, err := p.Respond(t.Context(), turn); err != nil || res.Spoken != "Hi all." {
		t.Fatalf("turn: %+v, %v", res, err)
	}
	if n := p.count(); n != 2 {
		t.Fatalf("%d bridges, want 2 (one per session)", n)
	}
	p.Release("g2")
	if n := p.count(); n != 1 {
		t.Fatalf("%d bridges after Release, want 1", n)
	}
	time.Sleep(100 * time.Millisecond) // several reaper ticks: not idle by the clock yet
	if n := p.count(); n != 1 {
		t.Fatalf("%d bridges before IdleClose passed, want 1", n)
	}
	clock.Add(int64(time.Second))
	deadline := time.Now().Add(5 * time.Second)
	for p.count() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := p.count(); n != 0 {
		t.Errorf("%d bridges after IdleClose", n)
	}
}

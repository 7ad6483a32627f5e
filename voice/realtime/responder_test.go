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

// TestResponderRetriesLostReply: the socket drops after the response
// started but before any audio; the Responder asks again on the new session
// (forwarding the turn again) and the member hears the answer.
func TestResponderRetriesLostReply(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{strategy: StrategyNative, rules: []openaisim.Rule{
		{Name: "drop", Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeResponse},
			Fault: openaisim.Fault{DropAfterEvents: 2}, Times: 1},
	}})
	if d := h.say("hey-banter-weather.wav", "hey banter, what's the weather like today?"); !d.Allowed() {
		t.Fatalf("Stage A denied: %v", d)
	}
	o := h.reply()
	if o.err != nil || o.res.Spoken == "" {
		t.Fatalf("Respond = %+v, %v", o.res, o.err)
	}
	if n := len(h.logs.Events("realtime_reply_retry")); n != 1 {
		t.Errorf("%d realtime_reply_retry, want 1", n)
	}
	if n := len(h.clientEvents("input_audio_buffer.commit")); n != 2 {
		t.Errorf("%d commits, want 2 (the turn forwarded again)", n)
	}
	if h.sessions() != 2 {
		t.Errorf("%d sessions", h.sessions())
	}
	h.waitHeard(25)
}

// frameSender is a voice.Sender that accepts frames at once, failing every
// frame after failAfter (0: never).
type frameSender struct {
	frames, stops atomic.Int64
	failAfter     int64
}

var errSendFailed = errors.New("voice: connection closed")

func (s *frameSender) SendOpus(context.Context, []byte) error {
	if s.failAfter > 0 && s.frames.Load() >= s.failAfter {
		return errSendFailed
	}
	s.frames.Add(1)
	return nil
}

func (s *frameSender) StopSpeaking(context.Context) error { s.stops.Add(1); return nil }

// respondOnce runs one reply as the voice session does: Begin, Respond,
// End.
func respondOnce(t *testing.T, p *Responder, pb *voice.Playback, r *voice.Reply) (voice.Result, error) {
	t.Helper()
	r.Out = pb
	if r.Mark == nil {
		r.Mark = func(voice.Phase, time.Time) {}
	}
	pb.Begin(nil)
	res, err := p.Respond(t.Context(), r)
	ctx, cancel := context.WithTimeout(t.Context(), guard)
	defer cancel()
	if eerr := pb.End(ctx, err == nil); eerr != nil {
		t.Errorf("end: %v", eerr)
	}
	return res, err
}

// TestResponderPerSession: voice.Options.NewResponder (Sessions) gives each
// voice session its own Responder and realtime socket, dialled on its first
// reply (the join greeting included) and kept across replies; closing a
// session's Responder closes its socket only.
func TestResponderPerSession(t *testing.T) {
	oa := openaitest.Serve(t, openaisim.WithRules(openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointResponses},
		Reply: openaisim.Reply{Text: "Hi all."}}))
	client, err := llm.New(llm.Options{BaseURL: oa.BaseURL(), APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	logs := newTestLog()
	factory, err := Sessions(ResponderOptions{Config: simConfig(oa, StrategyBrain, logs), Gen: client, Model: "gpt-5-mini"})
	if err != nil {
		t.Fatal(err)
	}
	sessions := func() int {
		seen := map[string]bool{}
		for _, e := range oa.RealtimeEvents() {
			seen[e.Session] = true
		}
		return len(seen)
	}
	ctx, endSessions := context.WithCancel(t.Context())
	defer endSessions()
	var rs []*Responder
	for _, g := range []string{"g1", "g2"} {
		vr, err := factory(ctx, voice.SessionInfo{GuildID: g, ChannelID: "c-" + g})
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, vr.(*Responder))
	}
	defer rs[1].Close()
	if n := sessions(); n != 0 {
		t.Fatalf("%d realtime sessions before any reply", n)
	}
	pb, err := voice.NewPlayback(&frameSender{}, pcm.Mono24k(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	greeting := &voice.Reply{Instructions: "Greet."}
	if res, err := respondOnce(t, rs[0], pb, greeting); err != nil || res.Spoken != "Hi all." {
		t.Fatalf("greeting: %+v, %v", res, err)
	}
	turn := &voice.Reply{Turn: &voice.Turn{ID: "u1", GuildID: "g2", SpeakerName: "Bob", Transcript: "banter, hi"},
		Decision: decision.Decision{Outcome: decision.OutcomeAllow}, Instructions: "Answer."}
	for range 2 {
		if res, err := respondOnce(t, rs[1], pb, turn); err != nil || res.Spoken != "Hi all." {
			t.Fatalf("turn: %+v, %v", res, err)
		}
	}
	if n := sessions(); n != 2 {
		t.Fatalf("%d realtime sessions, want 2 (one per voice session, kept across replies)", n)
	}
	if ev := logs.Events("realtime_reply_requested"); len(ev) != 3 || ev[1]["guild_id"] != "g2" {
		t.Errorf("realtime_reply_requested logs (with the session's guild): %v", ev)
	}
	rs[0].Close()
	if _, err := rs[0].Respond(t.Context(), greeting); !errors.Is(err, ErrClosed) {
		t.Errorf("Respond after Close: %v, want ErrClosed", err)
	}
	if res, err := respondOnce(t, rs[1], pb, turn); err != nil || res.Spoken != "Hi all." {
		t.Fatalf("the other session after one closed: %+v, %v", res, err)
	}
	endSessions() // the voice sessions end: their Bridges stop
	if _, err := rs[1].Respond(t.Context(), turn); !errors.Is(err, ErrClosed) {
		t.Errorf("Respond after the session ended: %v, want ErrClosed", err)
	}
	if _, err := Sessions(ResponderOptions{Config: simConfig(oa, StrategyBrain, logs)}); err == nil {
		t.Error("brain without Gen accepted")
	}
	if _, err := Sessions(ResponderOptions{Config: simConfig(oa, StrategyUnknown, logs)}); err == nil {
		t.Error("unknown strategy accepted")
	}
}

// TestResponderGate: a native Responder never forwards a turn Stage A did
// not admit, nor one too short to commit; each is logged with its reason.
func TestResponderGate(t *testing.T) {
	oa := openaitest.Serve(t)
	logs := newTestLog()
	p, err := NewResponder(t.Context(), ResponderOptions{Config: simConfig(oa, StrategyNative, logs)}, voice.SessionInfo{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pb, err := voice.NewPlayback(&frameSender{}, pcm.Mono24k(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	speech := make([]int16, 4800)
	tests := []struct {
		name   string
		turn   *voice.Turn
		d      decision.Decision
		reason string
	}{
		{"denied", &voice.Turn{ID: "u2", Audio: speech, Format: pcm.Mono24k()},
			decision.Decision{Outcome: decision.OutcomeDeny, Reason: decision.ReasonLowSignalFragment}, decision.ReasonLowSignalFragment.String()},
		{"zero decision", &voice.Turn{ID: "u3", Audio: speech, Format: pcm.Mono24k()}, decision.Decision{}, decision.ReasonUnknown.String()},
		{"too short", &voice.Turn{ID: "u4", Audio: speech[:100], Format: pcm.Mono24k()},
			decision.Decision{Outcome: decision.OutcomeAllow}, "audio_too_short"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := respondOnce(t, p, pb, &voice.Reply{Turn: tt.turn, Decision: tt.d})
			if err != nil || !res.Skipped {
				t.Fatalf("Respond = %+v, %v", res, err)
			}
			found := false
			for _, e := range logs.Events("realtime_reply_skipped") {
				if e["turn_id"] == tt.turn.ID && e["skip_reason"] == tt.reason {
					found = true
				}
			}
			if !found {
				t.Errorf("no realtime_reply_skipped for %s with %s", tt.turn.ID, tt.reason)
			}
		})
	}
	for _, e := range oa.RealtimeEvents() {
		if strings.HasPrefix(e.Type, "input_audio_buffer") || e.Type == "response.create" {
			t.Errorf("a gated turn reached the model: %s", e.Type)
		}
	}
}

// TestResponderPlaybackFailureTruncates: the voice connection fails in the
// middle of a reply (the Playback's sends fail): Respond returns the send
// error, the response is cancelled and the item truncated at what went out,
// so the model's conversation holds only what was heard.
func TestResponderPlaybackFailureTruncates(t *testing.T) {
	const reply = "It will be sunny in the morning, cloudy by noon and rainy all evening long."
	oa := openaitest.Serve(t, openaisim.WithRules(
		openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointResponses}, Reply: openaisim.Reply{Text: reply}},
		openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeResponse}, Reply: openaisim.Reply{Text: reply},
			Latency: openaisim.Latency{PerToken: 30 * time.Millisecond}}))
	client, err := llm.New(llm.Options{BaseURL: oa.BaseURL(), APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	logs := newTestLog()
	p, err := NewResponder(t.Context(), ResponderOptions{Config: simConfig(oa, StrategyBrain, logs), Gen: client, Model: "gpt-5-mini"},
		voice.SessionInfo{GuildID: "g1", ChannelID: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	sender := &frameSender{failAfter: 10}
	pb, err := voice.NewPlayback(sender, pcm.Mono24k(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	pb.Begin(nil)
	r := &voice.Reply{Turn: &voice.Turn{ID: "u1", SpeakerName: "Bob", Transcript: "banter, weather?"},
		Decision: decision.Decision{Outcome: decision.OutcomeAllow}, Instructions: "Answer.", Out: pb,
		Mark: func(voice.Phase, time.Time) {}}
	res, err := p.Respond(t.Context(), r)
	if !errors.Is(err, errSendFailed) {
		t.Fatalf("Respond = %+v, %v; want the send error", res, err)
	}
	if pb.Played() != 10*20*time.Millisecond {
		t.Errorf("played %v, want the 10 frames sent", pb.Played())
	}
	if res.Spoken == "" || strings.HasSuffix(res.Spoken, "evening long.") {
		t.Errorf("spoken %q: want the part played", res.Spoken)
	}
	tr := waitTruncations(t, oa, 1)
	if len(tr) != 1 || tr[0].AudioEndMs != 200 {
		t.Fatalf("truncations %+v: want one at 200 ms; logs %v", tr, logs.Events("realtime_interrupted"))
	}
	if ev := logs.Events("realtime_interrupted"); len(ev) != 1 || ev[0]["truncated"] != true {
		t.Errorf("realtime_interrupted logs: %v", ev)
	}
}

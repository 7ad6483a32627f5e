package voice_test

import (
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/banterbot/banter/config"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// TestJoinGreetingRetry: right after joining, the bot greets; a first
// attempt that stays silent ([SKIP]) is retried once.
func TestJoinGreetingRetry(t *testing.T) {
	t.Parallel()
	w := newWorld(t, func(c *config.Config) { c.Voice.JoinGreetingWindowSeconds = 10 },
		openaisim.Rule{Name: "silent", Match: openaisim.Match{Endpoint: openaisim.EndpointResponses}, Reply: openaisim.Reply{Skip: true}, Times: 1},
		genRule("Hi everyone!"))
	alice := w.member("alice")
	w.join()
	if err := alice.WaitHeard(w.ctx, w.botID, 10); err != nil {
		t.Fatalf("no greeting: %v", err)
	}
	w.waitLog(`"msg":"stt_pipeline_reply_spoken"`, `"greeting_attempt":2`)
	if w.logs.Count(`"msg":"stt_pipeline_reply_skipped"`, `"greeting_attempt":1`) != 1 {
		t.Error("the silent first attempt was not logged")
	}
	gens := w.osim.RequestsFor(openaisim.EndpointResponses)
	if len(gens) != 2 || !strings.Contains(gens[0].Prompt, "just joined") {
		t.Errorf("greeting requests: %d", len(gens))
	}
}

// TestLeavesWhenAlone: when the last member leaves, the session ends after
// inactivityLeaveSeconds and the bot leaves the channel; the text log
// channel got what was said.
func TestLeavesWhenAlone(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil, genRule("Hello alice."))
	// Below what validation allows in a file (10 s), to keep the test short;
	// set before the session starts reading it.
	w.cfg.Voice.InactivityLeaveSeconds = 1
	w.cfg.Voice.LogChannelID = string(w.text)
	alice := w.member("alice")
	w.join()
	w.osim.QueueTranscripts("hey banter, what's the weather like today?")
	w.play(alice, "hey-banter-weather")
	if _, err := simtest.WaitMessage(w.ctx, w.dsim, func(m discordsim.Message) bool {
		return m.ChannelID == w.text && strings.Contains(m.Content, "Hello alice.")
	}); err != nil {
		t.Fatalf("log channel: %v", err)
	}
	if _, err := simtest.WaitMessage(w.ctx, w.dsim, func(m discordsim.Message) bool {
		return m.ChannelID == w.text && strings.Contains(m.Content, "**alice**: hey banter")
	}); err != nil {
		t.Fatalf("log channel: %v", err)
	}
	alice.Leave()
	if err := w.dsim.LeaveVoice(w.users["alice"], w.vc); err != nil {
		t.Fatal(err)
	}
	w.waitLog(`"msg":"voice_session_end"`, `"reason":"alone"`)
	if ch := w.svc.Channel(string(w.guild)); ch != "" {
		t.Fatalf("still in channel %s after the session ended", ch)
	}
	// The session's own clock: it was alone for inactivityLeaveSeconds before it left.
	if ev := w.logs.Events("voice_session_leave"); len(ev) != 1 || ev[0]["reason"] != "alone" || ev[0]["alone_ms"].(float64) < 1000 {
		t.Errorf("voice_session_leave %v: want alone for at least 1000 ms", ev)
	}
	if n := metricValue(t, w.reg, "banter_voice_session_ends_total", "alone"); n != 1 {
		t.Errorf("session ends (alone) = %v, want 1", n)
	}
	deadline := time.Now().Add(guard)
	for time.Now().Before(deadline) {
		if _, in := w.dsim.VoiceStateOf(w.guild, discordsim.UserID(w.botID)); !in {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Error("the bot's voice state is still in the channel")
}

// TestLogChannelSplitsAndNeverPings: the voice log channel goes through the one sender: a
// transcript longer than Discord's 2,000 characters is split, and an "@everyone" spoken by
// someone pings nobody.
func TestLogChannelSplitsAndNeverPings(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil, genRule("Noted."))
	w.cfg.Voice.LogChannelID = string(w.text)
	alice := w.member("alice")
	w.join()
	long := "hey banter, @everyone should hear this: " + strings.Repeat("blah ", 450)
	w.osim.QueueTranscripts(long)
	w.play(alice, "hey-banter-weather")
	var parts []discordsim.Message
	for len(parts) < 2 {
		m, err := simtest.WaitMessage(w.ctx, w.dsim, func(m discordsim.Message) bool {
			return m.ChannelID == w.text && m.Author == discordsim.UserID(w.botID) && strings.Contains(m.Content, "blah") &&
				!slices.ContainsFunc(parts, func(p discordsim.Message) bool { return p.ID == m.ID })
		})
		if err != nil {
			t.Fatalf("log channel: %d parts of the long line posted: %v", len(parts), err)
		}
		parts = append(parts, m)
	}
	for _, m := range parts {
		if n := utf8.RuneCountInString(m.Content); n > 2000 {
			t.Errorf("log message of %d characters", n)
		}
		if m.MentionEveryone || m.AllowedMentions == nil || len(m.AllowedMentions.Parse) != 0 {
			t.Errorf("log message pings: everyone=%v allowed_mentions=%+v", m.MentionEveryone, m.AllowedMentions)
		}
	}
}

// TestSessionEndsWhenDisconnected: the voice server closes the bot's connection with 4014
// (disconnected: kicked, or the channel is gone). Discord will not take it back on that session,
// so the session ends and says why, instead of sitting deaf in the channel.
func TestSessionEndsWhenDisconnected(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil, genRule("Hello."))
	w.member("alice")
	w.join()
	if err := w.vsim.CloseVoice(w.botID, 4014); err != nil {
		t.Fatal(err)
	}
	w.waitLog(`"msg":"voice_session_leave"`, `"reason":"disconnected"`, `"close_code":4014`)
	w.waitLog(`"msg":"voice_session_end"`, `"reason":"disconnected"`)
	if ch := w.svc.Channel(string(w.guild)); ch != "" {
		t.Errorf("still in voice channel %s after the session ended", ch)
	}
	if n := metricValue(t, w.reg, "banter_voice_session_ends_total", "disconnected"); n != 1 {
		t.Errorf("session ends (disconnected) = %v, want 1", n)
	}
}

package voice_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	discordsim "github.com/banterbot/banter/sim/discord"
	simworld "github.com/banterbot/banter/sim/discord/world"
)

// TestLogChannelRefused: the log channel is one where the bot may not post (a channel overwrite
// denying it Send Messages, in a guild it does not own). Discord's 403 50013 is final: the
// first line is refused, logged once with reason=missing_permissions and the channel, never
// retried, and the session's later lines are not sent; the conversation itself goes on (the
// bot still answers aloud). The session ends only once the second line was handled — dropped
// (voice_log_line_dropped), or posted by a log channel that did not stop — so that no second
// create can be missed for want of time.
func TestLogChannelRefused(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil, genRule("Hello alice."))
	g := w.dsim.CreateGuildOwnedBy("Alice's", w.users["alice"])
	logCh := w.dsim.CreateTextChannel(g, "voice-log")
	deny := simworld.Overwrite{ID: w.botID, Type: simworld.OverwriteMember, Allow: "0", Deny: strconv.FormatUint(simworld.PermSendMessages, 10)}
	if err := w.dsim.SetChannelOverwrite(logCh, deny); err != nil {
		t.Fatal(err)
	}
	w.cfg.Voice.InactivityLeaveSeconds = 1 // below what a file may set, to keep the test short
	w.cfg.Voice.LogChannelID = string(logCh)
	alice := w.member("alice")
	w.join()
	w.osim.QueueTranscripts("hey banter, what's the weather like today?")
	w.play(alice, "hey-banter-weather")
	w.waitLog(`"msg":"voice_log_post_failed"`, `"reason":"missing_permissions"`, `"channel_id":"`+string(logCh)+`"`)
	w.waitLog(`"msg":"stt_pipeline_reply_spoken"`) // its line goes to the log channel too
	creates := func() int {
		n := 0
		for _, q := range w.dsim.RESTLog() {
			if q.Route == discordsim.RouteMessageCreate && strings.Contains(q.Path, "/channels/"+string(logCh)+"/") {
				n++
			}
		}
		return n
	}
	for deadline := time.Now().Add(guard); w.logs.Count(`"msg":"voice_log_line_dropped"`) == 0 && creates() < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) { // a failure guard, not a timing requirement
			t.Fatalf("the second line was neither dropped nor posted")
		}
	}
	alice.Leave()
	if err := w.dsim.LeaveVoice(w.users["alice"], w.vc); err != nil {
		t.Fatal(err)
	}
	w.waitLog(`"msg":"voice_session_end"`)
	if posts := creates(); posts != 1 {
		t.Errorf("%d creates sent to the refusing log channel, want 1", posts)
	}
	if n := w.logs.Count(`"msg":"voice_log_post_failed"`); n != 1 {
		t.Errorf("%d voice_log_post_failed lines, want 1", n)
	}
}

package realtime

import (
	"testing"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/voicesim"
)

// TestServiceRealtimeFollowsMove: voice.mode realtime, native. alice asks the bot in channel
// A and is answered (the session's Responder and its realtime socket start there); a
// moderator moves the bot to channel B, where bob asks and is answered by the same Responder.
// The Responder's lines name the channel the session is in: realtime_reply_requested carries
// A for alice's turn and B for bob's. (Before, the Responder kept the logger it was made with,
// and every line after the move still named A.)
func TestServiceRealtimeFollowsMove(t *testing.T) {
	t.Parallel()
	w := newServiceWorld(t, "native", 0)
	alice := w.member("alice")
	b := w.dsim.CreateVoiceChannel(w.guild, "Elsewhere")
	bobID := w.dsim.CreateUser("bob")
	if err := w.dsim.AddMember(w.guild, bobID); err != nil {
		t.Fatal(err)
	}
	bob, err := w.dsim.JoinVoiceMember(w.ctx, bobID, b, voicesim.MemberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bob.Leave)
	if err := w.svc.Join(w.ctx, string(w.guild), string(w.vc)); err != nil {
		t.Fatal(err)
	}
	w.osim.QueueTranscripts("hey banter, what's the weather like today?")
	if err := alice.PlayPCM(w.ctx, loadSpeech(t, "hey-banter-weather.wav")); err != nil {
		t.Fatal(err)
	}
	if err := alice.WaitHeard(w.ctx, w.botID, 40); err != nil {
		t.Fatalf("alice heard no answer in A: %v", err)
	}
	w.waitLog("realtime_reply_spoken")

	if err := w.dsim.MoveVoice(w.guild, discordsim.UserID(w.botID), b); err != nil {
		t.Fatal(err)
	}
	w.waitLog("voice_connection_restored") // the new channel's connection
	w.osim.QueueTranscripts("hey banter, what's the weather like today?")
	if err := bob.PlayPCM(w.ctx, loadSpeech(t, "hey-banter-weather.wav")); err != nil {
		t.Fatal(err)
	}
	if err := bob.WaitHeard(w.ctx, w.botID, 40); err != nil {
		t.Fatalf("bob heard no answer in B: %v", err)
	}
	reqs := w.logs.Events("realtime_reply_requested")
	if len(reqs) != 2 {
		t.Fatalf("%d realtime_reply_requested, want 2 (alice's in A, bob's in B)", len(reqs))
	}
	if reqs[0]["channel_id"] != string(w.vc) || reqs[1]["channel_id"] != string(b) {
		t.Errorf("realtime_reply_requested channel_id %v then %v, want %s (A) then %s (B)",
			reqs[0]["channel_id"], reqs[1]["channel_id"], w.vc, b)
	}
	if moved := w.waitLog("voice_session_moved"); moved["to"] != string(b) {
		t.Errorf("voice_session_moved %v, want to %s", moved, b)
	}
}

package voice_test

import (
	"context"
	"testing"
	"time"

	discordsim "github.com/banterbot/banter/sim/discord"
)

// TestShutdownDuringJoin: the service shuts down while a join is waiting for Discord (the
// gateway's answers to the bot's op 4 are slowed). Shutdown waits for the join and leaves the
// session it started: the bot is out of the channel, the session ended "shutdown". Before,
// Shutdown left only the sessions it found when it began, so the joining session was left
// behind in the channel.
func TestShutdownDuringJoin(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil, genRule("hi"))
	w.member("alice")
	w.dsim.SetGatewayLatency(2 * time.Second)
	joined := make(chan error, 1)
	go func() { joined <- w.svc.Join(w.ctx, string(w.guild), string(w.vc)) }()
	bot := discordsim.UserID(w.botID)
	for { // the simulator has the bot's op 4; its answers are on their way
		if _, ok := w.dsim.VoiceStateOf(w.guild, bot); ok {
			break
		}
		select {
		case <-w.ctx.Done():
			t.Fatal("the bot's op 4 never reached the simulator")
		case <-time.After(5 * time.Millisecond):
		}
	}
	ctx, cancel := context.WithTimeout(w.ctx, guard)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- w.svc.Shutdown(ctx) }()
	w.waitLog(`"msg":"voice_shutdown"`)
	if err := <-joined; err != nil {
		t.Logf("join: %v", err) // a join that lost the race to Shutdown fails: fine too
	}
	if err := <-shut; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	w.dsim.SetGatewayLatency(0)
	if w.logs.Count(`"msg":"voice_session_start"`) > 0 {
		w.waitLog(`"msg":"voice_session_end"`, `"reason":"shutdown"`)
	}
	for { // the bot's op 4 leaving the channel is processed
		if _, ok := w.dsim.VoiceStateOf(w.guild, bot); !ok {
			break
		}
		select {
		case <-w.ctx.Done():
			t.Fatalf("the bot is still in the voice channel after Shutdown (sessions started: %d)",
				w.logs.Count(`"msg":"voice_session_start"`))
		case <-time.After(10 * time.Millisecond):
		}
	}
}

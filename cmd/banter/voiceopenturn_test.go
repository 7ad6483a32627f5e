package main

import (
	"context"
	"sync"
	"syscall"
	"testing"
	"time"

	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/store"
)

// TestVoiceTurnAnsweredAfterKill9: alice, in the voice channel, types !join and asks the bot a
// question by voice; the model holds the reply. `banter run` is killed with SIGKILL once the
// turn is recorded open, and started again on the same database: the new process rejoins,
// takes the open turn up (voice_turn_recovered result=requeued) and answers it, and alice hears
// the answer without asking again. The same after a SIGTERM (voice_turn_left_open). Without
// durable voice turns the question was lost with the process.
func TestVoiceTurnAnsweredAfterKill9(t *testing.T) {
	t.Parallel() // an independent end-to-end test: see "Parallel tests" in shared_test.go
	ctx := context.Background()
	// log.level debug: the test waits for the record's write (voice_open_turn_kept) to kill.
	r := newRejoinBot(t, ctx, "log:\n  level: debug\n", nil)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	member := r.aliceIn(t, ctx, r.vc)
	bot := string(r.dsim.BotID())
	speech := voiceQuestionPCM(t)

	r.command(t, ctx, "!join", "Joined <#"+string(r.vc)+">.")
	session := r.botVoiceSession(t, ctx, r.guild, r.vc, "")

	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		// The reply's generation hangs until the process ends; its arrival is signalled.
		arrived := make(chan struct{})
		var once sync.Once
		hold := openaisim.Rule{Name: "hold", Times: 1, Fault: openaisim.Fault{Timeout: true},
			Match:   openaisim.Match{Endpoint: openaisim.EndpointResponses, Stream: openaisim.Bool(true)},
			Respond: func(openaisim.Request) openaisim.Reply { once.Do(func() { close(arrived) }); return openaisim.Reply{} }}
		if err := r.osim.AddRule(hold); err != nil {
			t.Fatal(err)
		}
		off := r.logs.Len()
		if err := member.PlayPCM(wctx, speech); err != nil {
			t.Fatal(err)
		}
		g, gcancel := guard(ctx)
		select {
		case <-arrived: // the bot is answering
		case <-g.Done():
			t.Fatalf("%v: the reply request never reached the model:\n%s", sig, r.logs.String())
		}
		gcancel()
		r.waitLine(t, ctx, off, 1, "voice_open_turn_kept", nil)
		var turnID string
		for _, line := range r.logs.since(off) {
			if line.msg() == "voice_open_turn_kept" {
				turnID = line.str("turn_id")
			}
		}
		heard := len(member.Heard(bot))

		end := r.logs.Len()
		off = r.restart(t, ctx, sig)
		if sig == syscall.SIGTERM {
			r.waitLine(t, ctx, end, 1, "voice_turn_left_open", map[string]string{"turn_id": turnID, "transcript": voiceQuestion})
		}
		r.waitLine(t, ctx, off, 1, "voice_rejoin", map[string]string{"result": "rejoined", "channel_id": string(r.vc)})
		session = r.botVoiceSession(t, ctx, r.guild, r.vc, session)
		r.waitLine(t, ctx, off, 1, "voice_turn_recovered", map[string]string{"result": "requeued", "turn_id": turnID,
			"transcript": voiceQuestion, "user_id": string(r.alice)})
		r.waitLine(t, ctx, off, 1, "stt_pipeline_reply_spoken", map[string]string{"turn_id": "r-" + turnID, "transcript": voiceQuestion})
		if err := member.WaitHeard(wctx, bot, heard+25); err != nil {
			t.Fatalf("%v: alice did not hear the answer to her question: %v\n%s", sig, err, r.logs.String())
		}
		// Answered: the record is gone (the next start finds nothing to take).
		r.waitLine(t, ctx, off, 1, "voice_open_turn_dropped", map[string]string{"turn_id": "r-" + turnID})
	}
	// Stopped again, the store holds no open turn: the answered one was settled.
	if err := r.end(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, r.storeDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if left, ok, err := st.TakeOpenVoiceTurn(ctx, string(r.guild)); err != nil || ok {
		t.Errorf("after the answers and a stop, an open turn is left: %+v %v %v", left, ok, err)
	}
}

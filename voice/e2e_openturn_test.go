package voice_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/store"
)

// heldGen is a generation rule that never answers (the client gives up, or the reply is cut);
// arrived is closed when its request came in.
func heldGen() (openaisim.Rule, <-chan struct{}) {
	arrived := make(chan struct{})
	var once sync.Once
	return openaisim.Rule{Name: "held", Times: 1, Fault: openaisim.Fault{Timeout: true},
		Match:   openaisim.Match{Endpoint: openaisim.EndpointResponses, Stream: openaisim.Bool(true)},
		Respond: func(openaisim.Request) openaisim.Reply { once.Do(func() { close(arrived) }); return openaisim.Reply{} }}, arrived
}

// takeOpen takes the guild's open voice turn from the store.
func takeOpen(t *testing.T, st store.OpenVoiceTurns, guild string) (store.OpenVoiceTurn, bool) {
	t.Helper()
	rec, ok, err := st.TakeOpenVoiceTurn(context.Background(), guild)
	if err != nil {
		t.Fatal(err)
	}
	return rec, ok
}

// TestOpenTurnRecord: the utterance the bot answers is recorded open while it answers (its
// turn, member, channel and transcript) and the record goes when the reply has ended, or when
// the session is left; a shutdown keeps it for the next process (voice_turn_left_open).
func TestOpenTurnRecord(t *testing.T) {
	t.Parallel()
	const question = "hey banter, what's the weather like today?"
	for _, tt := range []struct {
		name string
		held bool                         // the model holds the reply
		end  func(t *testing.T, w *world) // what ends the turn
		kept bool
	}{
		{"answered", false, func(t *testing.T, w *world) {
			w.waitLog(`"msg":"stt_pipeline_reply_spoken"`)
			w.waitLog(`"msg":"voice_open_turn_dropped"`)
		}, false},
		{"left", true, func(t *testing.T, w *world) {
			if err := w.svc.Leave(w.ctx, string(w.guild)); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"shutdown", true, func(t *testing.T, w *world) {
			ctx, cancel := context.WithTimeout(w.ctx, guard)
			defer cancel()
			if err := w.svc.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			w.waitLog(`"msg":"voice_turn_left_open"`, `"transcript":"`+question+`"`)
		}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := tempStore(t)
			rule, arrived := heldGen()
			if !tt.held {
				rule, arrived = genRule("It is sunny."), nil
			}
			w := newWorldWith(t, worldOptions{open: st}, nil, rule)
			alice := w.member("alice")
			w.join()
			w.osim.QueueTranscripts(question)
			w.play(alice, "hey-banter-weather")
			if arrived != nil {
				select {
				case <-arrived:
				case <-w.ctx.Done():
					t.Fatal("the reply request never reached the model")
				}
			}
			w.waitLog(`"msg":"voice_open_turn_kept"`)
			tt.end(t, w)
			rec, ok := takeOpen(t, st, string(w.guild))
			if ok != tt.kept {
				t.Fatalf("after %s: record %+v (%v), want kept %v", tt.name, rec, ok, tt.kept)
			}
			if ok && (rec.Transcript != question || rec.SpeakerID != string(w.users["alice"]) || rec.ChannelID != string(w.vc) ||
				!strings.HasPrefix(rec.TurnID, "u") || rec.SpeakerName == "" || rec.HeardAt.IsZero()) {
				t.Errorf("record kept at shutdown: %+v", rec)
			}
		})
	}
}

// TestOpenTurnRecovered: a session that starts takes its guild's open turn: one older than
// 2 min is only logged (expired), one of another channel too (channel_changed), one whose
// member is not in the channel enters the conversation without an answer (in_conversation: the
// next prompt shows it), and one whose member is there is answered (requeued); each counted.
func TestOpenTurnRecovered(t *testing.T) {
	t.Parallel()
	st := tempStore(t)
	w := newWorldWith(t, worldOptions{open: st}, nil, genRule("It is a quarter past ten."))
	alice := w.member("alice")
	ctx := context.Background()
	session := func(rec store.OpenVoiceTurn, result string) {
		t.Helper()
		rec.GuildID = string(w.guild)
		if err := st.KeepOpenVoiceTurn(ctx, rec); err != nil {
			t.Fatal(err)
		}
		w.join()
		w.waitLog(`"msg":"voice_turn_recovered"`, `"result":"`+result+`"`, `"turn_id":"`+rec.TurnID+`"`)
		if n := metricValue(t, w.reg, "banter_voice_turns_recovered_total", result); n != 1 {
			t.Errorf("recovered (%s) = %v, want 1", result, n)
		}
	}
	leave := func() {
		t.Helper()
		if err := w.svc.Leave(w.ctx, string(w.guild)); err != nil {
			t.Fatal(err)
		}
	}
	alices := func(id, text string, ago time.Duration) store.OpenVoiceTurn {
		return store.OpenVoiceTurn{ChannelID: string(w.vc), TurnID: id, SpeakerID: string(w.users["alice"]),
			SpeakerName: "alice", Transcript: text, Addressed: true, Audio: time.Second, HeardAt: time.Now().Add(-ago)}
	}

	session(alices("u1-1", "hey banter, is it raining?", 3*time.Minute), "expired")
	leave()
	other := alices("u1-2", "hey banter, is it snowing?", 0)
	other.ChannelID = "1234"
	session(other, "channel_changed")
	leave()
	bobs := store.OpenVoiceTurn{ChannelID: string(w.vc), TurnID: "u2-1", SpeakerID: string(w.users["bob"]), SpeakerName: "bob",
		Transcript: "banter, remember the match on sunday", HeardAt: time.Now().Add(-10 * time.Second)}
	session(bobs, "in_conversation")
	w.osim.QueueTranscripts("hey banter, what's the weather like today?")
	w.play(alice, "hey-banter-weather")
	w.waitLog(`"msg":"stt_pipeline_reply_spoken"`, `"transcript":"hey banter, what's the weather like today?"`)
	gens := w.osim.RequestsFor(openaisim.EndpointResponses)
	if len(gens) != 1 || !strings.Contains(gens[0].Prompt, "bob: banter, remember the match on sunday") {
		t.Errorf("want one generation, with bob's recovered words in its prompt: %+v", gens)
	}
	leave()

	heard := len(alice.Heard(w.botID))
	session(alices("u1-3", "hey banter, what time is it?", 10*time.Second), "requeued")
	w.waitLog(`"msg":"stt_pipeline_reply_spoken"`, `"turn_id":"r-u1-3"`, `"transcript":"hey banter, what time is it?"`)
	if err := alice.WaitHeard(w.ctx, w.botID, heard+20); err != nil {
		t.Fatalf("alice heard no answer to her recovered question: %v", err)
	}
	for _, drop := range []string{"is it raining", "is it snowing"} {
		if w.logs.Count(`"msg":"stt_pipeline_reply_spoken"`, drop) != 0 {
			t.Errorf("answered a turn that should not be (%s)", drop)
		}
	}
	w.waitLog(`"msg":"voice_open_turn_dropped"`, `"turn_id":"r-u1-3"`) // recorded again while answered, then settled
	if rec, ok := takeOpen(t, st, string(w.guild)); ok {
		t.Errorf("a record left after the answer: %+v", rec)
	}
}

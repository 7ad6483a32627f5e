package voice_test

import (
	"slices"
	"testing"
	"time"

	"github.com/banterbot/banter/sim/discord/voicesim"
)

// TestReplyAudioSameOnSendClock: what a member decodes of a reply is the
// same samples whether the bot paces each frame on its own (the earlier
// path) or sends on the process-wide send clock (discord/voice SendClock,
// frames queued ahead of their slot, one socket and one sendmmsg per
// bucket for all connections).
func TestReplyAudioSameOnSendClock(t *testing.T) {
	var heard [2][]int16
	var stats [2]voicesim.MemberStats // for a failure's message
	for i, mode := range []string{"", "shared"} {
		t.Setenv("BANTER_TEST_SEND_CLOCK", mode)
		w := newWorld(t, nil, genRule("It is sunny and warm today, with a light breeze from the sea."))
		alice := w.member("alice")
		w.join()
		w.osim.QueueTranscripts("hey banter, what's the weather like today?")
		w.play(alice, "hey-banter-weather")
		w.waitLog(`"msg":"stt_pipeline_reply_spoken"`)
		// The reply ended with its silence frames: everything before them
		// has been received.
		for alice.Stats().Silence < 5 {
			select {
			case <-w.ctx.Done():
				t.Fatalf("mode %q: the reply's silence frames never came", mode)
			case <-time.After(10 * time.Millisecond):
			}
		}
		heard[i], stats[i] = alice.HeardPCM(w.botID), alice.Stats()
		if len(heard[i]) == 0 {
			t.Fatalf("mode %q: nothing heard", mode)
		}
	}
	if len(heard[0]) != len(heard[1]) {
		t.Fatalf("paced per connection: %d samples; on the send clock: %d (alice received %+v, then %+v)",
			len(heard[0]), len(heard[1]), stats[0], stats[1])
	}
	if !slices.Equal(heard[0], heard[1]) {
		j := 0
		for j = range heard[0] {
			if heard[0][j] != heard[1][j] {
				break
			}
		}
		t.Fatalf("decoded samples differ from sample %d of %d", j, len(heard[0]))
	}
}

// TestBargeInPlayedIsHeard: what the bot records as played when a member
// interrupts it (the played_ms of the reply's event, what the timeline keeps
// and a realtime item is truncated at) is exactly what the member heard, on
// the per-connection pacer and on the send clock, where SendOpus queues
// frames up to 200 ms ahead of their slots and the barge-in drops them unsent.
func TestBargeInPlayedIsHeard(t *testing.T) {
	for _, mode := range []string{"", "shared"} {
		t.Run("clock="+mode, func(t *testing.T) {
			t.Setenv("BANTER_TEST_SEND_CLOCK", mode)
			w, alice, wait := talkOverWeather(t, "[SKIP]")
			defer wait()
			w.waitLog(`"msg":"stt_pipeline_reply_interrupted"`)
			// The spurt's silence frames close what alice hears of the reply;
			// bob's turn is answered with silence, so nothing follows.
			for alice.Stats().Silence < 5 {
				select {
				case <-w.ctx.Done():
					t.Fatal("the interrupted reply's silence frames never came")
				case <-time.After(10 * time.Millisecond):
				}
			}
			w.waitLog(`"msg":"stt_pipeline_reply_skipped"`)
			end := w.logs.Events("stt_pipeline_reply_interrupted")[0]
			atEnd, _ := end["played_ms"].(float64)
			heard := len(alice.Heard(w.botID))
			if int(atEnd) != heard*20 {
				t.Errorf("recorded %v ms played, alice heard %d frames (%d ms)", atEnd, heard, heard*20)
			}
			cutWithin(t, w.logs.Events("voice_barge_in")[0], end, 20*time.Millisecond)
		})
	}
}

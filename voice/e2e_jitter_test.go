package voice_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/sim/discord/voicesim"
)

// TestLateResumeIsNotAnEnd: the network delays a member's packets by varying amounts, and then
// the one that ends a pause by more than the margin the end of turn leaves (60 ms over the
// longest a 700 ms pause is heard). Alice first asks her question in one go while each of her
// packets is held 0–300 ms on its way (voicesim's Jitter, in order): her listener learns how late
// her packets come (the jitter hold, at most 200 ms). Then, the path steady again, she says half the question;
// her client closes the talk spurt (five silence frames) and sends nothing in her 700 ms pause,
// as Discord clients do; and the packet that resumes, with those behind it, is held 160 ms
// (Delay): the pause lasts 860 ms at the bot. The hold keeps her turn open: no bot audio while
// she talks, two answers, each to the whole question, and no false end. Without the hold her
// turn ends at the pause.
func TestLateResumeIsNotAnEnd(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint64{1, 2} {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			t.Parallel()
			first, second := trimSpeech(speech(t, "hey-banter-weather")), trimSpeech(speech(t, "mike-hear-me"))
			stt := sttRules("stt", func(d time.Duration) string {
				if d < audioLen(first)+600*time.Millisecond {
					return halfQuestion
				}
				return "hey banter, what's the weather like in Paris tomorrow?"
			})
			w := newWorld(t, defaultTurns(true, "session"), append(stt, answerRules(halfAnswer)...)...)
			alice := w.member("alice")
			w.join()
			spoken := func(n int) {
				t.Helper()
				for deadline := time.Now().Add(guard); len(w.logs.Events("stt_pipeline_reply_spoken")) < n; time.Sleep(20 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("%d answers, want %d", len(w.logs.Events("stt_pipeline_reply_spoken")), n)
					}
				}
			}
			user := string(w.users["alice"])
			w.vsim.SetFaults(user, voicesim.ToServer, voicesim.Faults{Jitter: 300 * time.Millisecond, Seed: seed})
			if err := alice.PlayPCM(w.ctx, slices.Concat(first, second)); err != nil {
				t.Fatal(err)
			}
			spoken(1)
			w.vsim.SetFaults(user, voicesim.ToServer, voicesim.Faults{})
			heard := len(alice.Heard(w.botID))
			if err := alice.PlayPCM(w.ctx, first); err != nil { // and the five silence frames
				t.Fatal(err)
			}
			// the rest of the 700 ms pause, on her client's 20 ms clock: nothing sent
			pause := time.NewTicker(20 * time.Millisecond)
			for range 700/20 - 5 {
				<-pause.C
			}
			pause.Stop()
			w.vsim.SetFaults(user, voicesim.ToServer, voicesim.Faults{Delay: 160 * time.Millisecond})
			if err := alice.PlayPCM(w.ctx, second); err != nil {
				t.Fatal(err)
			}
			if n := len(alice.Heard(w.botID)) - heard; n != 0 {
				t.Errorf("alice heard %d frames from the bot while she was talking", n)
			}
			spoken(2)
			for _, ev := range w.logs.Events("stt_pipeline_reply_spoken") {
				if !strings.Contains(ev["transcript"].(string), "Paris") || ev["spoken"] != wholeAnswer {
					t.Errorf("spoken %v: want the whole question answered", ev)
				}
			}
			if n, fe := len(w.logs.Events("stt_pipeline_reply_spoken")), len(w.logs.Events("voice_false_end")); n != 2 || fe != 0 {
				t.Errorf("%d answers and %d false ends, want 2 and 0", n, fe)
			}
			if e := w.logs.Events("voice_end_adapted"); len(e) > 0 {
				t.Logf("jitter hold at the pause: %v ms", e[len(e)-1]["jitter_hold_ms"])
			}
		})
	}
}

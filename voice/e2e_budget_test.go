package voice_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/banterbot/banter/budget"
	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/llm"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/store"
)

// TestVoiceQuietAtCap: a guild at its daily cap. A member asks the bot by name: the words are
// still transcribed (voice.sttPipeline.transcription is allowed at the cap, for commands), the
// turn is denied with budget_cap before any model is asked, and nothing is generated or
// spoken.
func TestVoiceQuietAtCap(t *testing.T) {
	t.Parallel()
	w := newWorldWith(t, worldOptions{budget: func(conf func() *config.Config) *budget.Guard {
		st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "spend.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		ledger, _ := store.NewSpendLedger(st)
		g := budget.New(budget.Options{Config: conf, Ledger: ledger})
		// The day's global budget was spent (in DMs, say) before the member speaks.
		g.Spent(context.Background(), llm.Account{Slot: "llm"}, "gpt-5-mini", 1)
		return g
	}}, func(c *config.Config) {
		c.Budget.DailyUSD = 0.5
	}, append(sttRules("stt", func(time.Duration) string { return "banter, can you hear me?" }),
		genRule("Loud and clear."))...)
	alice := w.member("alice")
	w.join()
	w.play(alice, "mike-hear-me")
	ev := w.waitEvent("stt_pipeline_reply_denied")
	if ev["reason"] != "budget_cap" {
		t.Errorf("denied with %v, want budget_cap", ev["reason"])
	}
	transcribed := 0
	for _, r := range w.osim.Requests() {
		switch r.Endpoint {
		case openaisim.EndpointTranscriptions, openaisim.EndpointRealtime, openaisim.EndpointRealtimeTranscription:
			transcribed++
		default:
			t.Errorf("a %s request (%s) at the cap", r.Endpoint, r.Model)
		}
	}
	if transcribed == 0 {
		t.Error("the words were not transcribed at the cap (commands need them)")
	}
}

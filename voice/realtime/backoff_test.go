package realtime

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	openaisim "github.com/banterbot/banter/sim/openai"
)

func TestGiveUpDelay(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		n    int
		want time.Duration
	}{{1, 2 * time.Second}, {2, 4 * time.Second}, {3, 8 * time.Second}, {8, 256 * time.Second}, {9, 5 * time.Minute}, {1000, 5 * time.Minute}} {
		if got := giveUpDelay(2*time.Second, 5*time.Minute, tt.n); got != tt.want {
			t.Errorf("giveUpDelay(%d) = %v, want %v", tt.n, got, tt.want)
		}
	}
	seen := map[time.Duration]bool{}
	for range 1000 {
		d := withJitter(time.Minute)
		if d < 30*time.Second || d > time.Minute {
			t.Fatalf("withJitter(1m) = %v, want within [30s, 1m]", d)
		}
		seen[d] = true
	}
	if len(seen) < 100 {
		t.Errorf("withJitter gave %d distinct delays in 1000 draws", len(seen))
	}
}

// TestGeminiGiveUpBackoff: a close the bridge does not retry (1007 on every turn, from the
// simulator's close fault) makes the Responder back off instead of dialling on every reply: the
// next reply fails at once (ErrBackingOff, counted) with no new connection; once the back-off
// has passed on the Responder's clock a new connection is tried, and the next back-off is
// doubled (with jitter). No test waits for the back-off: the clock is the Responder's.
func TestGeminiGiveUpBackoff(t *testing.T) {
	t.Parallel()
	var skew atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	h := newHarness(t, harnessOptions{strategy: StrategyNative, gemini: true,
		bridge: func(c *Config) { c.Now, c.GiveUpBackoff, c.MaxGiveUpBackoff = now, time.Minute, time.Hour },
		rules:  []openaisim.Rule{{Match: openaisim.Match{Endpoint: openaisim.EndpointGeminiResponse}, Fault: openaisim.Fault{CloseCode: 1007}}}})
	connections := func() int { return len(h.oa.RequestsFor(openaisim.EndpointGeminiLive)) }
	turn := func(wantBackoff bool) {
		t.Helper()
		h.say("hey-banter-weather.wav", "hey banter, what's the weather like today?")
		o := h.reply()
		if errors.Is(o.err, ErrBackingOff) != wantBackoff || o.err == nil {
			t.Fatalf("Respond = %+v, %v; want an error, backing off %v", o.res, o.err, wantBackoff)
		}
	}
	turn(false) // the reply is lost with the 1007 close: the bridge gives up
	waitLogged(t, h, "realtime_gemini_gave_up", 1)
	turn(true)
	if n := connections(); n != 1 {
		t.Fatalf("%d connections: a reply during the back-off dialled", n)
	}
	skew.Add(int64(time.Minute + time.Second)) // past the first back-off (at most 1 min)
	turn(false)
	if n := connections(); n != 2 {
		t.Fatalf("%d connections after the back-off, want a second", n)
	}
	waitLogged(t, h, "realtime_gemini_gave_up", 2)
	turn(true)
	ev := h.logs.Events("realtime_backoff")
	if len(ev) != 2 {
		t.Fatalf("realtime_backoff logs %v, want two", ev)
	}
	for i, bounds := range [][2]time.Duration{{30 * time.Second, time.Minute}, {time.Minute, 2 * time.Minute}} {
		d := time.Duration(ev[i]["retry_in"].(float64))
		if d < bounds[0] || d > bounds[1] || ev[i]["in_a_row"] != float64(i+1) || ev[i]["provider"] != "gemini" {
			t.Errorf("back-off %d: %v; want %d in a row, retry_in within %v", i+1, ev[i], i+1, bounds)
		}
	}
	if got := counterValue(t, h, "banter_voice_realtime_backoff_refused_total"); got != 2 {
		t.Errorf("backoff_refused_total = %v, want 2", got)
	}
	if got := counterValue(t, h, "banter_voice_realtime_gave_up_total"); got != 2 {
		t.Errorf("gave_up_total = %v, want 2", got)
	}
}

// counterValue sums a counter family's series in the harness's registry.
func counterValue(t *testing.T, h *harness, name string) float64 {
	t.Helper()
	mfs, err := h.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

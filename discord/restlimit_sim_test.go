package discord

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
)

// TestRESTShareHoldsAcrossProcesses: three processes of one bot (each its own Shards, HTTP
// client and share of the budget, as three `banter run` processes have) running shards 0-1, 2
// and 3 of 4 all ask for more than the global limit at once — 2.4 times the 50 requests a
// second window allows, every request issued together — against a simulator that counts the
// global limit per bot token in fixed one-second windows, as Discord does. Every request
// succeeds and none is answered 429: each process stays within its share in every window,
// wherever the windows fall.
func TestRESTShareHoldsAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 120 requests through the REST budget (a few seconds)")
	}
	sim := simtest.Serve(t, discordsim.WithShards(4, 4))
	guild := sim.CreateGuild("g")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	procs := []struct {
		ids      string
		requests int
	}{{"0-1", 60}, {"2", 30}, {"3", 30}} // each asks 2.4 times its share per second
	reg := prometheus.NewRegistry()
	metrics := NewRESTMetrics(reg)
	type job struct {
		s  *discordgo.Session
		ch string
	}
	var jobs []job
	total := 0
	for i, p := range procs {
		sh, err := NewShards(ctx, ShardOptions{
			Session: SessionOptions{Token: sim.Token(), APIURL: sim.APIBaseURL(), RESTMetrics: metrics},
			Count:   4, IDs: p.ids, RESTShare: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		// A channel per process keeps the per-route buckets (50 a second per channel) out of
		// the way: the global limit is what is under test.
		ch := string(sim.CreateTextChannel(guild, "p"+strconv.Itoa(i)))
		for range p.requests {
			jobs = append(jobs, job{sh.Any(), ch})
		}
		total += p.requests
	}
	before := len(sim.RESTLog())
	start := make(chan struct{})
	errs := make(chan error, len(jobs))
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Go(func() {
			<-start
			_, err := j.s.Channel(j.ch, discordgo.WithContext(ctx))
			errs <- err
		})
	}
	began := time.Now()
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a request failed: %v", err)
		}
	}
	ok, limited := 0, 0
	for _, r := range sim.RESTLog()[before:] {
		switch r.Status {
		case 200:
			ok++
		case 429:
			limited++
		}
	}
	t.Logf("%d requests asked for at once by 3 processes (shares 25+12+12 a second), served in %.1f s", total, time.Since(began).Seconds())
	if limited != 0 {
		t.Errorf("the simulator answered %d requests 429: the processes together passed the global limit", limited)
	}
	if ok != total {
		t.Errorf("%d requests served, want %d", ok, total)
	}
	for _, scope := range []string{"global", "user", "shared", "unknown"} {
		if n := counterValue(t, metrics.rateLimited.WithLabelValues(scope)); n != 0 {
			t.Errorf("banter_discord_rest_rate_limited_total{scope=%q} = %v, want 0", scope, n)
		}
	}
}

// TestRESTMetricsCountRateLimits: a 429 from Discord is counted by its scope.
func TestRESTMetricsCountRateLimits(t *testing.T) {
	sim := simtest.Serve(t)
	g := sim.CreateGuild("g")
	ch := sim.CreateTextChannel(g, "general")
	metrics := NewRESTMetrics(nil)
	s, err := NewSession(SessionOptions{Token: sim.Token(), APIURL: sim.APIBaseURL(), RESTMetrics: metrics})
	if err != nil {
		t.Fatal(err)
	}
	sim.RateLimitNext(discordsim.RouteAny, 1, 10*time.Millisecond, true)
	sim.RateLimitNext(discordsim.RouteAny, 1, 10*time.Millisecond, false)
	if _, err := s.Channel(string(ch)); err != nil { // discordgo waits and retries both
		t.Fatal(err)
	}
	for scope, want := range map[string]float64{"global": 1, "user": 1, "shared": 0} {
		if got := counterValue(t, metrics.rateLimited.WithLabelValues(scope)); got != want {
			t.Errorf("rate limited{scope=%q} = %v, want %v", scope, got, want)
		}
	}
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

package discord_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/banterbot/banter/discord"
	"github.com/banterbot/banter/internal/logbuf"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
)

// waitLog returns the first line of logs holding every fragment, once there is one; it checks
// again after every write.
func waitLog(t *testing.T, logs *logbuf.Buffer, fragments ...string) string {
	t.Helper()
	guard := time.After(15 * time.Second) // a failure guard, not a measure
	for {
		changed := logs.Changed()
		for _, line := range strings.Split(logs.String(), "\n") {
			if line != "" && containsAll(line, fragments) {
				return line
			}
		}
		select {
		case <-changed:
		case <-guard:
			t.Fatalf("no log line with %q in:\n%s", fragments, logs.String())
			return ""
		}
	}
}

func containsAll(s string, fragments []string) bool {
	for _, f := range fragments {
		if !strings.Contains(s, f) {
			return false
		}
	}
	return true
}

// TestGatewayMonitor: disconnects are logged and counted with the server's close code;
// resumes and discordgo's re-identify after op 9 are logged and counted.
func TestGatewayMonitor(t *testing.T) {
	sim := simtest.Serve(t)
	sess, err := discord.NewSession(discord.SessionOptions{Token: sim.Token(), APIURL: sim.APIBaseURL()})
	if err != nil {
		t.Fatal(err)
	}
	logs := &logbuf.Buffer{}
	reg := prometheus.NewRegistry()
	mon := discord.NewGatewayMonitor(slog.New(slog.NewJSONHandler(logs, nil)), reg)
	detach := mon.Attach(sess)
	defer detach()
	if err := sess.Open(); err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	waitLog(t, logs, `"msg":"gateway_ready"`, `"reidentify":false`)

	// Each fault waits for the connection's first heartbeat: see simtest.WaitHeartbeat.
	simtest.WaitHeartbeat(t, sim)
	if err := sim.CloseGateway(discordsim.CloseUnknownError); err != nil {
		t.Fatal(err)
	}
	waitLog(t, logs, `"msg":"gateway_disconnected"`, `"close_code":4000`)
	if _, err := simtest.WaitGateway(ctx, sim, discordsim.GatewayResumed, 1); err != nil {
		t.Fatal(err)
	}
	waitLog(t, logs, `"msg":"gateway_resumed"`)
	waitLog(t, logs, `"msg":"gateway_connected"`, `"reconnect":true`)

	simtest.WaitHeartbeat(t, sim)
	if err := sim.ForceInvalidSession(false); err != nil {
		t.Fatal(err)
	}
	waitLog(t, logs, `"msg":"gateway_ready"`, `"reidentify":true`)

	for _, c := range []struct {
		event, code string
	}{{"disconnected", "4000"}, {"resumed", "0"}, {"reidentified", "0"}, {"reconnected", "0"}, {"ready", "0"}} {
		if got := counter(t, reg, c.event, c.code); got < 1 {
			t.Errorf("banter_gateway_events_total{event=%q,close_code=%q} = %v, want >= 1", c.event, c.code, got)
		}
	}
}

// counter reads banter_gateway_events_total{event,close_code} from reg.
func counter(t *testing.T, reg *prometheus.Registry, event, code string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "banter_gateway_events_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["event"] == event && labels["close_code"] == code {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

package llm

import (
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
	"github.com/prometheus/client_golang/prometheus"
)

// checkGoroutines fails the test if goroutines started during it are still
// running shortly after it (and its later-registered cleanups) ended. Call
// it first in a test so its cleanup runs last.
func checkGoroutines(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(3 * time.Second)
		for {
			n := runtime.NumGoroutine()
			if n <= before {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<16)
				buf = buf[:runtime.Stack(buf, true)]
				t.Errorf("goroutine leak: %d before, %d after\n%s", before, n, buf)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// testEnv is a simulator plus a client pointed at it.
type testEnv struct {
	sim     *openaisim.Server
	client  *Client
	reg     *prometheus.Registry
	metrics *Metrics
}

// newEnv starts a simulator with rules and a client with opts (BaseURL,
// HTTPClient and Metrics are filled in).
func newEnv(t *testing.T, opts Options, rules ...openaisim.Rule) *testEnv {
	t.Helper()
	checkGoroutines(t)
	sim := openaitest.Serve(t, openaisim.WithRules(rules...), openaisim.WithAPIKey("sk-test"))
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	reg := prometheus.NewRegistry()
	if opts.MaxRetries == 0 {
		opts.MaxRetries = DefaultMaxRetries // tests say -1 for none
	}
	opts.BaseURL = sim.BaseURL()
	opts.APIKey = "sk-test"
	opts.HTTPClient = &http.Client{Transport: tr}
	opts.Metrics = NewMetrics(reg)
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return &testEnv{sim: sim, client: c, reg: reg, metrics: opts.Metrics}
}

// counter returns the summed value of the counters (or histogram sample
// counts) in the env's registry whose labels include the given ones.
func (e *testEnv) counter(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := e.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metric:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if want, ok := labels[lp.GetName()]; ok && want != lp.GetValue() {
					continue metric
				}
			}
			if m.GetCounter() != nil {
				sum += m.GetCounter().GetValue()
			}
			if m.GetHistogram() != nil {
				sum += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return sum
}

func last[T any](t *testing.T, s []T) T {
	t.Helper()
	if len(s) == 0 {
		t.Fatal("nothing recorded")
	}
	return s[len(s)-1]
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

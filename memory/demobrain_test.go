package memory

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/llm"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
	"github.com/banterbot/banter/store"
)

// TestDemoBrainExtraction: the OpenAI simulator's demo brain (what the playground runs on)
// answers the real Extractor in the format this package's parser accepts: its facts are
// stored, a correction retires the fact it names by number, a repeat merges, small talk adds
// nothing, and no answer is refused as invalid.
func TestDemoBrainExtraction(t *testing.T) {
	cfg := config.Default()
	cfg.Memory.Enabled = true
	cfg.Memory.BatchMessages = 2
	cfg.Memory.QuietSeconds = 86400 // batches close by size or Flush only
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "b.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	sim := openaitest.Serve(t, openaisim.WithRules(openaisim.DemoRules()...))
	client, err := llm.New(llm.Options{BaseURL: sim.BaseURL(), APIKey: "sk", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	metrics := NewMetrics(reg)
	ex, err := New(Options{Config: func() *config.Config { return cfg }, Store: st, Model: client, Metrics: metrics})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close(context.Background()) })
	base, n := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC), 0
	say := func(author, name, content string) {
		t.Helper()
		n++
		m := store.Message{ID: strconv.Itoa(100 + n), ChannelID: "c1", GuildID: "g1", AuthorID: author, AuthorName: name,
			Content: content, CreatedAt: base.Add(time.Duration(n) * time.Minute)}
		if err := st.SaveMessage(context.Background(), m); err != nil {
			t.Fatal(err)
		}
		ex.Observe(context.Background(), m)
	}
	facts := func(history bool) []store.Fact {
		t.Helper()
		fs, err := st.Facts(context.Background(), store.FactQuery{GuildID: "g1", History: history})
		if err != nil {
			t.Fatal(err)
		}
		return fs
	}
	statements := func(fs []store.Fact) string {
		var out []string
		for _, f := range fs {
			if f.Current() {
				out = append(out, f.Statement)
			}
		}
		return strings.Join(out, "; ")
	}

	say("u1", "sam", "I have a cat named Miso")
	say("u2", "alice", "I live in Lyon")
	ex.Flush()
	if got := statements(facts(false)); !strings.Contains(got, "sam has a cat named Miso") || !strings.Contains(got, "alice lives in Lyon") {
		t.Fatalf("after the first batch: %q", got)
	}
	say("u2", "alice", "actually I moved to Paris")
	say("u1", "sam", "I have a cat named Miso, did I say?")
	say("u1", "sam", "I have a cat named Miso.")
	say("u1", "sam", "lol nice weather")
	ex.Flush()
	all := facts(true)
	if got := statements(all); strings.Contains(got, "Lyon") || !strings.Contains(got, "alice lives in Paris") || strings.Count(got, "Miso") != 1 {
		t.Errorf("after the correction and the repeat: %q", got)
	}
	var lyon *store.Fact
	for i := range all {
		if all[i].Statement == "alice lives in Lyon" {
			lyon = &all[i]
		}
	}
	if lyon == nil || lyon.Current() || lyon.SupersededBy == 0 {
		t.Errorf("the corrected fact is not kept as history: %+v", lyon)
	}
	for _, f := range all {
		if f.Statement == "sam has a cat named Miso" && len(f.SourceIDs) != 2 {
			t.Errorf("the repeat did not merge its source: %+v", f)
		}
	}
	if got := extractions(t, reg, "invalid"); got != 0 {
		t.Errorf("%v extractions refused as invalid", got)
	}
	if got := extractions(t, reg, "ok"); got != 3 {
		t.Errorf("%v extractions ok, want 3", got)
	}
}

// extractions reads banter_memory_extractions_total{outcome} from reg.
func extractions(t *testing.T, reg *prometheus.Registry, outcome string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "banter_memory_extractions_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" && l.GetValue() == outcome {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/banterbot/banter/audio"
	"github.com/banterbot/banter/budget"
	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/discord"
	"github.com/banterbot/banter/discord/dave"
	"github.com/banterbot/banter/discord/post"
	dvoice "github.com/banterbot/banter/discord/voice"
	"github.com/banterbot/banter/llm"
	llmrt "github.com/banterbot/banter/llm/realtime"
	"github.com/banterbot/banter/memory"
	"github.com/banterbot/banter/metrics"
	"github.com/banterbot/banter/store"
	"github.com/banterbot/banter/store/guildwatch"
	"github.com/banterbot/banter/text"
	"github.com/banterbot/banter/voice"
	"github.com/banterbot/banter/voice/realtime"
)

var updateCatalogue = flag.Bool("update-metrics-doc", false, "rewrite the generated table in docs/metrics.md")

// describing is a Registerer that registers on reg and remembers every
// metric description, including vectors that have no series yet (which
// Gather would not show).
type describing struct {
	prometheus.Registerer
	descs []*prometheus.Desc
}

func (d *describing) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc, 64)
	go func() { c.Describe(ch); close(ch) }()
	for desc := range ch {
		d.descs = append(d.descs, desc)
	}
	return d.Registerer.Register(c)
}

func (d *describing) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := d.Register(c); err != nil {
			panic(err)
		}
	}
}

var descRE = regexp.MustCompile(`fqName: "([^"]+)", help: "((?:[^"\\]|\\.)*)",(?: unit: "[^"]*",)? constLabels: \{([^}]*)\}, variableLabels: \{([^}]*)\}`)

// constLabelRE reads the names of a description's constant labels (provider="gemini").
var constLabelRE = regexp.MustCompile(`(\w+)="`)

// catalogue builds the registry banter run builds (every package's metrics)
// and renders one Markdown table row per banter_* metric.
func catalogue(t *testing.T) []string {
	t.Helper()
	reg := &describing{Registerer: metrics.NewRegistry("test")}
	decision.NewMetrics(reg)
	llm.NewMetrics(reg)
	llm.NewMeter(nil, nil, reg)
	budget.NewMetrics(reg)
	budget.RegisterGauges(reg, budget.New(budget.Options{}))
	text.NewMetrics(reg)
	memory.NewMetrics(reg)
	voice.NewMetrics(reg)
	dvoice.NewMetrics(reg)
	audio.NewMetrics(reg)
	dave.NewMetrics(reg)
	// The realtime families are registered per provider (banter run registers one of them).
	realtime.NewMetricsFor(reg, realtime.ProviderOpenAI)
	realtime.NewMetricsFor(reg, realtime.ProviderGemini)
	llmrt.NewMetricsFor(reg, "openai")
	llmrt.NewMetricsFor(reg, "gemini")
	post.NewMetrics(reg)
	discord.NewGatewayMonitor(nil, reg)
	discord.NewRESTMetrics(reg)
	store.Instrument(nil, reg)
	guildwatch.NewMetrics(reg)
	metrics.RegisterReady(reg, nil)
	config.NewReloadMetrics(reg)
	registerLibopusInfo(reg)
	var rows []string
	for _, d := range reg.descs {
		m := descRE.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("cannot read %s", d)
		}
		if !strings.HasPrefix(m[1], "banter_") {
			continue
		}
		var names []string
		for _, c := range constLabelRE.FindAllStringSubmatch(m[3], -1) {
			names = append(names, c[1])
		}
		if m[4] != "" {
			names = append(names, strings.Split(m[4], ",")...)
		}
		labels := "—"
		if len(names) > 0 {
			labels = "`" + strings.Join(names, "`, `") + "`"
		}
		help := strings.ReplaceAll(strings.ReplaceAll(m[2], `\"`, `"`), "|", `\|`)
		rows = append(rows, fmt.Sprintf("| `%s` | %s | %s |", m[1], labels, help))
	}
	slices.Sort(rows)
	rows = slices.Compact(rows) // one row per family, whichever provider registered it
	if len(rows) < 40 {
		t.Fatalf("only %d banter metrics found", len(rows))
	}
	return rows
}

const (
	catalogueBegin = "<!-- BEGIN GENERATED: go test ./cmd/banter -run TestMetricsCatalogue -update-metrics-doc -->"
	catalogueEnd   = "<!-- END GENERATED -->"
)

// TestMetricsCatalogue: docs/metrics.md lists exactly the metrics banter
// registers, with their labels and help, so the catalogue cannot drift.
func TestMetricsCatalogue(t *testing.T) {
	rows := catalogue(t)
	want := catalogueBegin + "\n| metric | labels | meaning |\n|---|---|---|\n" + strings.Join(rows, "\n") + "\n" + catalogueEnd
	raw, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, catalogueBegin), strings.Index(doc, catalogueEnd)
	if i < 0 || j < i {
		t.Fatalf("docs/metrics.md lacks the generated section markers")
	}
	got := doc[i : j+len(catalogueEnd)]
	if got == want {
		return
	}
	if *updateCatalogue {
		if err := os.WriteFile("../../docs/metrics.md", []byte(doc[:i]+want+doc[j+len(catalogueEnd):]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	gotRows := strings.Split(got, "\n")
	for _, r := range rows {
		if !slices.Contains(gotRows, r) {
			t.Errorf("docs/metrics.md lacks or differs on:\n%s", r)
		}
	}
	for _, r := range gotRows {
		if strings.HasPrefix(r, "| `") && !slices.Contains(rows, r) {
			t.Errorf("docs/metrics.md lists a metric banter does not register (or differently):\n%s", r)
		}
	}
	t.Error("run: go test ./cmd/banter -run TestMetricsCatalogue -update-metrics-doc")
}

package metrics

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDashboardUsesRealMetrics keeps deploy/grafana/banter.json in step with the code: it must be
// valid JSON and every banter_* metric its queries use must be defined in the Go sources. The
// same holds for every banter_* name in deploy/prometheus/alerts.yml (expressions and runbooks).
func TestDashboardUsesRealMetrics(t *testing.T) {
	raw, err := os.ReadFile("../deploy/grafana/banter.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("dashboard is not valid JSON: %v", err)
	}
	var sources strings.Builder
	filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			b, _ := os.ReadFile(path)
			sources.Write(b)
		}
		return nil
	})
	name := regexp.MustCompile(`banter_[a-z_]+`)
	seen := 0
	for _, p := range dash.Panels {
		for _, target := range p.Targets {
			for _, m := range name.FindAllString(target.Expr, -1) {
				seen++
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m, "_bucket"), "_count"), "_sum")
				if !strings.Contains(sources.String(), `"`+base+`"`) {
					t.Errorf("dashboard queries %s, which no Go source defines", m)
				}
			}
		}
	}
	if seen < 20 {
		t.Errorf("dashboard references only %d banter metrics", seen)
	}
	alerts, err := os.ReadFile("../deploy/prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	inAlerts := name.FindAllString(string(alerts), -1)
	for _, m := range inAlerts {
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m, "_bucket"), "_count"), "_sum")
		if !strings.Contains(sources.String(), `"`+base+`"`) {
			t.Errorf("alerts.yml names %s, which no Go source defines", m)
		}
	}
	if len(inAlerts) < 15 {
		t.Errorf("alerts.yml references only %d banter metrics", len(inAlerts))
	}
}

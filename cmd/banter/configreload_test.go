package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/sim/openai/openaitest"
)

// TestRunConfigReloadCounted edits the config file of a running `banter run` as an admin would
// (an editor saving over it): a bad value is refused naming the field and the allowed range, the
// running config stays, and /metrics says so (banter_config_reloads_total{result="rejected"},
// banter_config_last_reload_successful 0), not only the log; the corrected file applies live (a
// new alias addresses the bot at once) and the gauge is back to 1; saving it again unchanged is
// logged and counted as such.
func TestRunConfigReloadCounted(t *testing.T) {
	dsim, ch, alice, cfgPath := newRunWorld(t, "bot:\n  aliases: [bant]\n")
	base, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx, logs := runLoggedIn(t, dsim, openaitest.Serve(t), cfgPath)
	scrape := func() string { return httpGet(t, "http://"+metricsAddr(logs.String())+"/metrics") }
	if body := scrape(); !strings.Contains(body, "banter_config_last_reload_successful 1") ||
		!strings.Contains(body, `banter_config_reloads_total{result="rejected"} 0`) {
		t.Errorf("at start, /metrics lacks a successful load and zero rejections:\n%s", metricLines(body, "banter_config_"))
	}

	// The watch may not be in place yet as the bot logs in: save again until the reload is seen.
	for !strings.Contains(logs.String(), `"msg":"config_reload_rejected"`) {
		saveAs(t, cfgPath, strings.Replace(string(base), "activity:\n", "activity:\n  replyLevelInitiative: 150\n", 1))
		select {
		case <-ctx.Done():
			t.Fatalf("the edit was never reloaded:\n%s", logs.String())
		case <-time.After(300 * time.Millisecond):
		}
	}
	line := waitLogLine(ctx, t, logs, `"msg":"config_reload_rejected"`)
	if !strings.Contains(line, "activity.replyLevelInitiative: 150 is out of range (allowed 0 to 100)") {
		t.Errorf("the rejection does not name the field and its range: %s", line)
	}
	body := scrape()
	if !strings.Contains(body, "banter_config_last_reload_successful 0") || strings.Contains(body, `banter_config_reloads_total{result="rejected"} 0`) {
		t.Errorf("a rejected edit does not show in /metrics:\n%s", metricLines(body, "banter_config_"))
	}

	saveAs(t, cfgPath, strings.Replace(string(base), "[bant]", "[bant, zed]", 1))
	waitLogLine(ctx, t, logs, `"msg":"config_reloaded"`)
	body = scrape()
	if !strings.Contains(body, "banter_config_last_reload_successful 1") || strings.Contains(body, `banter_config_reloads_total{result="applied"} 0`) {
		t.Errorf("the corrected file's reload does not show in /metrics:\n%s", metricLines(body, "banter_config_"))
	}
	asked, err := dsim.Post(ctx, alice, ch, "zed, are you there?")
	if err != nil {
		t.Fatal(err)
	}
	waitLogLine(ctx, t, logs, `"msg":"reply_admission"`, `"reason":"alias_address"`, string(asked.ID))

	saveAs(t, cfgPath, strings.Replace(string(base), "[bant]", "[bant, zed]", 1))
	waitLogLine(ctx, t, logs, `"msg":"config_reload_unchanged"`)
	if body := scrape(); strings.Contains(body, `banter_config_reloads_total{result="unchanged"} 0`) {
		t.Errorf("an unchanged save is not counted:\n%s", metricLines(body, "banter_config_"))
	}
}

// saveAs replaces the file the way editors save: a new file renamed over it.
func saveAs(t *testing.T, path, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), ".edit-"+filepath.Base(path))
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// metricLines are the lines of a scrape that start with prefix.
func metricLines(body, prefix string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

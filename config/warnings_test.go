package config

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMemoryOutlivesMessagesWarning: with memory on and facts kept longer than the stored
// messages (or for good while messages are pruned), the configuration warns, naming both
// fields and their values; memory off, facts kept no longer, or messages kept for good: none.
func TestMemoryOutlivesMessagesWarning(t *testing.T) {
	for _, c := range []struct {
		name           string
		enabled        bool
		memory, stored int
		want           string // detail fragment; "" for no warning
	}{
		{"defaults, memory on", true, 180, 90, "up to 90 days longer"},
		{"facts kept for good", true, 0, 90, "until someone deletes them"},
		{"memory off", false, 180, 90, ""},
		{"as long as the messages", true, 90, 90, ""},
		{"shorter than the messages", true, 30, 90, ""},
		{"messages kept for good", true, 180, 0, ""},
		{"both for good", true, 0, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := Default()
			cfg.Memory.Enabled, cfg.Memory.RetentionDays, cfg.Store.RetentionDays = c.enabled, c.memory, c.stored
			attrs := onlyWarning(t, cfg.Warnings(), c.want != "")
			if attrs == nil {
				return
			}
			if attrs["warning"] != "memory_outlives_messages" || attrs["memory.retentionDays"] != c.memory ||
				attrs["store.retentionDays"] != c.stored || !strings.Contains(attrs["detail"].(string), c.want) {
				t.Errorf("warning = %v", attrs)
			}
		})
	}
}

// TestReloadLogsWarnings: a reload to a file where facts outlive messages logs config_warning
// (level WARN) with both fields and the values in force (store.* applies at restart), and
// applies the file all the same; a reload that fixes it logs none.
func TestReloadLogsWarnings(t *testing.T) {
	const stored = "store:\n  retentionDays: 30\n"
	path, w, logs := watchFile(t, stored)
	writeFile(t, path, "memory:\n  enabled: true\n  retentionDays: 365\nmemoryLlm:\n  model: m\n"+stored)
	if err := w.Reload(); err != nil {
		t.Fatal(err)
	}
	if w.Current().Memory.RetentionDays != 365 {
		t.Errorf("memory.retentionDays after reload = %d, want 365", w.Current().Memory.RetentionDays)
	}
	warnings := func() []map[string]any {
		var out []map[string]any
		for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
			var ev map[string]any
			if json.Unmarshal([]byte(line), &ev) == nil && ev["msg"] == "config_warning" {
				out = append(out, ev)
			}
		}
		return out
	}
	ws := warnings()
	if len(ws) != 1 || ws[0]["level"] != "WARN" || ws[0]["warning"] != "memory_outlives_messages" ||
		ws[0]["memory.retentionDays"] != float64(365) || ws[0]["store.retentionDays"] != float64(30) {
		t.Fatalf("config_warning events = %v; logs:\n%s", ws, logs.String())
	}
	writeFile(t, path, "memory:\n  enabled: true\n  retentionDays: 30\nmemoryLlm:\n  model: m\n"+stored)
	if err := w.Reload(); err != nil {
		t.Fatal(err)
	}
	if n := len(warnings()); n != 1 {
		t.Errorf("%d config_warning events after a reload that fixed it, want the first one only", n)
	}
}

// TestPauseMayEndTurnWarning: an end silence short enough that the detector may hear a 700 ms
// pause inside a sentence as the end of the turn warns, naming the shortest end silence, its
// value and the detector; the shipped defaults, long enough ends and voice off do not.
func TestPauseMayEndTurnWarning(t *testing.T) {
	for _, c := range []struct {
		name              string
		voice             bool
		detector          string
		silence, complete int
		wantField         string // "" for no warning
		wantMs            int
	}{
		{"defaults", true, "neural", 800, 800, "", 0},
		{"neural at 760", true, "neural", 760, 0, "", 0},
		{"neural at 740", true, "neural", 740, 0, "voice.endpointing.silenceMs", 740},
		{"complete end shorter", true, "neural", 800, 600, "voice.endpointing.completeSilenceMs", 600},
		{"pitch with the default", true, "pitch", 800, 800, "voice.endpointing.silenceMs", 800},
		{"pitch at 900", true, "pitch", 900, 900, "", 0},
		{"energy at 880", true, "energy", 900, 880, "voice.endpointing.completeSilenceMs", 880},
		{"voice off", false, "pitch", 500, 500, "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := Default()
			cfg.Memory.Enabled = false
			cfg.Voice.Enabled = c.voice
			e := &cfg.Voice.Endpointing
			e.Detector, e.SilenceMs, e.CompleteSilenceMs = c.detector, c.silence, c.complete
			attrs := onlyWarning(t, cfg.Warnings(), c.wantField != "")
			if attrs == nil {
				return
			}
			if attrs["warning"] != "pause_may_end_turn" || attrs[c.wantField] != c.wantMs ||
				attrs["voice.endpointing.detector"] != c.detector || !strings.Contains(attrs["detail"].(string), "half a sentence") {
				t.Errorf("warning = %v", attrs)
			}
		})
	}
}

// onlyWarning checks that ws holds one warning (want) or none, and returns that warning's
// key-value pairs as a map (nil for none).
func onlyWarning(t *testing.T, ws [][]any, want bool) map[string]any {
	t.Helper()
	if !want {
		if len(ws) != 0 {
			t.Errorf("warnings = %v, want none", ws)
		}
		return nil
	}
	if len(ws) != 1 {
		t.Fatalf("warnings = %v, want one", ws)
	}
	attrs := map[string]any{}
	for i := 0; i+1 < len(ws[0]); i += 2 {
		attrs[ws[0][i].(string)] = ws[0][i+1]
	}
	return attrs
}

// TestDetectorEndSilence: a document that picks the pitch or energy detector and sets no end
// silence gets PitchEndSilenceMs (and no pause_may_end_turn warning); what it sets is kept.
func TestDetectorEndSilence(t *testing.T) {
	for _, c := range []struct {
		name                   string
		doc                    string
		wantSilence, wantCompl int
		wantWarning            bool
	}{
		{"neural default", "voice:\n  enabled: true\n", 800, 800, false},
		{"pitch, nothing set", "voice:\n  enabled: true\n  endpointing:\n    detector: pitch\n", PitchEndSilenceMs, PitchEndSilenceMs, false},
		{"energy, nothing set", "voice:\n  enabled: true\n  endpointing:\n    detector: energy\n", PitchEndSilenceMs, PitchEndSilenceMs, false},
		{"pitch, silence set", "voice:\n  enabled: true\n  endpointing:\n    detector: pitch\n    silenceMs: 1000\n", 1000, PitchEndSilenceMs, false},
		{"pitch, short silence kept", "voice:\n  enabled: true\n  endpointing:\n    detector: pitch\n    silenceMs: 850\n", 850, PitchEndSilenceMs, true},
		{"pitch, complete set", "voice:\n  enabled: true\n  endpointing:\n    detector: pitch\n    completeSilenceMs: 820\n", PitchEndSilenceMs, 820, true},
		{"pitch, complete off", "voice:\n  enabled: true\n  endpointing:\n    detector: pitch\n    completeSilenceMs: 0\n", PitchEndSilenceMs, 0, false},
		{"pitch, null silence", "voice:\n  enabled: true\n  endpointing:\n    detector: pitch\n    silenceMs: ~\n", PitchEndSilenceMs, PitchEndSilenceMs, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Parse([]byte("memory:\n  enabled: false\n" + c.doc))
			if err != nil {
				t.Fatal(err)
			}
			e := cfg.Voice.Endpointing
			if e.SilenceMs != c.wantSilence || e.CompleteSilenceMs != c.wantCompl {
				t.Errorf("silenceMs, completeSilenceMs = %d, %d; want %d, %d", e.SilenceMs, e.CompleteSilenceMs, c.wantSilence, c.wantCompl)
			}
			if attrs := onlyWarning(t, cfg.Warnings(), c.wantWarning); attrs != nil && attrs["warning"] != "pause_may_end_turn" {
				t.Errorf("warning = %v", attrs)
			}
		})
	}
}

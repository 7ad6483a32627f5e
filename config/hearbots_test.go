package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHearBots: voice.hearBots and voice.hearBotIds parse, default to hearing no bot, and say
// which bots are heard.
func TestHearBots(t *testing.T) {
	const tts, music = "111111111111111111", "222222222222222222"
	tests := []struct {
		name string
		yaml string
		// heard is whether HearsBot says each bot is heard.
		heard map[string]bool
	}{
		{"default", "", map[string]bool{tts: false, music: false}},
		{"hearBots", "voice:\n  hearBots: true\n", map[string]bool{tts: true, music: true}},
		{"hearBotIds", "voice:\n  hearBotIds: [\"" + tts + "\"]\n", map[string]bool{tts: true, music: false}},
		{"both", "voice:\n  hearBots: true\n  hearBotIds: [\"" + tts + "\"]\n", map[string]bool{tts: true, music: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			for id, want := range tt.heard {
				if got := cfg.Voice.HearsBot(id); got != want {
					t.Errorf("HearsBot(%s) = %v, want %v", id, got, want)
				}
			}
		})
	}
}

// TestHearBotsValidation: bad values name the field and what is allowed.
func TestHearBotsValidation(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"not a boolean", "voice:\n  hearBots: sometimes\n",
			[]string{`voice.hearBots (line 2): "sometimes" is not a valid boolean (true or false)`}},
		{"ids not a list", "voice:\n  hearBotIds: \"123456789012345678\"\n",
			[]string{"voice.hearBotIds (line 2): must be a list"}},
		{"id not a snowflake", "voice:\n  hearBotIds: [\"123456789012345678\", \"@jockie\"]\n",
			[]string{`voice.hearBotIds[1]: "@jockie" is not a Discord id (a number such as 123456789012345678, quoted)`}},
		{"empty id", "voice:\n  hearBotIds: [\"\"]\n",
			[]string{`voice.hearBotIds[0]: "" is not a Discord id`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "banter.yaml")
			if err := os.WriteFile(path, []byte(tt.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path, noEnv)
			if err == nil {
				t.Fatal("Load accepted an invalid file")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestHearBotsReloadLive: both settings apply on reload (no restart warning); an invalid id is
// refused and the running configuration stays.
func TestHearBotsReloadLive(t *testing.T) {
	path, w, logs := watchFile(t, "")
	writeFile(t, path, "voice:\n  hearBots: true\n  hearBotIds: [\"123456789012345678\"]\n")
	if err := w.Reload(); err != nil {
		t.Fatal(err)
	}
	if v := w.Current().Voice; !v.HearBots || len(v.HearBotIDs) != 1 {
		t.Errorf("after reload: hearBots %v, hearBotIds %v", v.HearBots, v.HearBotIDs)
	}
	if strings.Contains(logs.String(), "config_reload_needs_restart") {
		t.Errorf("hearBots needs no restart: %s", logs.String())
	}
	writeFile(t, path, "voice:\n  hearBotIds: [dj]\n")
	if err := w.Reload(); err == nil || !strings.Contains(err.Error(), "voice.hearBotIds[0]") {
		t.Errorf("reload of a bad id: %v, want an error naming voice.hearBotIds[0]", err)
	}
	if !w.Current().Voice.HearBots {
		t.Error("a refused reload replaced the running configuration")
	}
}

package control_test

import (
	"strings"
	"testing"

	"github.com/banterbot/banter/sim/discord/control"
)

// TestControlGuildAFK: PATCH /guild sets the guild's AFK channel (by id or name) and timeout,
// answers the settings and sends the bot GUILD_UPDATE; a text channel, an unknown channel or a
// timeout Discord does not offer is refused with nothing changed; null clears the channel.
func TestControlGuildAFK(t *testing.T) {
	f := standalone(t, control.Options{})
	ctl := f["control API"]
	g := botGateway(t, f)
	g.until("GUILD_CREATE", dispatch("GUILD_CREATE"))
	type settings struct {
		AFKChannel string `json:"afk_channel"`
		AFKTimeout int    `json:"afk_timeout"`
		Error      string `json:"error"`
	}
	for _, tc := range []struct {
		body   map[string]any
		status int
	}{
		{map[string]any{"afk_channel": "general"}, 400},
		{map[string]any{"afk_channel": "nowhere"}, 404},
		{map[string]any{"afk_timeout": 61}, 400},
		{map[string]any{"afk_chanel": f["voice channel"]}, 400},
	} {
		var s settings
		if st := call(t, "PATCH", ctl+"/guild", tc.body, &s); st != tc.status || s.Error == "" {
			t.Errorf("PATCH /guild %v: %d %+v, want %d with an error", tc.body, st, s, tc.status)
		}
	}
	var s settings
	if st := call(t, "PATCH", ctl+"/guild", map[string]any{"afk_channel": f["voice channel"], "afk_timeout": 900}, &s); st != 200 ||
		s.AFKChannel != f["voice channel"] || s.AFKTimeout != 900 {
		t.Fatalf("set: %d %+v", st, s)
	}
	if d := g.until("GUILD_UPDATE", dispatch("GUILD_UPDATE")); !strings.Contains(string(d.D), `"afk_channel_id":"`+f["voice channel"]+`"`) {
		t.Errorf("GUILD_UPDATE %s, want afk_channel_id %s", d.D, f["voice channel"])
	}
	if st := call(t, "PATCH", ctl+"/guild", map[string]any{"afk_channel": nil}, &s); st != 200 || s.AFKChannel != "" || s.AFKTimeout != 900 {
		t.Errorf("clear: %d %+v", st, s)
	}
}

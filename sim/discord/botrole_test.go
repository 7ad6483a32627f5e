package discordsim

import "testing"

// TestBotRole: the bot's own role is as Discord shows it: managed, tagged with the bot's id,
// named after it and held by it; other roles carry no tags.
func TestBotRole(t *testing.T) {
	w := newWorld(t)
	own, err := w.sim.CreateBotRole(w.guild)
	if err != nil {
		t.Fatal(err)
	}
	mods, _ := w.sim.CreateRole(w.guild, "mods")
	auth := "Bot " + w.sim.Token()
	var g wireGuild
	rest(t, w.sim, "GET", "/api/v10/guilds/"+string(w.guild), auth, nil, &g)
	found := 0
	for _, r := range g.Roles {
		switch r.ID {
		case own:
			found++
			if !r.Managed || r.Tags == nil || r.Tags.BotID != w.sim.BotID() || !r.Mentionable {
				t.Errorf("bot role = %+v (tags %+v), want managed, mentionable, tags.bot_id %s", r, r.Tags, w.sim.BotID())
			}
		case mods:
			found++
			if r.Managed || r.Tags != nil {
				t.Errorf("mods role = %+v (tags %+v), want neither managed nor tagged", r, r.Tags)
			}
		}
	}
	if found != 2 {
		t.Errorf("guild roles %+v: want the bot's role and mods", g.Roles)
	}
	var m wireMember
	rest(t, w.sim, "GET", "/api/v10/guilds/"+string(w.guild)+"/members/"+string(w.sim.BotID()), auth, nil, &m)
	held := false
	for _, r := range m.Roles {
		held = held || r == own
	}
	if !held {
		t.Errorf("the bot's member roles %v lack its own role %s", m.Roles, own)
	}
}

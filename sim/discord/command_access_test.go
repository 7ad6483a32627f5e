package discordsim

import (
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/sim/discord/world"
)

// TestCommandDefaultMemberPermissions: a command registered by discordgo with
// default_member_permissions (sent as the string "32", Manage Server) is stored and listed
// with it, and a member is offered it (InvokeCommand) as Discord's client would: only with
// Manage Server or Administrator, unless the guild's overrides say otherwise.
func TestCommandDefaultMemberPermissions(t *testing.T) {
	w := newWorld(t)
	dg, err := discordgo.New("Bot " + w.sim.Token())
	if err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse(w.sim.APIBaseURL())
	dg.Client = &http.Client{Transport: rewrite{base}, Timeout: 10 * time.Second}
	app := string(w.sim.ApplicationID())
	manage := int64(discordgo.PermissionManageGuild)
	if _, err := dg.ApplicationCommandBulkOverwrite(app, "", []*discordgo.ApplicationCommand{
		{Name: "spend", Description: "Spend", DefaultMemberPermissions: &manage},
		{Name: "ping", Description: "Ping!"},
	}); err != nil {
		t.Fatal(err)
	}
	listed, err := dg.ApplicationCommands(app, "")
	if err != nil || len(listed) != 2 || listed[0].DefaultMemberPermissions == nil || *listed[0].DefaultMemberPermissions != manage ||
		listed[1].DefaultMemberPermissions != nil {
		t.Fatalf("listed commands %+v %v", listed, err)
	}
	spend := listed[0]

	bob, carol, dave := w.sim.CreateUser("bob"), w.sim.CreateUser("carol"), w.sim.CreateUser("dave")
	managers, _ := w.sim.CreateRole(w.guild, "managers")
	admins, _ := w.sim.CreateRole(w.guild, "admins")
	helpers, _ := w.sim.CreateRole(w.guild, "helpers")
	must(t, w.sim.SetRolePermissions(w.guild, managers, "32"))
	must(t, w.sim.SetRolePermissions(w.guild, admins, "8"))
	for u, r := range map[UserID]RoleID{bob: managers, carol: admins, dave: helpers} {
		must(t, w.sim.AddMember(w.guild, u))
		must(t, w.sim.GiveRole(w.guild, u, r))
	}
	override := func(ps ...world.CommandPermission) {
		t.Helper()
		must(t, w.sim.SetCommandPermissions(w.guild, CommandID(spend.ID), ps))
	}
	everyone := func(allow bool) world.CommandPermission {
		return world.CommandPermission{ID: string(w.guild), Type: world.CommandPermissionRole, Permission: allow}
	}
	steps := []struct {
		name    string
		setup   func()
		offered map[UserID]bool
	}{
		{"default permissions only", func() {}, map[UserID]bool{w.alice: false, bob: true, carol: true, dave: false}},
		{"@everyone allowed", func() { override(everyone(true)) },
			map[UserID]bool{w.alice: true, bob: true, carol: true, dave: true}},
		{"a role denied over @everyone allowed", func() {
			override(everyone(true), world.CommandPermission{ID: string(helpers), Type: world.CommandPermissionRole})
		}, map[UserID]bool{w.alice: true, bob: true, carol: true, dave: false}},
		{"a user allowed over @everyone denied", func() {
			override(everyone(false), world.CommandPermission{ID: string(w.alice), Type: world.CommandPermissionUser, Permission: true})
		}, map[UserID]bool{w.alice: true, bob: false, carol: false, dave: false}},
		{"overrides removed", func() { override() }, map[UserID]bool{w.alice: false, bob: true, carol: true, dave: false}},
	}
	for _, s := range steps {
		s.setup()
		for u, want := range s.offered {
			_, err := w.sim.InvokeCommand(u, w.text, "spend")
			if got := err == nil; got != want || !want && !errors.Is(err, world.ErrCommandHidden) {
				t.Errorf("%s: %s invoking /spend: err %v, want offered=%v", s.name, u, err, want)
			}
		}
		if _, err := w.sim.InvokeCommand(w.alice, w.text, "ping"); err != nil {
			t.Errorf("%s: /ping (no default permissions) refused: %v", s.name, err)
		}
	}

	// "0": Administrators only.
	zero := int64(0)
	if _, err := dg.ApplicationCommandCreate(app, "", &discordgo.ApplicationCommand{Name: "spend", Description: "Spend", DefaultMemberPermissions: &zero}); err != nil {
		t.Fatal(err)
	}
	for u, want := range map[UserID]bool{w.alice: false, bob: false, carol: true} {
		if _, err := w.sim.InvokeCommand(u, w.text, "spend"); (err == nil) != want {
			t.Errorf("default_member_permissions 0: %s invoking: err %v, want offered=%v", u, err, want)
		}
	}
}

// TestCommandPermissionsOnTheWire: default_member_permissions is taken as a decimal string
// or as an integer (the form Discord's spec writes), is answered as a string, replaces the
// old value on an upsert, and is refused (400 50035, naming the field) when it is not a bit
// set.
func TestCommandPermissionsOnTheWire(t *testing.T) {
	w := newWorld(t)
	bot := "Bot " + w.sim.Token()
	cmds := "/api/v10/applications/" + string(w.sim.ApplicationID()) + "/commands"
	for _, v := range []any{"32", 32} {
		var c wireCommand
		if resp := rest(t, w.sim, "POST", cmds, bot, map[string]any{"name": "spend", "description": "x", "default_member_permissions": v}, &c); resp.StatusCode/100 != 2 ||
			c.DefaultMemberPermissions == nil || *c.DefaultMemberPermissions != "32" {
			t.Errorf("%#v: %d %+v", v, resp.StatusCode, c)
		}
	}
	var c wireCommand
	rest(t, w.sim, "POST", cmds, bot, map[string]any{"name": "spend", "description": "x", "default_member_permissions": nil}, &c)
	if c.DefaultMemberPermissions != nil || w.sim.Commands("")[0].DefaultMemberPermissions != nil {
		t.Errorf("upsert without permissions kept them: %+v", c)
	}
	for _, v := range []any{"manage", "-32", "032", "18014398509481984", 3.5, true} {
		var e wireError
		resp := rest(t, w.sim, "POST", cmds, bot, map[string]any{"name": "spend", "description": "x", "default_member_permissions": v}, &e)
		if resp.StatusCode != 400 || e.Code != world.CodeInvalidBody && v != true {
			t.Errorf("%#v: %d %+v, want 400 50035", v, resp.StatusCode, e)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

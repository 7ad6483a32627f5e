package main

import (
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/store"
	"github.com/banterbot/banter/store/storetest"
)

// TestMemoryAdmin runs `banter run` with memory on: a member without Manage Server is refused
// /memory list and delete (slash and prefix form) and shown nothing; bob, holding a role with
// Manage Server, lists the server's facts (all, or one member's) with their ids and deletes
// one by id with the slash command and another with the prefix form: each is gone from the
// database and from the next reply's prompt.
func TestMemoryAdmin(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := startBot(t, ctx, nil, "", memoryConfig, func(b *botProcess) {
		b.osim.AddRule(openaisim.Rule{Name: "memory", Match: openaisim.Match{Model: "memory-model"}, Respond: memoryExtraction})
		// The role exists when the bot connects: its state knows it (the prefix form's check).
		admins, err := b.dsim.CreateRole(b.guild, "admins")
		if err == nil {
			err = b.dsim.SetRolePermissions(b.guild, admins, "32") // MANAGE_GUILD
		}
		if err == nil {
			err = b.dsim.GiveRole(b.guild, b.bob, admins)
		}
		if err != nil {
			t.Fatal(err)
		}
	})
	defer b.stop()
	slash := func(u discordsim.UserID, sub string, opts ...discordsim.CommandOption) string {
		t.Helper()
		ix, err := b.dsim.InvokeCommand(u, b.ch, "memory", discordsim.CommandOption{Name: sub, Type: 1, Options: opts})
		if err != nil {
			t.Fatal(err)
		}
		return interactionAnswer(t, ctx, b.dsim, ix.ID)
	}
	stored := func(needle string) bool {
		t.Helper()
		hits, err := storetest.Scan(ctx, b.storeDriver, b.storeDSN, []string{needle})
		if err != nil {
			t.Fatal(err)
		}
		return inTable(hits, "facts")
	}
	// remember has alice tell two lines and waits until statement is stored (batches are of two
	// messages: bob's question may close one with her first line).
	remember := func(first, second, statement string) {
		t.Helper()
		say(t, ctx, b, b.alice, first)
		say(t, ctx, b, b.alice, second)
		if !b.logs.wait(ctx, func() bool { return stored(statement) }) {
			t.Fatalf("%q never remembered\n%s", statement, b.logs.String())
		}
	}
	factID := func(list, statement string) string {
		t.Helper()
		m := regexp.MustCompile(`#(\d+) · [^\n]*· ` + regexp.QuoteMeta(statement)).FindStringSubmatch(list)
		if m == nil {
			t.Fatalf("/memory list lacks %q:\n%s", statement, list)
		}
		return m[1]
	}
	waitCommands(t, ctx, b)
	const cat = "alice has a cat named Miso"
	remember("I have a cat named Miso", "she is orange", cat)

	list := slash(b.bob, "list")
	id := factID(list, cat)
	if got := slash(b.bob, "list", discordsim.CommandOption{Name: "member", Type: 6, Value: string(b.alice)}); !strings.Contains(got, "#"+id+" · alice") {
		t.Errorf("/memory list member:alice by an admin:\n%s", got)
	}
	if got := slash(b.bob, "list", discordsim.CommandOption{Name: "member", Type: 6, Value: string(b.bob)}); strings.Contains(got, "Miso") || !strings.Contains(got, "nothing about that member") {
		t.Errorf("/memory list member:bob by an admin:\n%s", got)
	}

	// alice may not manage the server: refused, shown nothing, nothing deleted.
	if got := slash(b.alice, "list"); strings.Contains(got, "Miso") || !strings.Contains(got, "Only members who can manage") {
		t.Errorf("/memory list by a member without Manage Server: %q", got)
	}
	if got := slash(b.alice, "delete", discordsim.CommandOption{Name: "id", Type: 4, Value: mustAtoi(t, id)}); !strings.Contains(got, "Only members who can manage") {
		t.Errorf("/memory delete by a member without Manage Server: %q", got)
	}
	if got := prefixCommand(t, ctx, b, b.alice, "!banter memory delete "+id); !strings.Contains(got, "Only members who can manage") {
		t.Errorf("prefix delete by a member without Manage Server: %q", got)
	}
	if !stored(cat) {
		t.Fatal("a refused delete deleted the fact")
	}

	// bob deletes it with the slash command: gone from the database and from the next prompt.
	if got := slash(b.bob, "delete", discordsim.CommandOption{Name: "id", Type: 4, Value: mustAtoi(t, id)}); got != "Deleted fact #"+id+"." {
		t.Errorf("/memory delete id:%s by an admin: %q", id, got)
	}
	if stored(cat) {
		t.Error("the deleted fact is still stored")
	}
	ask := say(t, ctx, b, b.bob, discordsim.MentionUser(b.dsim.BotID())+" what is the name of alice's cat?")
	if p := promptOf(t, ctx, b, ask); strings.Contains(p, cat) {
		t.Errorf("the prompt after the delete still carries the fact:\n%s", p)
	}

	// And one with the prefix form.
	const dog = "alice has a dog named Rex"
	remember("I have a dog named Rex", "he is a good boy", dog)
	id = factID(slash(b.bob, "list"), dog)
	if got := prefixCommand(t, ctx, b, b.bob, "!banter memory delete "+id); got != "Deleted fact #"+id+"." {
		t.Errorf("prefix delete by an admin: %q", got)
	}
	if stored(dog) {
		t.Error("the fact deleted with the prefix form is still stored")
	}
	if got := prefixCommand(t, ctx, b, b.bob, "!banter memory list"); strings.Contains(got, "Rex") || !strings.Contains(got, "/memory list") {
		t.Errorf("prefix list (public) by an admin: %q, want a pointer to the slash command", got)
	}
}

// say posts text as u in the bot's channel.
func say(t *testing.T, ctx context.Context, b *botProcess, u discordsim.UserID, text string) discordsim.MessageID {
	t.Helper()
	m, err := b.dsim.Post(ctx, u, b.ch, text)
	if err != nil {
		t.Fatal(err)
	}
	return m.ID
}

// prefixCommand posts a prefix command as u and returns the bot's reply to it.
func prefixCommand(t *testing.T, ctx context.Context, b *botProcess, u discordsim.UserID, text string) string {
	t.Helper()
	id := say(t, ctx, b, u, text)
	m, err := simtest.WaitMessage(ctx, b.dsim, func(m discordsim.Message) bool {
		return m.Author == b.dsim.BotID() && m.Reference != nil && m.Reference.MessageID == id
	})
	if err != nil {
		t.Fatalf("no reply to %q: %v\n%s", text, err, b.logs.String())
	}
	return m.Content
}

// promptOf waits for the reply prompt of message id and returns it.
func promptOf(t *testing.T, ctx context.Context, b *botProcess, id discordsim.MessageID) string {
	t.Helper()
	prompt := ""
	if !b.logs.wait(ctx, func() bool {
		for _, r := range b.osim.RequestsFor(openaisim.EndpointResponses) {
			if strings.Contains(r.LastUserText, "Message to answer: msg "+string(id)) {
				prompt = r.LastUserText
			}
		}
		return prompt != ""
	}) {
		t.Fatalf("no reply prompt for %s\n%s", id, b.logs.String())
	}
	return prompt
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestMemoryRetention: `banter run` deletes the facts older than memory.retentionDays (180 by
// default) when it starts, and keeps the younger ones; it warns at start that facts outlive the
// stored messages (store.retentionDays 90).
func TestMemoryRetention(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := startBot(t, ctx, nil, "", memoryConfig, func(b *botProcess) {
		b.storeDriver, b.storeDSN = "sqlite", filepath.Join(t.TempDir(), "banter.db")
		st, err := store.OpenDriver(ctx, b.storeDriver, b.storeDSN)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		for _, f := range []store.Fact{
			{GuildID: string(b.guild), SubjectID: string(b.alice), Statement: "alice had a hamster named Old", CreatedAt: time.Now().AddDate(0, 0, -181)},
			{GuildID: string(b.guild), SubjectID: string(b.alice), Statement: "alice has a cat named Young", CreatedAt: time.Now().AddDate(0, 0, -179)},
		} {
			if _, err := st.AddFact(ctx, f); err != nil {
				t.Fatal(err)
			}
		}
	})
	defer b.stop()
	if !b.logs.wait(ctx, func() bool { return b.logs.count(0, "store_pruned") > 0 }) {
		t.Fatalf("no prune at start\n%s", b.logs.String())
	}
	hits, err := storetest.Scan(ctx, b.storeDriver, b.storeDSN, []string{"named Old", "named Young"})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Needle != "named Young" {
		t.Errorf("after the prune the facts table holds %+v, want the younger fact only", hits)
	}
	// Facts kept 180 days, messages 90 (the defaults): said at start, naming both.
	warned := false
	for _, l := range b.logs.since(0) {
		if l.msg() == "config_warning" && l.str("level") == "WARN" && l.str("warning") == "memory_outlives_messages" &&
			l["memory.retentionDays"] == float64(180) && l["store.retentionDays"] == float64(90) {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no config_warning memory_outlives_messages at start\n%s", b.logs.String())
	}
}

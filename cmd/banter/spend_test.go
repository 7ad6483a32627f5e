package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/llm"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/store"
)

// spendConfig prices the two reply models high enough that a few replies reach a $2 cap:
// past 40% of it the reply slot (llm) switches to gpt-5-nano; at the cap the bot answers only
// direct addresses, with the notice once, and no reply call is made.
const spendConfig = `prices:
  gpt-5-mini: {input: 1000, cachedInput: 1000, output: 1000}
  gpt-5-nano: {input: 500, cachedInput: 500, output: 500}
budget:
  guildDailyUsd: 2
  softThreshold: 0.4
  fallbackModels: {llm: gpt-5-nano}
  capNotice: "Budget spent for today."
`

var spendPrices = map[string]llm.Price{
	"gpt-5-mini": {InputPerMTok: 1000, CachedPerMTok: 1000, OutputPerMTok: 1000},
	"gpt-5-nano": {InputPerMTok: 500, CachedPerMTok: 500, OutputPerMTok: 500},
}

// costOf is what a recorded answer cost at spendPrices.
func costOf(r openaisim.Recorded) float64 { return spendPrices[r.Model].Cost(recordedUsage(r)) }

// answer waits for what became of message id: a reply from the bot, or reply_skipped.
func (b *botProcess) answer(t *testing.T, ctx context.Context, id discordsim.MessageID) (reply string, skipped bool) {
	t.Helper()
	return awaitAnswer(t, ctx, b.dsim, b.logs, func() []logLine { return b.logs.since(0) }, id)
}

// awaitAnswer waits (on log writes of wake) for what became of message id: a reply from the
// bot, or reply_skipped in lines.
func awaitAnswer(t *testing.T, ctx context.Context, dsim *discordsim.Server, wake *matrixLog, lines func() []logLine,
	id discordsim.MessageID) (reply string, skipped bool) {
	t.Helper()
	g, cancel := guard(ctx)
	defer cancel()
	ok := wake.wait(g, func() bool {
		// The log first: a skip with a notice (reply_skipped notice=true) is logged after the
		// notice was sent, so the messages read after it hold the notice when there is one.
		seen := false
		for _, line := range lines() {
			if line.msg() == "reply_skipped" && line.str("message_id") == string(id) {
				seen = true
			}
		}
		for _, m := range dsim.SentSince(0) {
			if m.Author == dsim.BotID() && m.ReplyTo() == id {
				reply = m.Content
				return true
			}
		}
		skipped = seen
		return seen
	})
	if !ok {
		t.Fatalf("message %s: neither answered nor skipped", id)
	}
	return reply, skipped
}

// TestBudgetSoftThresholdThenCap: `banter run` with a $2 daily budget for the guild. alice
// talks to the bot until it reaches the cap mid-conversation. Every reply request the OpenAI
// simulator saw is checked against the spend before it, recomputed from the usage the
// simulator reported times the prices: gpt-5-mini under 40% of the cap, gpt-5-nano (the
// configured fallback) from there, and none at all once the cap is reached. At the cap the
// first direct address gets the notice (once), a later one nothing (reply_skipped
// budget_cap), and an undirected message costs nothing either.
func TestBudgetSoftThresholdThenCap(t *testing.T) {
	t.Parallel() // an independent end-to-end test: see "Parallel tests" in shared_test.go
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := startBot(t, ctx, nil, "", spendConfig, nil)
	defer b.stop()

	const notice = "Budget spent for today."
	asked := 0
	for ; asked < 12; asked++ {
		id, err := b.post(ctx, b.alice, true, "tell me something about the history of bread, please")
		if err != nil {
			t.Fatal(err)
		}
		reply, skipped := b.answer(t, ctx, id)
		if skipped {
			t.Fatalf("message %d skipped before the notice\n%s", asked+1, b.logs.String())
		}
		if reply == notice {
			break
		}
	}
	if asked == 12 {
		t.Fatalf("no cap notice after 12 addressed messages\n%s", b.logs.String())
	}
	atCap := len(b.osim.Requests())
	if _, err := b.post(ctx, b.bob, false, "anyone want to talk about bread?"); err != nil {
		t.Fatal(err)
	}
	id, err := b.post(ctx, b.alice, true, "still there?")
	if err != nil {
		t.Fatal(err)
	}
	if reply, skipped := b.answer(t, ctx, id); !skipped {
		t.Errorf("a direct address after the notice got %q, want nothing (reply_skipped)", reply)
	}
	if n := len(b.osim.Requests()); n != atCap {
		t.Errorf("%d model requests after the cap, want none: %+v", n-atCap, b.osim.Requests()[atCap:])
	}
	notices := 0
	for _, m := range b.dsim.SentSince(0) {
		if m.Author == b.dsim.BotID() && m.Content == notice {
			notices++
		}
	}
	if notices != 1 {
		t.Errorf("%d cap notices, want 1 a day", notices)
	}
	checkSpendPath(t, b.osim.Requests(), 2, 0.4)
}

// checkSpendPath replays the requests in order: each one's model must be what the budget
// says for the spend before it, and none may come at the cap. It wants both models used.
func checkSpendPath(t *testing.T, reqs []openaisim.Recorded, limit, soft float64) {
	t.Helper()
	slices.SortFunc(reqs, func(a, b openaisim.Recorded) int { return a.Seq - b.Seq })
	spent := 0.0
	used := map[string]int{}
	for _, r := range reqs {
		want := "gpt-5-mini"
		switch {
		case spent >= limit:
			t.Errorf("request %d (%s) made at $%.4f, past the $%v cap", r.Seq, r.Model, spent, limit)
		case spent >= soft*limit:
			want = "gpt-5-nano"
		}
		if r.Model != want {
			t.Errorf("request %d at $%.4f spent: model %s, want %s", r.Seq, spent, r.Model, want)
		}
		used[r.Model]++
		spent += costOf(r)
	}
	if used["gpt-5-mini"] == 0 || used["gpt-5-nano"] == 0 || spent < limit {
		t.Errorf("the conversation did not go through both levels to the cap: models %v, $%.4f spent", used, spent)
	}
}

// TestSpendCommand: /spend through `banter run` and the Discord simulator. It is registered
// with default_member_permissions Manage Server, so the simulator (as Discord's client) does
// not offer it to a member without it. When the server's admins open it to everyone (a
// command permission override), such a member is still told so and shown nothing; one
// holding a role with Manage Server sees the day's spend of the guild and of all guilds, by
// slot, equal to the simulator's usage times the prices.
func TestSpendCommand(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := startBot(t, ctx, nil, "  registerSlashCommands: true\n", spendConfig, nil)
	defer b.stop()
	id, err := b.post(ctx, b.alice, true, "what's the capital of France?")
	if err != nil {
		t.Fatal(err)
	}
	if _, skipped := b.answer(t, ctx, id); skipped {
		t.Fatal("the first message was skipped")
	}
	var cmd discordsim.Command
	if err := b.dsim.Await(ctx, func() bool {
		cmds := b.dsim.Commands("")
		i := slices.IndexFunc(cmds, func(c discordsim.Command) bool { return c.Name == "spend" })
		if i >= 0 {
			cmd = cmds[i]
		}
		return i >= 0
	}); err != nil {
		t.Fatalf("/spend never registered: %v", err)
	}
	if p := cmd.DefaultMemberPermissions; p == nil || *p != "32" { // MANAGE_GUILD
		t.Errorf("/spend default_member_permissions %v, want \"32\" (Manage Server)", p)
	}
	if _, err := b.dsim.InvokeCommand(b.alice, b.ch, "spend"); !errors.Is(err, discordsim.ErrCommandHidden) {
		t.Errorf("/spend offered to a member without Manage Server: %v", err)
	}
	everyone := discordsim.CommandPermission{ID: string(b.guild), Type: discordsim.CommandPermissionRole, Permission: true}
	if err := b.dsim.SetCommandPermissions(b.guild, cmd.ID, []discordsim.CommandPermission{everyone}); err != nil {
		t.Fatal(err)
	}
	spend := func(u discordsim.UserID) string {
		t.Helper()
		it, err := b.dsim.InvokeCommand(u, b.ch, "spend")
		if err != nil {
			t.Fatal(err)
		}
		r, err := simtest.WaitInteractionResponse(ctx, b.dsim, it.ID)
		if err != nil {
			t.Fatal(err)
		}
		var data struct {
			Content string `json:"content"`
			Flags   int    `json:"flags"`
		}
		if err := json.Unmarshal(r.Data, &data); err != nil {
			t.Fatal(err)
		}
		if data.Flags&64 == 0 {
			t.Errorf("/spend answered in public (flags %d), want ephemeral", data.Flags)
		}
		return data.Content
	}
	if got := spend(b.alice); !strings.Contains(got, "Only members who can manage") || strings.Contains(got, "$") {
		t.Errorf("/spend by a member without Manage Server: %q", got)
	}
	admins, err := b.dsim.CreateRole(b.guild, "admins")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.dsim.SetRolePermissions(b.guild, admins, "32"); err != nil { // MANAGE_GUILD
		t.Fatal(err)
	}
	if err := b.dsim.GiveRole(b.guild, b.bob, admins); err != nil {
		t.Fatal(err)
	}
	var spent float64
	for _, r := range b.osim.Requests() {
		spent += costOf(r)
	}
	got := spend(b.bob)
	want := fmt.Sprintf("$%.4f", spent)
	for _, line := range []string{"**This server**: " + want + " of $2.0000", "- llm: " + want, "**All servers**: " + want + " (no cap)"} {
		if !strings.Contains(got, line) {
			t.Errorf("/spend by an admin lacks %q:\n%s", line, got)
		}
	}
}

// TestSpendDaysPrunedByKeepDays: `banter run` with budget.keepDays 30 on a store holding a
// day of spend 400 days old and one of yesterday deletes the old day (budget_spend_pruned)
// and keeps yesterday's, for /spend and the budgets.
func TestSpendDaysPrunedByKeepDays(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	path := filepath.Join(t.TempDir(), "seeded.db")
	yesterday := time.Now().AddDate(0, 0, -1)
	old, recent := config.Default().Budget.Day(yesterday.AddDate(0, 0, -400)), config.Default().Budget.Day(yesterday)
	st, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	ledger, _ := store.NewSpendLedger(st)
	for _, day := range []string{old, recent} {
		if err := ledger.AddSpend(ctx, day, "g1", "llm", 1.25); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	b := startBot(t, ctx, nil, "", "budget:\n  keepDays: 30\n", func(b *botProcess) { b.storeDriver, b.storeDSN = "sqlite", path })
	stopped := false
	defer func() {
		if !stopped {
			b.stop()
		}
	}()
	g, cancelWait := guard(ctx)
	defer cancelWait()
	if !b.logs.wait(g, func() bool { return b.logs.count(0, "budget_spend_pruned") > 0 }) {
		t.Fatalf("no budget_spend_pruned\n%s", b.logs.String())
	}
	stopped = true
	if err := b.stop(); err != nil {
		t.Fatal(err)
	}
	st, err = store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ledger, _ = store.NewSpendLedger(st)
	for day, want := range map[string]float64{old: 0, recent: 1.25} {
		if got, _, err := ledger.SpendTotals(ctx, day, "g1"); got != want || err != nil {
			t.Errorf("spend of %s after the prune: %v, %v; want %v", day, got, err, want)
		}
	}
}

// TestCapNoticeAfterFailedSend: at the cap, the first direct address's notice is refused by
// Discord (an injected 403 on the message create); the notice is given back
// (budget_notice_released), so the next direct address of the day gets it, once.
func TestCapNoticeAfterFailedSend(t *testing.T) {
	t.Parallel() // an independent end-to-end test: see "Parallel tests" in shared_test.go
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := strings.Replace(spendConfig, "guildDailyUsd: 2", "guildDailyUsd: 0.01", 1)
	b := startBot(t, ctx, nil, "", cfg, nil)
	defer b.stop()
	const notice = "Budget spent for today."
	ask := func(text string) (string, bool, discordsim.MessageID) {
		id, err := b.post(ctx, b.alice, true, text)
		if err != nil {
			t.Fatal(err)
		}
		reply, skipped := b.answer(t, ctx, id)
		return reply, skipped, id
	}
	if reply, skipped, _ := ask("tell me about bread"); skipped || reply == notice {
		t.Fatalf("the first message, under the cap: reply %q, skipped %v", reply, skipped)
	}
	b.dsim.FailNext(discordsim.RouteMessageCreate, 1, 403)
	_, skipped, id := ask("still there?")
	if !skipped {
		t.Fatalf("the address whose notice failed was answered\n%s", b.logs.String())
	}
	if !b.logs.wait(ctx, func() bool {
		for _, l := range b.logs.since(0) {
			if l.msg() == "budget_notice_released" && l.str("message_id") == string(id) {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no budget_notice_released for %s\n%s", id, b.logs.String())
	}
	if reply, _, _ := ask("hello?"); reply != notice {
		t.Errorf("the next direct address got %q, want the cap notice", reply)
	}
	if reply, skipped, _ := ask("and now?"); !skipped {
		t.Errorf("a direct address after the notice got %q, want nothing", reply)
	}
}

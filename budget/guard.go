// Package budget caps what banter spends a day: a budget per guild and one for every guild
// together, in US dollars at the config's prices. The Guard admits each model call before it
// is sent (llm.Gate): past a soft threshold it swaps the model of the slots configured for a
// cheaper one, at a cap it refuses the call unless its slot is allowed at the cap. It records
// every metered cost in the store's spend ledger (llm.Spender), so the day's spend survives a
// restart and, on Postgres, is shared by every process. The pipelines ask it whether a guild
// is quiet (Quiet) to answer only direct addresses in text and stop speaking in voice.
// docs/cost.md.
package budget

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/store"
)

// Level is where a guild stands against its budgets.
type Level int

const (
	// LevelNormal: under the soft threshold of every cap that applies.
	LevelNormal Level = iota
	// LevelSoft: past the soft threshold of a cap: the fallback models apply.
	LevelSoft
	// LevelCapped: a cap is reached: only the slots allowed at the cap are called.
	LevelCapped
)

// String returns the level's log label.
func (l Level) String() string {
	return [...]string{"normal", "soft", "capped"}[l]
}

// State is one guild's standing on one budget day.
type State struct {
	Day                 string
	Level               Level
	GuildUSD, AllUSD    float64 // the day's spend of the guild and of every guild
	GuildCap, GlobalCap float64 // 0: none
}

// Options configure a Guard.
type Options struct {
	// Config returns the live configuration (budget:).
	Config func() *config.Config
	// Ledger keeps the day's spend.
	Ledger store.SpendLedger
	// Now is the clock that names the budget day; nil: time.Now.
	Now    func() time.Time
	Logger *slog.Logger
	// Metrics, when set, counts refused and swapped calls (NewMetrics).
	Metrics *Metrics
}

// Guard enforces the daily budgets. It is safe for concurrent use.
type Guard struct {
	opts Options
	log  *slog.Logger

	mu       sync.Mutex
	noticed  map[string]string // guild → the budget day its cap notice was said (by any process)
	announce map[string]string // guild → the budget day its level change was last logged at
}

var (
	_ llm.Gate    = (*Guard)(nil)
	_ llm.Spender = (*Guard)(nil)
)

// New returns a Guard.
func New(opts Options) *Guard {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Guard{opts: opts, log: log, noticed: map[string]string{}, announce: map[string]string{}}
}

// State reads guild's standing from the ledger. A ledger that cannot be read counts as no
// spend (logged): the provider's bill is not the bot's reason to go silent.
func (g *Guard) State(ctx context.Context, guild string) State {
	b := &g.opts.Config().Budget
	st := State{Day: b.Day(g.opts.Now()), GuildCap: b.GuildCap(guild), GlobalCap: b.DailyUSD}
	var err error
	st.GuildUSD, st.AllUSD, err = g.opts.Ledger.SpendTotals(ctx, st.Day, guild)
	if err != nil {
		g.log.LogAttrs(ctx, slog.LevelWarn, "budget_unreadable", slog.String("guild_id", guild), slog.String("error", err.Error()))
		return State{Day: st.Day, GuildCap: st.GuildCap, GlobalCap: st.GlobalCap}
	}
	st.Level = max(levelOf(st.GuildUSD, st.GuildCap, b.SoftThreshold), levelOf(st.AllUSD, st.GlobalCap, b.SoftThreshold))
	return st
}

// levelOf places spent against one cap (0: none).
func levelOf(spent, limit, soft float64) Level {
	switch {
	case limit <= 0:
		return LevelNormal
	case spent >= limit:
		return LevelCapped
	case spent >= soft*limit:
		return LevelSoft
	}
	return LevelNormal
}

// Admit implements llm.Gate: past the soft threshold the slot's fallback model (if any) is
// called instead; at a cap a slot not in allowAtCap is refused (llm.ErrSpendCap).
func (g *Guard) Admit(ctx context.Context, a llm.Account, model string) (string, error) {
	b := &g.opts.Config().Budget
	if !b.Enabled() {
		return model, nil
	}
	st := g.State(ctx, a.Guild)
	g.logLevel(ctx, a.Guild, st)
	if st.Level == LevelCapped && !slices.Contains(b.AllowAtCap, a.Slot) {
		g.opts.Metrics.refused(a.Guild, a.Slot)
		g.log.LogAttrs(ctx, slog.LevelDebug, "budget_call_refused", slog.String("guild_id", a.Guild),
			slog.String("slot", a.Slot), slog.String("model", model))
		return "", llm.ErrSpendCap
	}
	if st.Level >= LevelSoft {
		if fb := b.FallbackModels[a.Slot]; fb != "" && fb != model {
			g.opts.Metrics.swapped(a.Guild, a.Slot)
			return fb, nil
		}
	}
	return model, nil
}

// logLevel logs budget_soft_threshold and budget_cap_reached once per guild and level a day.
func (g *Guard) logLevel(ctx context.Context, guild string, st State) {
	if st.Level == LevelNormal {
		return
	}
	key := st.Day + "/" + st.Level.String()
	g.mu.Lock()
	seen := g.announce[guild] == key
	g.announce[guild] = key
	g.mu.Unlock()
	if seen {
		return
	}
	event := "budget_soft_threshold"
	if st.Level == LevelCapped {
		event = "budget_cap_reached"
	}
	g.log.LogAttrs(ctx, slog.LevelWarn, event, slog.String("guild_id", guild), slog.String("day", st.Day),
		slog.Float64("guild_usd", st.GuildUSD), slog.Float64("guild_cap_usd", st.GuildCap),
		slog.Float64("all_usd", st.AllUSD), slog.Float64("global_cap_usd", st.GlobalCap))
}

// Spent implements llm.Spender: the cost goes to the day's ledger (whether or not a cap is
// set, for /spend). The write outlives a canceled call: the provider billed it.
func (g *Guard) Spent(ctx context.Context, a llm.Account, _ string, usd float64) {
	day := g.opts.Config().Budget.Day(g.opts.Now())
	slot := a.Slot
	if slot == "" {
		slot = "unknown"
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := g.opts.Ledger.AddSpend(wctx, day, a.Guild, slot, usd); err != nil {
		g.log.LogAttrs(ctx, slog.LevelWarn, "budget_spend_not_recorded", slog.String("guild_id", a.Guild),
			slog.String("slot", slot), slog.Float64("usd", usd), slog.String("error", err.Error()))
	}
}

// Quiet reports whether guild is at a cap (the pipelines answer only direct addresses, in
// text, and voice does not speak). notice is the cap notice the first time a day a caller
// asks with wantNotice for the guild, in any process on the ledger's database, else "".
func (g *Guard) Quiet(ctx context.Context, guild string, wantNotice bool) (quiet bool, notice string) {
	if g == nil {
		return false, ""
	}
	b := &g.opts.Config().Budget
	if !b.Enabled() {
		return false, ""
	}
	st := g.State(ctx, guild)
	if st.Level != LevelCapped {
		return false, ""
	}
	g.logLevel(ctx, guild, st)
	if !wantNotice || !g.claimNotice(ctx, guild, st.Day) {
		return true, ""
	}
	return true, b.CapNotice
}

// claimNotice reports whether this call says guild's cap notice of day: the first claim in
// the ledger (shared by every process on Postgres, kept across restarts) wins. The process
// that said it remembers so, and asks the ledger no more that day; the others ask at each
// direct address (one insert-if-absent), since a claim whose notice could not be sent is
// given back (NoticeNotSent). A ledger that cannot be written falls back to once a day in
// this process (logged).
func (g *Guard) claimNotice(ctx context.Context, guild, day string) bool {
	g.mu.Lock()
	seen := g.noticed[guild] == day
	g.mu.Unlock()
	if seen {
		return false
	}
	claimed, err := g.opts.Ledger.ClaimCapNotice(ctx, day, guild)
	g.mu.Lock()
	defer g.mu.Unlock()
	if err != nil {
		g.log.LogAttrs(ctx, slog.LevelWarn, "budget_notice_unclaimed", slog.String("guild_id", guild), slog.String("error", err.Error()))
		claimed = g.noticed[guild] != day
	}
	if claimed {
		g.noticed[guild] = day
	}
	return claimed
}

// NoticeNotSent gives back guild's cap notice claimed by Quiet when it could not be sent
// (Discord refused or failed the message), so that the next direct address of the day, in
// this process or another, says it.
func (g *Guard) NoticeNotSent(ctx context.Context, guild string) {
	if g == nil {
		return
	}
	g.mu.Lock()
	day := g.noticed[guild]
	delete(g.noticed, guild)
	g.mu.Unlock()
	if day == "" {
		return
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := g.opts.Ledger.ReleaseCapNotice(wctx, day, guild); err != nil {
		g.log.LogAttrs(ctx, slog.LevelWarn, "budget_notice_unreleased", slog.String("guild_id", guild), slog.String("error", err.Error()))
	}
}

// AllowsAtCap reports whether slot is still called at a cap.
func (g *Guard) AllowsAtCap(slot string) bool {
	if g == nil {
		return true
	}
	return slices.Contains(g.opts.Config().Budget.AllowAtCap, slot)
}

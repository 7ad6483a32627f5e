// Package guildwatch notices the servers banter is removed from and has the store forget them
// after store.forgetRemovedGuildAfterDays (docs/store.md, "Removed servers").
//
// A removal is GUILD_DELETE without unavailable (the bot was kicked, or the server deleted;
// with unavailable true it is an outage and nothing happens), or, for a removal while banter
// was offline, a guild the store holds data of that the READY of the shard owning it does not
// list (READY lists every guild of its shard, as unavailable stubs, before any GUILD_CREATE).
// GUILD_CREATE, and a READY listing a recorded guild, clear the record: banter is back.
// https://discord.com/developers/docs/events/gateway-events#guild-delete
// https://discord.com/developers/docs/events/gateway-events#ready
package guildwatch

import (
	"context"
	"log/slog"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/banterbot/banter/discord"
	"github.com/banterbot/banter/store"
)

// Options configures a Watch.
type Options struct {
	Store   store.GuildsLeft
	Logger  *slog.Logger
	Metrics *Metrics // nil: not counted
	// AfterDays is store.forgetRemovedGuildAfterDays: the grace period (0: purge at once;
	// negative: never purge, only record).
	AfterDays int
	// Owns reports whether this process runs the shard of a guild (nil: every guild): the
	// purge acts on those guilds only.
	Owns func(guildID string) bool
	// Interval is how often the purge runs (0: an hour, as store pruning).
	Interval time.Duration
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Watch records removals from the gateway's events and runs the purge. Its handlers queue
// the events; Run handles them, one at a time in arrival order, off the gateway goroutine.
type Watch struct {
	opts   Options
	log    *slog.Logger
	events chan event
}

// eventKind is which gateway event an event is.
type eventKind int

const (
	eventUnknown eventKind = iota
	eventDelete            // GUILD_DELETE without unavailable
	eventCreate            // GUILD_CREATE
	eventReady             // READY
)

// event is one gateway event Run handles.
type event struct {
	kind  eventKind
	guild string
	// ready's shard and the guilds it lists
	shard, shards int
	listed        map[string]bool
}

// queueSize bounds the events waiting for Run (a READY's GUILD_CREATEs come in a burst).
const queueSize = 1024

// New returns a Watch; call Attach for each shard's session and Run.
func New(opts Options) *Watch {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Interval <= 0 {
		opts.Interval = time.Hour
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Watch{opts: opts, log: opts.Logger, events: make(chan event, queueSize)}
}

// Attach registers the handlers on a shard's session and returns what removes them. A
// handler waits for room in the queue, or for ctx to end.
func (w *Watch) Attach(ctx context.Context, sess *discordgo.Session) (detach func()) {
	queue := func(e event) {
		select {
		case w.events <- e:
		case <-ctx.Done():
		}
	}
	removers := []func(){
		sess.AddHandler(func(s *discordgo.Session, r *discordgo.Ready) {
			listed := make(map[string]bool, len(r.Guilds))
			for _, g := range r.Guilds {
				listed[g.ID] = true
			}
			queue(event{kind: eventReady, shard: s.ShardID, shards: s.ShardCount, listed: listed})
		}),
		sess.AddHandler(func(_ *discordgo.Session, g *discordgo.GuildCreate) {
			if g.Guild != nil {
				queue(event{kind: eventCreate, guild: g.ID})
			}
		}),
		sess.AddHandler(func(_ *discordgo.Session, g *discordgo.GuildDelete) {
			if g.Guild != nil && !g.Unavailable { // unavailable: an outage, the bot is still in it
				queue(event{kind: eventDelete, guild: g.ID})
			}
		}),
	}
	return func() {
		for _, r := range removers {
			r()
		}
	}
}

// Run purges at once and then every Interval, and handles the queued events, until ctx ends.
func (w *Watch) Run(ctx context.Context) {
	t := time.NewTicker(w.opts.Interval)
	defer t.Stop()
	w.Purge(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-w.events:
			w.handle(ctx, e)
		case <-t.C:
			w.Purge(ctx)
		}
	}
}

func (w *Watch) handle(ctx context.Context, e event) {
	switch e.kind {
	case eventDelete:
		if w.left(ctx, e.guild, "guild_delete") && w.opts.AfterDays == 0 {
			w.Purge(ctx)
		}
	case eventCreate:
		w.returned(ctx, e.guild, nil)
	case eventReady:
		w.ready(ctx, e)
	}
}

// ready compares a shard's READY with the store: a guild of the shard the store holds data of
// and READY does not list was left while banter was offline; a recorded guild READY lists is
// back. It logs guilds_checked when done (the store's reads included: took_ms).
func (w *Watch) ready(ctx context.Context, e event) {
	start := time.Now()
	left, err := w.opts.Store.LeftGuilds(ctx)
	if err != nil {
		w.failed(ctx, "left_guilds", err)
		return
	}
	returned := 0
	for g, at := range left {
		if e.listed[g] && w.returned(ctx, g, &at) {
			returned++
		}
	}
	known, err := w.opts.Store.GuildsWithData(ctx)
	if err != nil {
		w.failed(ctx, "guilds_with_data", err)
		return
	}
	removed := 0
	for _, g := range known {
		if e.listed[g] {
			continue
		}
		if shard, err := discord.ShardOf(g, e.shards); err != nil || shard != e.shard {
			continue // another shard's (or not a guild id)
		}
		if w.left(ctx, g, "ready") {
			removed++
		}
	}
	w.log.LogAttrs(ctx, slog.LevelInfo, "guilds_checked", slog.Int("shard", e.shard), slog.Int("listed", len(e.listed)),
		slog.Int("with_data", len(known)), slog.Int("removed", removed), slog.Int("returned", returned),
		slog.Float64("took_ms", float64(time.Since(start).Microseconds())/1000))
	if removed > 0 && w.opts.AfterDays == 0 {
		w.Purge(ctx)
	}
}

// left records the removal and reports whether it is new.
func (w *Watch) left(ctx context.Context, guild, via string) bool {
	ok, err := w.opts.Store.GuildLeft(ctx, guild, w.opts.Now())
	if err != nil {
		w.failed(ctx, "guild_left", err)
		return false
	}
	if ok {
		w.log.LogAttrs(ctx, slog.LevelInfo, "guild_removed", slog.String("guild_id", guild), slog.String("via", via),
			slog.Int("purge_after_days", w.opts.AfterDays))
		w.opts.Metrics.event("removed")
	}
	return ok
}

// returned clears the guild's record, if any (at: when it was left, when known), and reports
// whether there was one.
func (w *Watch) returned(ctx context.Context, guild string, at *time.Time) bool {
	ok, err := w.opts.Store.GuildReturned(ctx, guild)
	if err != nil {
		w.failed(ctx, "guild_returned", err)
		return false
	}
	if ok {
		attrs := []slog.Attr{slog.String("guild_id", guild)}
		if at != nil {
			attrs = append(attrs, slog.Time("left_at", *at))
		}
		w.log.LogAttrs(ctx, slog.LevelInfo, "guild_returned", attrs...)
		w.opts.Metrics.event("returned")
	}
	return ok
}

// Purge deletes the data of the guilds left more than AfterDays ago that this process owns,
// logging guild_data_purged for each (nothing when AfterDays is negative).
func (w *Watch) Purge(ctx context.Context) {
	if w.opts.AfterDays < 0 {
		return
	}
	cutoff := w.opts.Now().AddDate(0, 0, -w.opts.AfterDays)
	purged, err := w.opts.Store.PurgeLeftGuilds(ctx, cutoff, w.opts.Owns)
	for _, p := range purged {
		w.log.LogAttrs(ctx, slog.LevelInfo, "guild_data_purged", slog.String("guild_id", p.GuildID),
			slog.Time("left_at", p.LeftAt), slog.Int("messages", p.Rows["messages"]), slog.Int("facts", p.Rows["facts"]),
			slog.Int("rows", p.Total()))
		w.opts.Metrics.purged(p)
	}
	if err != nil && ctx.Err() == nil {
		w.log.LogAttrs(ctx, slog.LevelWarn, "guild_purge_failed", slog.String("error", err.Error()))
	}
}

func (w *Watch) failed(ctx context.Context, op string, err error) {
	if ctx.Err() != nil {
		return
	}
	w.log.LogAttrs(ctx, slog.LevelWarn, "guild_watch_failed", slog.String("op", op), slog.String("error", err.Error()))
}

// Metrics counts removals, returns and purges.
type Metrics struct {
	events *prometheus.CounterVec
	rows   *prometheus.CounterVec
}

// NewMetrics registers the watch's metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_guild_removals_total",
			Help: "Servers banter was removed from (event=removed), re-added to before their data was purged (returned), and whose data was purged (purged).",
		}, []string{"event"}),
		rows: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_guild_data_purged_total",
			Help: "Rows deleted by the purge of removed servers, by table (spend: rows folded into the removed-servers total).",
		}, []string{"table"}),
	}
	reg.MustRegister(m.events, m.rows)
	return m
}

func (m *Metrics) event(e string) {
	if m != nil {
		m.events.WithLabelValues(e).Inc()
	}
}

func (m *Metrics) purged(p store.GuildPurge) {
	if m == nil {
		return
	}
	m.events.WithLabelValues("purged").Inc()
	for table, n := range p.Rows {
		m.rows.WithLabelValues(table).Add(float64(n))
	}
}

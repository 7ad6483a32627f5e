package discord

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
)

// ShardOf is the shard that owns a guild: (guild_id >> 22) % shard_count, as Discord routes it.
// https://discord.com/developers/docs/events/gateway#sharding
func ShardOf(guildID string, count int) (int, error) {
	id, err := strconv.ParseUint(guildID, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("discord: shard of guild %q: not a snowflake", guildID)
	}
	if count <= 1 {
		return 0, nil
	}
	return int((id >> 22) % uint64(count)), nil
}

// MaxShards bounds a shard count, whether configured (the config allows as many) or read from
// GET /gateway/bot: far above what the largest bots run (a shard per 1,000–2,500 guilds), low
// enough that a wrong or hostile count cannot make the process allocate or loop without end.
const MaxShards = 100000

// ParseShardIDs reads the shards a process runs: "" (all of them), "3", "0-3", "0-1,4,6-7".
// Every id must be below count, and none may repeat. count is at most MaxShards.
func ParseShardIDs(spec string, count int) ([]int, error) {
	if count < 1 || count > MaxShards {
		return nil, fmt.Errorf("discord: shard ids: shard count %d is not in 1..%d", count, MaxShards)
	}
	spec = strings.TrimSpace(spec)
	if spec == "" {
		all := make([]int, count)
		for i := range all {
			all[i] = i
		}
		return all, nil
	}
	var ids []int
	listed := make([]bool, count)
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		first, err1 := strconv.Atoi(strings.TrimSpace(lo))
		last, err2 := first, error(nil)
		if isRange {
			last, err2 = strconv.Atoi(strings.TrimSpace(hi))
		}
		if err1 != nil || err2 != nil || first < 0 || last < first {
			return nil, fmt.Errorf("discord: shard ids %q: %q is not an id or a range like 0-3", spec, part)
		}
		if last >= count {
			return nil, fmt.Errorf("discord: shard ids %q: shard %d is not below the shard count %d", spec, max(first, count), count)
		}
		for id := first; id <= last; id++ {
			if listed[id] {
				return nil, fmt.Errorf("discord: shard ids %q: shard %d listed twice", spec, id)
			}
			listed[id] = true
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// IdentifyGate spaces the Identify of shards that share a rate-limit key: Discord lets each key
// (shard_id % max_concurrency) identify once every 5 seconds, for the whole bot, across every
// process that runs its shards.
// https://discord.com/developers/docs/events/gateway#session-start-limit-object
type IdentifyGate interface {
	// Acquire waits until the key may identify; release must be called once the Identify is
	// sent (or failed), and the key's next Acquire waits 5 s after that.
	Acquire(ctx context.Context, key int) (release func(), err error)
}

// IdentifySpacing is how long a rate-limit key waits between identifies.
const IdentifySpacing = 5 * time.Second

// LocalIdentifyGate spaces identifies within one process. Several processes sharing one bot
// need a gate they all see (the Postgres store provides one).
type LocalIdentifyGate struct {
	// Spacing between identifies of one key; 0 means IdentifySpacing.
	Spacing time.Duration

	mu   sync.Mutex // guards following
	next map[int]time.Time
	busy map[int]chan struct{}
}

// Acquire implements IdentifyGate.
func (g *LocalIdentifyGate) Acquire(ctx context.Context, key int) (func(), error) {
	for {
		g.mu.Lock()
		if g.busy == nil {
			g.busy, g.next = map[int]chan struct{}{}, map[int]time.Time{}
		}
		if wait, ok := g.busy[key]; ok {
			g.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		done := make(chan struct{})
		g.busy[key] = done
		until := time.Until(g.next[key])
		g.mu.Unlock()
		if until > 0 {
			t := time.NewTimer(until)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				g.mu.Lock()
				delete(g.busy, key)
				g.mu.Unlock()
				close(done)
				return nil, ctx.Err()
			}
		}
		spacing := g.Spacing
		if spacing <= 0 {
			spacing = IdentifySpacing
		}
		return sync.OnceFunc(func() {
			g.mu.Lock()
			g.next[key] = time.Now().Add(spacing)
			delete(g.busy, key)
			g.mu.Unlock()
			close(done)
		}), nil
	}
}

// ShardOptions configure NewShards.
type ShardOptions struct {
	Session SessionOptions
	// Count is the bot's total shard count; 0 asks GET /gateway/bot for Discord's recommendation.
	Count int
	// IDs are the shards this process runs, in ParseShardIDs' syntax ("" runs them all, or the
	// process's share when Processes > 1).
	IDs string
	// Processes and ProcessIndex split the shards when IDs is empty (ProcessShards).
	Processes, ProcessIndex int
	// RESTShare, when set, caps the process's REST requests at its share of the bot's global
	// limit (ProcessRESTShare of the shards it runs; the whole limit when it runs them all).
	RESTShare bool
	// Gate spaces identifies; nil uses a LocalIdentifyGate.
	Gate IdentifyGate
	// OpenTimeout bounds a shard's log-in: connecting, Hello and READY (default 2 minutes). A
	// gateway that accepts the connection and then says nothing fails the log-in after it.
	OpenTimeout time.Duration
}

// Shards is the set of gateway sessions one process runs, one per shard it owns. It routes each
// per-guild action to the session of the shard that owns the guild; REST calls may use any.
type Shards struct {
	count    int
	maxConc  int
	gate     IdentifyGate
	sessions map[int]*discordgo.Session // by shard id
	guards   map[int]*openGuard         // by shard id: makes Open stoppable
	permits  map[int]*identifyPermits   // by shard id: every Identify waits for the gate
	stop     context.CancelFunc         // ends the permits' waits (Close)
	ids      []int                      // sorted
	timeout  time.Duration              // OpenTimeout
}

// NewShards builds (but does not open) the sessions of the shards this process runs.
func NewShards(ctx context.Context, opts ShardOptions) (*Shards, error) {
	probe, err := NewSession(opts.Session)
	if err != nil {
		return nil, err
	}
	// Every process asks: the identify keys (shard_id % max_concurrency) must be the same in all
	// of them for a shared gate to space them as Discord counts them.
	gb, err := probe.GatewayBot(discordgo.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("discord: GET /gateway/bot (shard count and identify concurrency): %w", err)
	}
	probed := time.Now() // the request counts against the share, which it had to come before
	count, maxConc := opts.Count, max(gb.SessionStartLimit.MaxConcurrency, 1)
	if count == 0 {
		count = max(gb.Shards, 1)
	}
	if count > MaxShards {
		return nil, fmt.Errorf("discord: shard count %d (configured, or from GET /gateway/bot) is above %d", count, MaxShards)
	}
	var ids []int
	if opts.IDs == "" && opts.Processes > 1 {
		if opts.ProcessIndex < 0 || opts.ProcessIndex >= opts.Processes {
			return nil, fmt.Errorf("discord: process index %d is not below the process count %d", opts.ProcessIndex, opts.Processes)
		}
		ids = ProcessShards(count, opts.Processes, opts.ProcessIndex)
		if len(ids) == 0 {
			return nil, fmt.Errorf("discord: process %d of %d runs no shard of %d (more processes than shards)", opts.ProcessIndex, opts.Processes, count)
		}
	} else if ids, err = ParseShardIDs(opts.IDs, count); err != nil {
		return nil, err
	}
	if opts.RESTShare {
		rest := opts.Session
		rest.RESTPerSecond = ProcessRESTShare(len(ids), count)
		shared, lim, err := newSession(rest)
		if err != nil {
			return nil, err
		}
		lim.charge(probed)
		probe.Client = shared.Client
	}
	slices.Sort(ids)
	gate := opts.Gate
	if gate == nil {
		gate = &LocalIdentifyGate{}
	}
	timeout := opts.OpenTimeout
	if timeout <= 0 {
		timeout = readyTimeout
	}
	life, stop := context.WithCancel(context.WithoutCancel(ctx))
	sh := &Shards{count: count, maxConc: maxConc, gate: gate, sessions: map[int]*discordgo.Session{},
		guards: map[int]*openGuard{}, permits: map[int]*identifyPermits{}, stop: stop, ids: ids, timeout: timeout}
	proxied := gatewayProxied()
	for _, id := range ids {
		s := probe
		if id != ids[0] {
			if s, err = NewSession(opts.Session); err != nil {
				return nil, err
			}
			// One HTTP client for the process: REST is not bound to a shard, and the
			// process's share of the global limit (RESTPerSecond) holds across its shards.
			s.Client = probe.Client
		}
		s.ShardID, s.ShardCount = id, count
		p := &identifyPermits{gate: gate, key: id % maxConc, life: life}
		if !proxied {
			// Through a proxy the frames are not visible: only Open's first Identify is gated.
			s.Dialer = p.dialer(s.Dialer)
		}
		s.AddHandler(func(*discordgo.Session, *discordgo.Ready) { p.done() })
		g := &openGuard{}
		s.Dialer = g.dialer(s.Dialer)
		sh.sessions[id] = s
		sh.guards[id] = g
		sh.permits[id] = p
	}
	return sh, nil
}

// Count is the bot's total shard count.
func (sh *Shards) Count() int { return sh.count }

// IDs are the shards this process runs, ascending.
func (sh *Shards) IDs() []int { return slices.Clone(sh.ids) }

// Session returns the session of a shard this process runs, or nil.
func (sh *Shards) Session(id int) *discordgo.Session { return sh.sessions[id] }

// Any is a session for REST calls, which are not bound to a shard.
func (sh *Shards) Any() *discordgo.Session { return sh.sessions[sh.ids[0]] }

// ForGuild returns the session of the shard that owns the guild, or nil when another process
// runs that shard (or the id is not a snowflake).
func (sh *Shards) ForGuild(guildID string) *discordgo.Session {
	id, err := ShardOf(guildID, sh.count)
	if err != nil {
		return nil
	}
	return sh.sessions[id]
}

// Owns reports whether this process runs the shard of the guild.
func (sh *Shards) Owns(guildID string) bool { return sh.ForGuild(guildID) != nil }

// readyTimeout is ShardOptions.OpenTimeout's default.
const readyTimeout = 2 * time.Minute

// Open identifies every shard, shards sharing a rate-limit key (id % max_concurrency) one at a
// time, spaced by the gate, and returns once every shard is READY (its session's State holds the
// bot user and its guilds). It stops at the first failure and closes what it opened. Every later
// Identify of a shard (discordgo's own, after op 9 or a refused resume) waits for the gate too
// (identifyPermits).
func (sh *Shards) Open(ctx context.Context) error {
	for _, id := range sh.ids {
		release, err := sh.gate.Acquire(ctx, id%sh.maxConc)
		if err != nil {
			sh.Close()
			return fmt.Errorf("discord: shard %d/%d: wait to identify: %w", id, sh.count, err)
		}
		// The permit is released at READY (or when the Identify fails).
		p := sh.permits[id]
		p.hold(release)
		err = openReady(ctx, sh.sessions[id], sh.guards[id], sh.timeout)
		if err != nil {
			p.done()
			sh.Close()
			return fmt.Errorf("discord: shard %d/%d: log in: %w", id, sh.count, err)
		}
	}
	return nil
}

// openReady opens a session and waits for its READY, for at most timeout and until ctx ends.
// discordgo's Open returns after the first event that follows the Identify, which is not READY
// when Discord answers op 9 (Invalid Session): discordgo then identifies again on its own and
// READY comes later. Open itself cannot be cancelled: the guard ends it by closing its connection.
func openReady(ctx context.Context, s *discordgo.Session, g *openGuard, timeout time.Duration) error {
	ready := make(chan struct{}, 1)
	remove := s.AddHandlerOnce(func(*discordgo.Session, *discordgo.Ready) {
		select {
		case ready <- struct{}{}:
		default:
		}
	})
	defer remove()
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("no READY within %v", timeout))
	defer cancel()
	g.begin()
	stop := context.AfterFunc(ctx, g.abort)
	err := s.Open()
	stop()
	g.end()
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("connecting: %w (%w)", context.Cause(ctx), err)
		}
		return err
	}
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for READY: %w", context.Cause(ctx))
	}
}

// Close closes every session; an Identify waiting for the gate gives up.
func (sh *Shards) Close() error {
	sh.stop()
	var errs []error
	for _, id := range sh.ids {
		if err := sh.sessions[id].Close(); err != nil && !errors.Is(err, discordgo.ErrWSAlreadyOpen) {
			errs = append(errs, fmt.Errorf("discord: close shard %d: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// AddHandler registers handler on every shard's session and returns one remover for all.
func (sh *Shards) AddHandler(handler any) func() {
	removers := make([]func(), 0, len(sh.ids))
	for _, id := range sh.ids {
		removers = append(removers, sh.sessions[id].AddHandler(handler))
	}
	return func() {
		for _, r := range removers {
			r()
		}
	}
}

// ChannelVoiceJoinManual sends the voice state update (main-gateway op 4) on the shard that owns
// the guild, as Discord requires: sent on another shard it is ignored.
func (sh *Shards) ChannelVoiceJoinManual(guildID, channelID string, mute, deaf bool) error {
	s := sh.ForGuild(guildID)
	if s == nil {
		return fmt.Errorf("discord: voice state update for guild %s: its shard is not run by this process", guildID)
	}
	return s.ChannelVoiceJoinManual(guildID, channelID, mute, deaf)
}

// ProcessShards is the share of count shards that process index of processes runs: the shards
// s with s % processes == index.
func ProcessShards(count, processes, index int) []int {
	var ids []int
	for s := index; s < count; s += max(processes, 1) {
		ids = append(ids, s)
	}
	return ids
}

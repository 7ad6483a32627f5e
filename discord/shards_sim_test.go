package discord

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	"github.com/banterbot/banter/store"
	"github.com/banterbot/banter/store/pgtest"
)

// guildsOnShards creates guilds until each of count shards owns one, and returns them by shard.
func guildsOnShards(t *testing.T, sim *discordsim.Server, count int) []discordsim.GuildID {
	t.Helper()
	byShard := make([]discordsim.GuildID, count)
	for i := 0; i < 64; i++ {
		g := sim.CreateGuild("g" + strconv.Itoa(i))
		sh, err := ShardOf(string(g), count)
		if err != nil {
			t.Fatal(err)
		}
		if byShard[sh] == "" {
			byShard[sh] = g
		}
		done := true
		for _, g := range byShard {
			done = done && g != ""
		}
		if done {
			return byShard
		}
	}
	t.Fatal("no guild on every shard")
	return nil
}

// TestShardsAgainstSimulator: two shards of one process, against a simulator that shards like
// Discord: each shard's session receives only its guilds' events, a voice state update goes on
// the owning shard (one sent on the other is ignored), and identifies are spaced so the
// session start limit is never hit.
func TestShardsAgainstSimulator(t *testing.T) {
	sim := simtest.Serve(t, discordsim.WithShards(2, 1), discordsim.WithIdentifySpacing(50*time.Millisecond))
	guilds := guildsOnShards(t, sim, 2)
	alice := sim.CreateUser("alice")
	var text [2]discordsim.ChannelID
	var voiceCh discordsim.ChannelID
	for i, g := range guilds {
		sim.AddMember(g, alice)
		text[i] = sim.CreateTextChannel(g, "general")
	}
	voiceCh = sim.CreateVoiceChannel(guilds[1], "lounge")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sh, err := NewShards(ctx, ShardOptions{Session: SessionOptions{Token: sim.Token(), APIURL: sim.APIBaseURL()},
		Gate: &LocalIdentifyGate{Spacing: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if sh.Count() != 2 {
		t.Fatalf("auto shard count = %d, want the simulator's 2", sh.Count())
	}
	var mu sync.Mutex
	got := map[int][]string{}         // shard -> guild ids of messages seen
	readyGuilds := map[int][]string{} // shard -> guild ids its READY listed
	readies := make(chan struct{}, 2)
	sh.AddHandler(func(s *discordgo.Session, r *discordgo.Ready) {
		mu.Lock()
		for _, g := range r.Guilds {
			readyGuilds[s.ShardID] = append(readyGuilds[s.ShardID], g.ID)
		}
		mu.Unlock()
		readies <- struct{}{}
	})
	seen := make(chan struct{}, 8)
	sh.AddHandler(func(s *discordgo.Session, m *discordgo.MessageCreate) {
		mu.Lock()
		got[s.ShardID] = append(got[s.ShardID], m.GuildID)
		mu.Unlock()
		seen <- struct{}{}
	})
	if err := sh.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	for range 2 {
		select {
		case <-readies:
		case <-ctx.Done():
			t.Fatal("READY not seen on every shard")
		}
	}
	mu.Lock()
	for i := range 2 {
		if ids := readyGuilds[i]; len(ids) != 1 || ids[0] != string(guilds[i]) {
			t.Errorf("shard %d's READY lists guilds %v, want only %s", i, ids, guilds[i])
		}
	}
	mu.Unlock()
	for i := range 2 {
		if _, err := sim.Post(ctx, alice, text[i], "hello shard "+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
		select {
		case <-seen:
		case <-ctx.Done():
			t.Fatal("message not delivered")
		}
	}
	mu.Lock()
	for i := range 2 {
		if len(got[i]) != 1 || got[i][0] != string(guilds[i]) {
			t.Errorf("shard %d saw messages of guilds %v, want only %s", i, got[i], guilds[i])
		}
	}
	mu.Unlock()

	// Op 4 on the wrong shard is ignored; routed through Shards it reaches the owner.
	if err := sh.Session(0).ChannelVoiceJoinManual(string(guilds[1]), string(voiceCh), false, false); err != nil {
		t.Fatal(err)
	}
	if _, err := simtest.WaitGateway(ctx, sim, discordsim.GatewayVoiceState, 1); err != nil {
		t.Fatal(err)
	}
	if _, in := sim.VoiceStateOf(guilds[1], sim.BotID()); in {
		t.Error("a voice state update sent on the wrong shard was acted on")
	}
	if err := sh.ChannelVoiceJoinManual(string(guilds[1]), string(voiceCh), false, false); err != nil {
		t.Fatal(err)
	}
	if _, err := simtest.WaitGateway(ctx, sim, discordsim.GatewayVoiceState, 2); err != nil {
		t.Fatal(err)
	}
	if vs, in := sim.VoiceStateOf(guilds[1], sim.BotID()); !in || vs.Channel != voiceCh {
		t.Errorf("routed voice state update: in=%v %+v", in, vs)
	}
	wrong := 0
	for _, e := range sim.GatewayEvents() {
		switch {
		case e.Kind == discordsim.GatewayIdentifyRateLimited:
			t.Errorf("identify of shard %d refused by the session start limit", e.Shard)
		case e.Kind == discordsim.GatewayVoiceState && e.WrongShard:
			wrong++
		}
	}
	if wrong != 1 {
		t.Errorf("%d voice state updates on the wrong shard, want 1", wrong)
	}
}

// TestReidentifyWaitsForGate: discordgo identifies again on its own after op 9 Invalid Session
// (and after a resume the gateway refuses); those identifies wait for the identify gate too.
// Shards with one rate-limit key (max_concurrency 1) get op 9 at the same moment, against a
// simulator that enforces the session start limit as Discord does (an Identify too soon for its
// key is answered with op 9): every shard identifies again, one after the other, and none is
// refused — within one process (its own gate), and across two (the Postgres store's gate, each
// process its own connection pool on one database).
func TestReidentifyWaitsForGate(t *testing.T) {
	const spacing = 200 * time.Millisecond
	local := func(t *testing.T) func() IdentifyGate {
		g := &LocalIdentifyGate{Spacing: spacing}
		return func() IdentifyGate { return g }
	}
	cases := []struct {
		name      string
		shards    int
		processes []string // the shards each process runs
		resumable bool
		gate      func(t *testing.T) func() IdentifyGate // a gate for each process
	}{
		{"one process, two shards, op 9 not resumable", 2, []string{"0-1"}, false, local},
		{"one process, two shards, op 9 resumable", 2, []string{"0-1"}, true, local}, // discordgo identifies anyway
		{"one process, three shards", 3, []string{"0-2"}, false, local},
		{"two processes, Postgres gate", 2, []string{"0", "1"}, false, postgresGates(spacing)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sim := simtest.Serve(t, discordsim.WithShards(tc.shards, 1), discordsim.WithIdentifySpacing(spacing))
			guildsOnShards(t, sim, tc.shards)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			gate := tc.gate(t)
			readies := make(chan int, 16)
			for _, ids := range tc.processes {
				sh, err := NewShards(ctx, ShardOptions{Session: SessionOptions{Token: sim.Token(), APIURL: sim.APIBaseURL()},
					IDs: ids, Gate: gate()})
				if err != nil {
					t.Fatal(err)
				}
				sh.AddHandler(func(s *discordgo.Session, _ *discordgo.Ready) { readies <- s.ShardID })
				if err := sh.Open(ctx); err != nil {
					t.Fatal(err)
				}
				defer sh.Close()
			}
			for range tc.shards {
				<-readies
			}
			if err := sim.ForceInvalidSession(tc.resumable); err != nil {
				t.Fatal(err)
			}
			again := map[int]bool{}
			for len(again) < tc.shards {
				select {
				case id := <-readies:
					again[id] = true
				case <-ctx.Done():
					t.Fatalf("shards READY again: %v; gateway events: %v", again, kinds(sim.GatewayEvents()))
				}
			}
			refused := 0
			for _, e := range sim.GatewayEvents() {
				if e.Kind == discordsim.GatewayIdentifyRateLimited {
					refused++
				}
			}
			if refused != 0 {
				t.Errorf("%d identifies refused by the session start limit (not spaced by the gate); events: %v", refused, kinds(sim.GatewayEvents()))
			}
		})
	}
}

// postgresGates returns, for a test, a maker of identify gates each on its own Postgres store
// (a process's pool) on one fresh database of a throwaway server. Without the server binaries
// the test is skipped, unless BANTER_REQUIRE_POSTGRES is set.
func postgresGates(spacing time.Duration) func(t *testing.T) func() IdentifyGate {
	return func(t *testing.T) func() IdentifyGate {
		ctx := context.Background()
		dsn := pgtest.Database(ctx, t)
		return func() IdentifyGate {
			st, err := store.OpenPostgres(ctx, dsn, store.PostgresOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st.IdentifyGate(spacing)
		}
	}
}

// kinds lists gateway events by kind and shard, for failure messages.
func kinds(events []discordsim.GatewayEvent) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.Kind.String()+"/"+strconv.Itoa(e.Shard))
	}
	return out
}

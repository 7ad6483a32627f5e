package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/banterbot/banter/discord"
	"github.com/banterbot/banter/store"
)

// newShards builds the gateway sessions of the shards this process runs (discord.shards,
// discord.shardIds or the process's share). With the Postgres store, identifies are spaced
// across every process of the bot through the database; otherwise within this process.
func (a *app) newShards(ctx context.Context, st store.Store, rest *discord.RESTMetrics) (*discord.Shards, error) {
	d := a.cfg.Discord
	count := 0 // auto: GET /gateway/bot
	if d.Shards != "auto" {
		n, err := strconv.Atoi(d.Shards)
		if err != nil {
			return nil, fmt.Errorf("discord.shards: %q: %w", d.Shards, err)
		}
		count = n
	}
	opts := discord.ShardOptions{
		Session:   discord.SessionOptions{Token: a.cfg.Secrets.DiscordToken, APIURL: d.APIURL, RESTMetrics: rest},
		Count:     count,
		IDs:       d.ShardIDs,
		Processes: d.ProcessCount, ProcessIndex: d.ProcessIndex,
		RESTShare: true,
	}
	if pg, ok := st.(*store.Postgres); ok {
		opts.Gate = pg.IdentifyGate(discord.IdentifySpacing)
	}
	sh, err := discord.NewShards(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("discord: log in: %w (check DISCORD_TOKEN and discord.apiUrl)", err)
	}
	return sh, nil
}

// shardReadiness tracks which of the process's shards are connected: /readyz is ready only
// when all are.
type shardReadiness struct {
	mu sync.Mutex // guards following
	up map[int]bool
}

func newShardReadiness(ids []int) *shardReadiness {
	r := &shardReadiness{up: map[int]bool{}}
	for _, id := range ids {
		r.up[id] = false
	}
	return r
}

func (r *shardReadiness) set(id int, up bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.up[id]; ok {
		r.up[id] = up
	}
}

func (r *shardReadiness) ready() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, up := range r.up {
		if !up {
			return fmt.Errorf("shard %d is not connected to the Discord gateway", id)
		}
	}
	return nil
}

package memory

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/banterbot/banter/store"
)

// Cache holds the current facts of each guild for recall, so that a turn reads no database:
// the extractor and the /memory commands invalidate a guild when they change its facts, and
// an entry older than the TTL is read again (facts changed by another process on a shared
// Postgres store show within it).
type Cache struct {
	st  store.Memory
	ttl time.Duration
	now func() time.Time

	mu     sync.Mutex // guards guilds
	guilds map[string]cachedFacts
}

type cachedFacts struct {
	facts []store.Fact
	at    time.Time
}

// maxRecallPool is how many of a guild's newest current facts recall considers.
const maxRecallPool = 5000

// NewCache returns a cache over st whose entries live ttl (0: read every time).
func NewCache(st store.Memory, ttl time.Duration) *Cache {
	return &Cache{st: st, ttl: ttl, now: time.Now, guilds: map[string]cachedFacts{}}
}

// Current returns the guild's current facts, newest first. The slice is shared: do not modify.
func (c *Cache) Current(ctx context.Context, guild string) ([]store.Fact, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.guilds[guild]
	c.mu.Unlock()
	if ok && now.Sub(e.at) < c.ttl {
		return e.facts, nil
	}
	fs, err := c.st.Facts(ctx, store.FactQuery{GuildID: guild, Limit: maxRecallPool})
	if err != nil {
		return nil, fmt.Errorf("memory: facts of %s: %w", guild, err)
	}
	if c.ttl > 0 {
		c.mu.Lock()
		c.guilds[guild] = cachedFacts{facts: fs, at: now}
		c.mu.Unlock()
	}
	return fs, nil
}

// Invalidate drops a guild's entry ("" drops every guild's).
func (c *Cache) Invalidate(guild string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if guild == "" {
		clear(c.guilds)
		return
	}
	delete(c.guilds, guild)
}

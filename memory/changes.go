package memory

import (
	"strings"
	"time"
)

// Changes made by other processes. On a Postgres store shared by several processes, the store
// tells each of them the guild of every change to facts or pauses that any process commits
// (store.Memory.MemoryChanges); the extractor then drops what it cached of that guild (the
// facts recall reads, the members' pauses), so a forget-me, a deleted fact or a pause in one
// process holds in the others from its commit on, not cacheTTL later.

// Bounds of the pause before listening again after the store's listening connection failed.
const (
	followRetryMin = 500 * time.Millisecond
	followRetryMax = 30 * time.Second
)

// followChanges listens to the store's memory changes until the extractor closes, listening
// again after a failure (each new listen first drops every cached guild: changes may have been
// missed meanwhile). It returns at once for a store one process owns.
func (e *Extractor) followChanges() {
	defer close(e.followed)
	wait := followRetryMin
	for {
		heard := false
		err := e.opts.Store.MemoryChanges(e.ctx, func(guild string) {
			if guild != "" {
				heard = true
			}
			e.changed(guild)
		})
		if err == nil || e.ctx.Err() != nil {
			return
		}
		if heard {
			wait = followRetryMin
		}
		e.opts.Logger.Warn("memory_changes_lost", "error", err.Error(), "retry_in", wait.String())
		if !pause(e.ctx, wait) {
			return
		}
		wait = min(2*wait, followRetryMax)
	}
}

// changed drops what is cached of a guild ("" for every guild): its facts and its members'
// pauses, read again from the store when next needed.
func (e *Extractor) changed(guild string) {
	e.cache.Invalidate(guild)
	e.mu.Lock()
	defer e.mu.Unlock()
	if guild == "" {
		clear(e.pauses)
		return
	}
	prefix := guild + "\x00"
	for k := range e.pauses {
		if strings.HasPrefix(k, prefix) {
			delete(e.pauses, k)
		}
	}
}

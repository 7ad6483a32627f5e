package store

import (
	"context"
	"fmt"
)

// Memory changes across processes. Processes sharing one Postgres store (sharding) each cache a
// guild's current facts and members' pauses for a few seconds (package memory). So that a change
// one process commits (a fact learned, corrected or deleted, a forget-me, a pause) reaches the
// others' caches at once rather than when their entries expire, triggers on facts and
// memory_pauses notify the channel memoryChannel with the guild's id, in the transaction that
// makes the change (Postgres delivers a notification at commit, once per distinct payload of a
// transaction), and MemoryChanges listens. SQLite serves one process: its MemoryChanges returns
// at once.

// memoryChannel is the Postgres notification channel of memory changes.
const memoryChannel = "banter_memory"

// pgMemoryNotifyMigration adds the triggers that notify memoryChannel.
const pgMemoryNotifyMigration = `CREATE FUNCTION banter_memory_notify() RETURNS trigger AS $$
		BEGIN
			IF TG_OP = 'DELETE' THEN
				PERFORM pg_notify('` + memoryChannel + `', OLD.guild_id);
			ELSE
				PERFORM pg_notify('` + memoryChannel + `', NEW.guild_id);
				IF TG_OP = 'UPDATE' AND OLD.guild_id <> NEW.guild_id THEN
					PERFORM pg_notify('` + memoryChannel + `', OLD.guild_id);
				END IF;
			END IF;
			RETURN NULL;
		END $$ LANGUAGE plpgsql;
		CREATE TRIGGER facts_notify AFTER INSERT OR UPDATE OR DELETE ON facts
			FOR EACH ROW EXECUTE FUNCTION banter_memory_notify();
		CREATE TRIGGER memory_pauses_notify AFTER INSERT OR UPDATE OR DELETE ON memory_pauses
			FOR EACH ROW EXECUTE FUNCTION banter_memory_notify();`

// MemoryChanges implements Memory: it listens on one connection of its own and calls changed
// with the guild of each memory change any process commits, first with "" (every guild:
// changes may have been missed before it listened), until ctx ends (nil) or the connection
// fails (its error: the caller listens again, and changes made meanwhile are missed).
func (s *Postgres) MemoryChanges(ctx context.Context, changed func(guild string)) error {
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("store: listen for memory changes: %w", err)
	}
	conn := pc.Hijack() // a listening connection never goes back to the pool
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+memoryChannel); err != nil {
		return fmt.Errorf("store: listen for memory changes: %w", err)
	}
	changed("")
	for {
		n, err := conn.WaitForNotification(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("store: listen for memory changes: %w", err)
		}
		changed(n.Payload)
	}
}

// MemoryChanges implements Memory for SQLite: one process owns the store and its own changes
// reach its caches directly, so there is nothing to listen to; it returns nil at once.
func (m factsSQL) MemoryChanges(context.Context, func(string)) error { return nil }

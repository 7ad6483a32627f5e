package store

import (
	"context"
	"fmt"
)

// Spend is what one guild's calls of one model slot cost on one day, in US dollars.
type Spend struct {
	Guild string // "" for calls outside a guild (DMs)
	Slot  string
	USD   float64
}

// SpendLedger keeps each day's spend by guild and slot (the daily budgets). Days are the
// caller's names (budget days, e.g. "2026-11-27"). On Postgres every process adds to the same
// rows: each addition is one atomic statement, so none is lost.
type SpendLedger interface {
	// AddSpend adds usd to the day's spend of guild and slot.
	AddSpend(ctx context.Context, day, guild, slot string, usd float64) error
	// SpendTotals returns the day's spend of guild and of every guild together.
	SpendTotals(ctx context.Context, day, guild string) (guildUSD, allUSD float64, err error)
	// DaySpend returns the day's rows, by guild then slot.
	DaySpend(ctx context.Context, day string) ([]Spend, error)
	// ClaimCapNotice claims the day's cap notice of guild: true for the first claim of the day
	// and guild, false for every later one, in any process on the database (one atomic
	// insert-if-absent), so the notice is said once.
	ClaimCapNotice(ctx context.Context, day, guild string) (bool, error)
	// ReleaseCapNotice gives back a claim whose notice could not be sent, so that the next
	// claim of the day (in any process) wins and says it.
	ReleaseCapNotice(ctx context.Context, day, guild string) error
	// PruneSpend deletes the spend and the cap-notice claims of the days before day, and
	// returns how many spend rows went.
	PruneSpend(ctx context.Context, before string) (int64, error)
}

// NewSpendLedger returns the spend ledger of st (SQLite or Postgres, instrumented or not);
// false when st keeps none.
func NewSpendLedger(st Store) (SpendLedger, bool) {
	if i, ok := st.(*instrumented); ok {
		st = i.s
	}
	l, ok := st.(SpendLedger)
	return l, ok
}

// capNoticesMigration holds the cap-notice claims: one row per budget day and guild whose
// notice was said (the primary key makes a claim an insert-if-absent).
const capNoticesMigration = `CREATE TABLE cap_notices (day TEXT NOT NULL, guild_id TEXT NOT NULL, PRIMARY KEY (day, guild_id));`

var (
	_ SpendLedger = (*SQLite)(nil)
	_ SpendLedger = (*Postgres)(nil)
)

// AddSpend implements SpendLedger.
func (s *SQLite) AddSpend(ctx context.Context, day, guild, slot string, usd float64) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO spend (day, guild_id, slot, usd) VALUES (?, ?, ?, ?)
		ON CONFLICT (day, guild_id, slot) DO UPDATE SET usd = usd + excluded.usd`, day, guild, slot, usd)
	if err != nil {
		return fmt.Errorf("store: add spend of %s/%s on %s: %w", guild, slot, day, err)
	}
	return nil
}

// SpendTotals implements SpendLedger.
func (s *SQLite) SpendTotals(ctx context.Context, day, guild string) (float64, float64, error) {
	var g, all float64
	err := s.rdb.QueryRowContext(ctx, `SELECT COALESCE(SUM(CASE WHEN guild_id = ? THEN usd END), 0), COALESCE(SUM(usd), 0)
		FROM spend WHERE day = ?`, guild, day).Scan(&g, &all)
	if err != nil {
		return 0, 0, fmt.Errorf("store: spend totals of %s: %w", day, err)
	}
	return g, all, nil
}

// DaySpend implements SpendLedger.
func (s *SQLite) DaySpend(ctx context.Context, day string) ([]Spend, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT guild_id, slot, usd FROM spend WHERE day = ? ORDER BY guild_id, slot`, day)
	if err != nil {
		return nil, fmt.Errorf("store: spend of %s: %w", day, err)
	}
	defer rows.Close()
	return scanSpend(rows, day)
}

// AddSpend implements SpendLedger: one statement, so concurrent additions of every process
// add up.
func (s *Postgres) AddSpend(ctx context.Context, day, guild, slot string, usd float64) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO spend AS sp (day, guild_id, slot, usd) VALUES ($1, $2, $3, $4)
		ON CONFLICT (day, guild_id, slot) DO UPDATE SET usd = sp.usd + EXCLUDED.usd`, day, guild, slot, usd)
	if err != nil {
		return fmt.Errorf("store: add spend of %s/%s on %s: %w", guild, slot, day, err)
	}
	return nil
}

// SpendTotals implements SpendLedger.
func (s *Postgres) SpendTotals(ctx context.Context, day, guild string) (float64, float64, error) {
	var g, all float64
	err := s.pool.QueryRow(ctx, `SELECT COALESCE(SUM(usd) FILTER (WHERE guild_id = $2), 0)::float8, COALESCE(SUM(usd), 0)::float8
		FROM spend WHERE day = $1`, day, guild).Scan(&g, &all)
	if err != nil {
		return 0, 0, fmt.Errorf("store: spend totals of %s: %w", day, err)
	}
	return g, all, nil
}

// DaySpend implements SpendLedger.
func (s *Postgres) DaySpend(ctx context.Context, day string) ([]Spend, error) {
	rows, err := s.pool.Query(ctx, `SELECT guild_id, slot, usd FROM spend WHERE day = $1 ORDER BY guild_id, slot`, day)
	if err != nil {
		return nil, fmt.Errorf("store: spend of %s: %w", day, err)
	}
	defer rows.Close()
	return scanSpend(rows, day)
}

// ClaimCapNotice implements SpendLedger.
func (s *SQLite) ClaimCapNotice(ctx context.Context, day, guild string) (bool, error) {
	res, err := s.db.ExecContext(ctx, `INSERT INTO cap_notices (day, guild_id) VALUES (?, ?) ON CONFLICT DO NOTHING`, day, guild)
	if err != nil {
		return false, fmt.Errorf("store: claim the cap notice of %s on %s: %w", guild, day, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: claim the cap notice of %s on %s: %w", guild, day, err)
	}
	return n == 1, nil
}

// ReleaseCapNotice implements SpendLedger.
func (s *SQLite) ReleaseCapNotice(ctx context.Context, day, guild string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM cap_notices WHERE day=? AND guild_id=?`, day, guild); err != nil {
		return fmt.Errorf("store: release the cap notice of %s on %s: %w", guild, day, err)
	}
	return nil
}

// PruneSpend implements SpendLedger.
func (s *SQLite) PruneSpend(ctx context.Context, before string) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM spend WHERE day < ?`, before)
	if err != nil {
		return 0, fmt.Errorf("store: prune spend before %s: %w", before, err)
	}
	n, _ := res.RowsAffected()
	if _, err := s.db.ExecContext(ctx, `DELETE FROM cap_notices WHERE day < ?`, before); err != nil {
		return n, fmt.Errorf("store: prune cap notices before %s: %w", before, err)
	}
	return n, nil
}

// ClaimCapNotice implements SpendLedger: the primary key makes the insert the claim, so of
// processes claiming together exactly one inserts.
func (s *Postgres) ClaimCapNotice(ctx context.Context, day, guild string) (bool, error) {
	tag, err := s.pool.Exec(ctx, `INSERT INTO cap_notices (day, guild_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, day, guild)
	if err != nil {
		return false, fmt.Errorf("store: claim the cap notice of %s on %s: %w", guild, day, err)
	}
	return tag.RowsAffected() == 1, nil
}

// ReleaseCapNotice implements SpendLedger.
func (s *Postgres) ReleaseCapNotice(ctx context.Context, day, guild string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM cap_notices WHERE day=$1 AND guild_id=$2`, day, guild); err != nil {
		return fmt.Errorf("store: release the cap notice of %s on %s: %w", guild, day, err)
	}
	return nil
}

// PruneSpend implements SpendLedger.
func (s *Postgres) PruneSpend(ctx context.Context, before string) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM spend WHERE day < $1`, before)
	if err != nil {
		return 0, fmt.Errorf("store: prune spend before %s: %w", before, err)
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM cap_notices WHERE day < $1`, before); err != nil {
		return tag.RowsAffected(), fmt.Errorf("store: prune cap notices before %s: %w", before, err)
	}
	return tag.RowsAffected(), nil
}

// scanSpend reads DaySpend's rows (guild_id, slot, usd), on either driver.
func scanSpend(rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}, day string) ([]Spend, error) {
	var out []Spend
	for rows.Next() {
		var sp Spend
		if err := rows.Scan(&sp.Guild, &sp.Slot, &sp.USD); err != nil {
			return nil, fmt.Errorf("store: spend of %s: %w", day, err)
		}
		out = append(out, sp)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: spend of %s: %w", day, err)
	}
	return out, nil
}

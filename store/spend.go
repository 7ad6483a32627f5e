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
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(CASE WHEN guild_id = ? THEN usd END), 0), COALESCE(SUM(usd), 0)
		FROM spend WHERE day = ?`, guild, day).Scan(&g, &all)
	if err != nil {
		return 0, 0, fmt.Errorf("store: spend totals of %s: %w", day, err)
	}
	return g, all, nil
}

// DaySpend implements SpendLedger.
func (s *SQLite) DaySpend(ctx context.Context, day string) ([]Spend, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT guild_id, slot, usd FROM spend WHERE day = ? ORDER BY guild_id, slot`, day)
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

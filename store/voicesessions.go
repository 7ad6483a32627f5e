package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Kept voice sessions (docs/voice.md "Sessions"): a voice session joined by /join or !join is
// recorded when it starts and deleted when it ends for a reason that means "stay out" (a
// /leave, a kick, alone, max_session…); a graceful shutdown and a crash leave the record, and
// the next process that owns the guild's shard joins the channel again.

// VoiceSession is the record of the voice session the bot should be in in one guild (one per
// guild, as the sessions themselves).
type VoiceSession struct {
	GuildID   string
	ChannelID string
	// RequestedBy is the member who asked (/join, !join); "" once they have run forget-me.
	RequestedBy string
	// JoinedAt is when the session started on their request (kept across rejoins).
	JoinedAt time.Time
}

// VoiceSessions keeps the records of the voice sessions joined by command.
type VoiceSessions interface {
	// KeepVoiceSession records the guild's session, replacing its previous record.
	KeepVoiceSession(ctx context.Context, v VoiceSession) error
	// DropVoiceSession deletes the guild's record when it names channelID and was joined at or
	// before since (to the millisecond): the end of a session, or of the record read at start,
	// drops its own record (or an older one of the same channel), never a newer session's
	// (one moved elsewhere, or one a /join started since). An absent record is no error.
	DropVoiceSession(ctx context.Context, guildID, channelID string, since time.Time) error
	// KeptVoiceSessions returns every record, oldest first.
	KeptVoiceSessions(ctx context.Context) ([]VoiceSession, error)
}

// voiceSessionsMigration is the table both drivers create (same SQL).
const voiceSessionsMigration = `CREATE TABLE voice_sessions (
			guild_id     TEXT PRIMARY KEY,
			channel_id   TEXT NOT NULL,
			requested_by TEXT NOT NULL DEFAULT '',
			joined_at    BIGINT NOT NULL
		);`

// KeepVoiceSession implements VoiceSessions.
func (m factsSQL) KeepVoiceSession(ctx context.Context, v VoiceSession) error {
	if v.GuildID == "" || v.ChannelID == "" {
		return errors.New("store: keep voice session: guild and channel are required")
	}
	_, err := m.db.exec(ctx, `INSERT INTO voice_sessions (guild_id, channel_id, requested_by, joined_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (guild_id) DO UPDATE SET channel_id = excluded.channel_id,
		requested_by = excluded.requested_by, joined_at = excluded.joined_at`,
		v.GuildID, v.ChannelID, v.RequestedBy, ms(v.JoinedAt))
	if err != nil {
		return fmt.Errorf("store: keep voice session %s/%s: %w", v.GuildID, v.ChannelID, err)
	}
	return nil
}

// DropVoiceSession implements VoiceSessions.
func (m factsSQL) DropVoiceSession(ctx context.Context, guildID, channelID string, since time.Time) error {
	if _, err := m.db.exec(ctx, `DELETE FROM voice_sessions WHERE guild_id = ? AND channel_id = ? AND joined_at <= ?`,
		guildID, channelID, ms(since)); err != nil {
		return fmt.Errorf("store: drop voice session %s/%s: %w", guildID, channelID, err)
	}
	return nil
}

// KeptVoiceSessions implements VoiceSessions.
func (m factsSQL) KeptVoiceSessions(ctx context.Context) ([]VoiceSession, error) {
	rows, err := m.db.query(ctx, `SELECT guild_id, channel_id, requested_by, joined_at FROM voice_sessions
		ORDER BY joined_at, guild_id`)
	if err != nil {
		return nil, fmt.Errorf("store: kept voice sessions: %w", err)
	}
	defer rows.Close()
	var out []VoiceSession
	for rows.Next() {
		var v VoiceSession
		var at int64
		if err := rows.Scan(&v.GuildID, &v.ChannelID, &v.RequestedBy, &at); err != nil {
			return nil, fmt.Errorf("store: kept voice sessions: %w", err)
		}
		v.JoinedAt = fromMS(at)
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: kept voice sessions: %w", err)
	}
	return out, nil
}

// The VoiceSessions methods of the instrumented store.

func (i *instrumented) KeepVoiceSession(ctx context.Context, v VoiceSession) error {
	return i.count("keep_voice_session", i.s.KeepVoiceSession(ctx, v))
}

func (i *instrumented) DropVoiceSession(ctx context.Context, guildID, channelID string, since time.Time) error {
	return i.count("drop_voice_session", i.s.DropVoiceSession(ctx, guildID, channelID, since))
}

func (i *instrumented) KeptVoiceSessions(ctx context.Context) ([]VoiceSession, error) {
	vs, err := i.s.KeptVoiceSessions(ctx)
	return vs, i.count("kept_voice_sessions", err)
}

package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Open voice turns (docs/voice.md "Open turns"): the utterance the bot is answering in a
// guild's voice channel is recorded while it answers, so that a crash does not lose it. The
// next voice session of the guild takes the record (read and deleted at once) and answers the
// utterance again, keeps it in its conversation, or logs it as too old.

// OpenVoiceTurn is the utterance the bot is answering in one guild's voice session (one a
// guild: the bot answers one turn at a time).
type OpenVoiceTurn struct {
	GuildID   string
	ChannelID string
	// TurnID is the turn's id in its session.
	TurnID      string
	SpeakerID   string
	SpeakerName string
	Transcript  string
	// Addressed: the utterance named the bot.
	Addressed bool
	// Audio is the utterance's length.
	Audio time.Duration
	// HeardAt is when the utterance was first heard (its end of speech), kept when a recovered
	// turn is recorded again.
	HeardAt time.Time
}

// OpenVoiceTurns keeps the utterance the bot is answering in each guild's voice session.
type OpenVoiceTurns interface {
	// KeepOpenVoiceTurn records the guild's open turn, replacing its previous record.
	KeepOpenVoiceTurn(ctx context.Context, t OpenVoiceTurn) error
	// DropOpenVoiceTurn deletes the guild's record if it is of turn turnID (a newer turn's
	// record stays). An absent record is no error.
	DropOpenVoiceTurn(ctx context.Context, guildID, turnID string) error
	// TakeOpenVoiceTurn deletes the guild's record and returns it (false: there was none), in
	// one statement: two sessions never both take it.
	TakeOpenVoiceTurn(ctx context.Context, guildID string) (OpenVoiceTurn, bool, error)
}

// openVoiceTurnsMigration is the table both drivers create (same SQL).
const openVoiceTurnsMigration = `CREATE TABLE voice_open_turns (
			guild_id     TEXT PRIMARY KEY,
			channel_id   TEXT NOT NULL,
			turn_id      TEXT NOT NULL,
			speaker_id   TEXT NOT NULL,
			speaker_name TEXT NOT NULL DEFAULT '',
			transcript   TEXT NOT NULL,
			addressed    INTEGER NOT NULL DEFAULT 0,
			audio_ms     BIGINT NOT NULL DEFAULT 0,
			heard_at     BIGINT NOT NULL
		);`

// KeepOpenVoiceTurn implements OpenVoiceTurns.
func (m factsSQL) KeepOpenVoiceTurn(ctx context.Context, t OpenVoiceTurn) error {
	if t.GuildID == "" || t.ChannelID == "" || t.TurnID == "" || t.SpeakerID == "" {
		return errors.New("store: keep open voice turn: guild, channel, turn and speaker are required")
	}
	_, err := m.db.exec(ctx, `INSERT INTO voice_open_turns (guild_id, channel_id, turn_id, speaker_id, speaker_name,
		transcript, addressed, audio_ms, heard_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (guild_id) DO UPDATE SET channel_id = excluded.channel_id, turn_id = excluded.turn_id,
		speaker_id = excluded.speaker_id, speaker_name = excluded.speaker_name, transcript = excluded.transcript,
		addressed = excluded.addressed, audio_ms = excluded.audio_ms, heard_at = excluded.heard_at`,
		t.GuildID, t.ChannelID, t.TurnID, t.SpeakerID, t.SpeakerName, t.Transcript, boolInt(t.Addressed),
		t.Audio.Milliseconds(), ms(t.HeardAt))
	if err != nil {
		return fmt.Errorf("store: keep open voice turn %s/%s: %w", t.GuildID, t.TurnID, err)
	}
	return nil
}

// DropOpenVoiceTurn implements OpenVoiceTurns.
func (m factsSQL) DropOpenVoiceTurn(ctx context.Context, guildID, turnID string) error {
	if _, err := m.db.exec(ctx, `DELETE FROM voice_open_turns WHERE guild_id = ? AND turn_id = ?`,
		guildID, turnID); err != nil {
		return fmt.Errorf("store: drop open voice turn %s/%s: %w", guildID, turnID, err)
	}
	return nil
}

// TakeOpenVoiceTurn implements OpenVoiceTurns.
func (m factsSQL) TakeOpenVoiceTurn(ctx context.Context, guildID string) (OpenVoiceTurn, bool, error) {
	t := OpenVoiceTurn{GuildID: guildID}
	found := false
	err := m.db.tx(ctx, func(db factDB) error {
		// One transaction on the writer: the row read is the row deleted.
		rows, err := db.query(ctx, `DELETE FROM voice_open_turns WHERE guild_id = ?
			RETURNING channel_id, turn_id, speaker_id, speaker_name, transcript, addressed, audio_ms, heard_at`, guildID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var addressed, audio, at int64
			if err := rows.Scan(&t.ChannelID, &t.TurnID, &t.SpeakerID, &t.SpeakerName, &t.Transcript,
				&addressed, &audio, &at); err != nil {
				return err
			}
			t.Addressed, t.Audio, t.HeardAt, found = addressed != 0, time.Duration(audio)*time.Millisecond, fromMS(at), true
		}
		return rows.Err()
	})
	if err != nil {
		return OpenVoiceTurn{}, false, fmt.Errorf("store: take open voice turn of %s: %w", guildID, err)
	}
	return t, found, nil
}

// The OpenVoiceTurns methods of the instrumented store.

func (i *instrumented) KeepOpenVoiceTurn(ctx context.Context, t OpenVoiceTurn) error {
	return i.count("keep_open_voice_turn", i.s.KeepOpenVoiceTurn(ctx, t))
}

func (i *instrumented) DropOpenVoiceTurn(ctx context.Context, guildID, turnID string) error {
	return i.count("drop_open_voice_turn", i.s.DropOpenVoiceTurn(ctx, guildID, turnID))
}

func (i *instrumented) TakeOpenVoiceTurn(ctx context.Context, guildID string) (OpenVoiceTurn, bool, error) {
	t, ok, err := i.s.TakeOpenVoiceTurn(ctx, guildID)
	return t, ok, i.count("take_open_voice_turn", err)
}

package store

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Instrument returns s counting every call in banter_store_operations_total{op,result}
// (result: ok, not_found, forgotten, error) registered on reg, for the store-errors alert
// (deploy/prometheus/alerts.yml). Close is passed through uncounted.
func Instrument(s Store, reg prometheus.Registerer) Store {
	ops := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "banter_store_operations_total",
		Help: "Store calls by operation and result (ok, not_found, forgotten: refused by a forget-me watermark, error).",
	}, []string{"op", "result"})
	reg.MustRegister(ops)
	return &instrumented{s: s, ops: ops}
}

type instrumented struct {
	s   Store
	ops *prometheus.CounterVec
}

func (i *instrumented) count(op string, err error) error {
	result := "ok"
	switch {
	case errors.Is(err, ErrNotFound):
		result = "not_found"
	case errors.Is(err, ErrForgotten):
		result = "forgotten"
	case err != nil:
		result = "error"
	}
	i.ops.WithLabelValues(op, result).Inc()
	return err
}

func (i *instrumented) SaveMessage(ctx context.Context, m Message) error {
	return i.count("save_message", i.s.SaveMessage(ctx, m))
}

// SaveMessages counts the call (ok or error) as save_messages, and each message of it the store
// refused as save_messages forgotten.
func (i *instrumented) SaveMessages(ctx context.Context, ms []Message) ([]error, error) {
	results, err := i.s.SaveMessages(ctx, ms)
	for _, r := range results {
		if errors.Is(r, ErrForgotten) {
			i.ops.WithLabelValues("save_messages", "forgotten").Inc()
		}
	}
	return results, i.count("save_messages", err)
}

func (i *instrumented) EditMessage(ctx context.Context, id, content string, editedAt time.Time) error {
	return i.count("edit_message", i.s.EditMessage(ctx, id, content, editedAt))
}

func (i *instrumented) DeleteMessage(ctx context.Context, id string) error {
	return i.count("delete_message", i.s.DeleteMessage(ctx, id))
}

func (i *instrumented) Message(ctx context.Context, id string) (Message, error) {
	m, err := i.s.Message(ctx, id)
	return m, i.count("message", err)
}

func (i *instrumented) RecentMessages(ctx context.Context, channelID string, before time.Time, limit int) ([]Message, error) {
	ms, err := i.s.RecentMessages(ctx, channelID, before, limit)
	return ms, i.count("recent_messages", err)
}

func (i *instrumented) SearchMessages(ctx context.Context, q SearchQuery) ([]Message, error) {
	ms, err := i.s.SearchMessages(ctx, q)
	return ms, i.count("search_messages", err)
}

func (i *instrumented) SavePersona(ctx context.Context, p UserPersona) error {
	return i.count("save_persona", i.s.SavePersona(ctx, p))
}

func (i *instrumented) Personas(ctx context.Context, userIDs []string) (map[string]UserPersona, error) {
	ps, err := i.s.Personas(ctx, userIDs)
	return ps, i.count("personas", err)
}

func (i *instrumented) RecordPrompt(ctx context.Context, p Prompt) error {
	return i.count("record_prompt", i.s.RecordPrompt(ctx, p))
}

func (i *instrumented) CountPrompts(ctx context.Context, channelID string, since time.Time) (map[PromptKind]int, error) {
	n, err := i.s.CountPrompts(ctx, channelID, since)
	return n, i.count("count_prompts", err)
}

func (i *instrumented) CountUserPrompts(ctx context.Context, channelID, userID string, since time.Time) (int, error) {
	n, err := i.s.CountUserPrompts(ctx, channelID, userID, since)
	return n, i.count("count_user_prompts", err)
}

func (i *instrumented) OpenTurn(ctx context.Context, t Turn) error {
	return i.count("open_turn", i.s.OpenTurn(ctx, t))
}

func (i *instrumented) CloseTurns(ctx context.Context, ids []string, outcome string, at time.Time) error {
	return i.count("close_turns", i.s.CloseTurns(ctx, ids, outcome, at))
}

func (i *instrumented) SetTurnReply(ctx context.Context, messageID, reply string) error {
	return i.count("set_turn_reply", i.s.SetTurnReply(ctx, messageID, reply))
}

func (i *instrumented) DropTurn(ctx context.Context, messageID string) error {
	return i.count("drop_turn", i.s.DropTurn(ctx, messageID))
}

func (i *instrumented) OpenTurns(ctx context.Context, guildID string) ([]Turn, error) {
	ts, err := i.s.OpenTurns(ctx, guildID)
	return ts, i.count("open_turns", err)
}

func (i *instrumented) UnhandledMessages(ctx context.Context, channelID string, since time.Time, limit int) ([]string, error) {
	ids, err := i.s.UnhandledMessages(ctx, channelID, since, limit)
	return ids, i.count("unhandled_messages", err)
}

func (i *instrumented) MarkHandled(ctx context.Context, ids []string) error {
	return i.count("mark_handled", i.s.MarkHandled(ctx, ids))
}

func (i *instrumented) Prune(ctx context.Context, cutoff, now time.Time) (int, error) {
	n, err := i.s.Prune(ctx, cutoff, now)
	return n, i.count("prune", err)
}

func (i *instrumented) Close() error { return i.s.Close() }

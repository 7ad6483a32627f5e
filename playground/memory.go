package playground

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/store"
)

// The memory panel: what banter remembers about each member of the simulated server (read
// from the bot's own store, in the order /memory show numbers it), and the forget controls,
// which run the bot's real /memory slash command as the member, through the Discord
// simulator. GET /api/memory and POST /api/memory/{action} (docs/playground.md).

// MemoryStore is what the panel reads of the bot's store; store.Store satisfies it.
type MemoryStore interface {
	Facts(ctx context.Context, q store.FactQuery) ([]store.Fact, error)
	Message(ctx context.Context, id string) (store.Message, error)
	MemoryPaused(ctx context.Context, guildID, userID string) (bool, error)
}

// memoryShown is how many facts of a member /memory show lists (text/memory_commands.go): the
// panel shows the same list, so its numbers are the command's.
const memoryShown = 25

// MemoryView is GET /api/memory.
type MemoryView struct {
	// Enabled is memory.enabled for the simulated server, as the bot runs it.
	Enabled bool   `json:"enabled"`
	GuildID string `json:"guild_id"`
	// Members are the server's members (the bot left out), each with their current facts.
	Members []MemberMemory `json:"members"`
	// Server are the current facts about the server itself.
	Server []FactView `json:"server_facts"`
}

// MemberMemory is what banter remembers about one member.
type MemberMemory struct {
	ID     string     `json:"id"`
	Name   string     `json:"name"`
	Paused bool       `json:"paused"`
	Facts  []FactView `json:"facts"`
}

// FactView is one current fact: its number in the member's /memory show, its statement, when
// it was noted, and the messages it came from.
type FactView struct {
	ID        int64        `json:"id"`
	Number    int          `json:"number"`
	Statement string       `json:"statement"`
	CreatedAt time.Time    `json:"created_at"`
	Sources   []SourceView `json:"sources"`
}

// SourceView is a fact's source message (Content empty when it is no longer stored).
type SourceView struct {
	ID        string    `json:"id"`
	ChannelID string    `json:"channel_id,omitempty"`
	Author    string    `json:"author,omitempty"`
	Content   string    `json:"content,omitempty"`
	Time      time.Time `json:"time,omitzero"`
}

// memoryAction is POST /api/memory/{action}'s body.
type memoryAction struct {
	// Member is a member's name or user id.
	Member string `json:"member"`
	// FactID is the fact to forget (forget only; GET /api/memory gives the ids).
	FactID int64 `json:"fact_id"`
}

// MemoryResult is POST /api/memory/{action}'s answer: the bot's own answer to the command.
type MemoryResult struct {
	Action string `json:"action"`
	Member string `json:"member"`
	Answer string `json:"answer"`
}

var memoryActions = []string{"forget", "forget-me", "pause", "resume"}

var errNoStore = errors.New("playground: the bot has not opened its store yet")

func (s *server) setStore(st MemoryStore) { s.store.Store(&st) }

func (s *server) memoryStore() (MemoryStore, error) {
	p := s.store.Load()
	if p == nil {
		return nil, errNoStore
	}
	return *p, nil
}

func (s *server) getMemory(w http.ResponseWriter, r *http.Request) {
	v, err := s.memoryView(r.Context())
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// memoryView reads what the panel shows.
func (s *server) memoryView(ctx context.Context) (MemoryView, error) {
	st, err := s.memoryStore()
	if err != nil {
		return MemoryView{}, err
	}
	guild := string(s.w.guild)
	v := MemoryView{GuildID: guild, Members: []MemberMemory{}}
	if wt := s.watcher.Load(); wt != nil {
		v.Enabled = wt.Current().Memory.EnabledFor(guild)
	}
	members, err := s.members(ctx)
	if err != nil {
		return MemoryView{}, err
	}
	for _, m := range members {
		mm := MemberMemory{ID: string(m.ID), Name: m.Name}
		if mm.Paused, err = st.MemoryPaused(ctx, guild, mm.ID); err != nil {
			return MemoryView{}, fmt.Errorf("playground: memory: %w", err)
		}
		if mm.Facts, err = s.factViews(ctx, st, mm.ID); err != nil {
			return MemoryView{}, err
		}
		v.Members = append(v.Members, mm)
	}
	if v.Server, err = s.factViews(ctx, st, store.FactServer); err != nil {
		return MemoryView{}, err
	}
	return v, nil
}

// factViews are a subject's current facts as /memory show lists them, with their sources.
func (s *server) factViews(ctx context.Context, st MemoryStore, subject string) ([]FactView, error) {
	fs, err := st.Facts(ctx, store.FactQuery{GuildID: string(s.w.guild), SubjectIDs: []string{subject}, Limit: memoryShown})
	if err != nil {
		return nil, fmt.Errorf("playground: memory: %w", err)
	}
	out := make([]FactView, 0, len(fs))
	for i, f := range fs {
		fv := FactView{ID: f.ID, Number: i + 1, Statement: f.Statement, CreatedAt: f.CreatedAt, Sources: []SourceView{}}
		for _, id := range f.SourceIDs {
			src := SourceView{ID: id}
			if m, err := st.Message(ctx, id); err == nil && !m.Deleted {
				src.ChannelID, src.Author, src.Content, src.Time = m.ChannelID, m.AuthorName, m.Content, m.CreatedAt
			}
			fv.Sources = append(fv.Sources, src)
		}
		out = append(out, fv)
	}
	return out, nil
}

// simMember is a member as the Discord control API lists it.
type simMember struct {
	ID   discordsim.UserID `json:"id"`
	Name string            `json:"name"`
	Bot  bool              `json:"bot"`
}

// members lists the simulated server's members (not bots) through the control API.
func (s *server) members(ctx context.Context) ([]simMember, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.w.ctlURL+"/members", nil)
	if err != nil {
		return nil, fmt.Errorf("playground: members: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("playground: members: %w", err)
	}
	defer resp.Body.Close()
	var all []simMember
	if err := json.NewDecoder(resp.Body).Decode(&all); err != nil {
		return nil, fmt.Errorf("playground: members: %w", err)
	}
	out := all[:0]
	for _, m := range all {
		if !m.Bot && m.ID != s.w.ds.BotID() {
			out = append(out, m)
		}
	}
	return out, nil
}

// memoryCommandTimeout bounds the wait for the bot's answer to a /memory command.
const memoryCommandTimeout = 30 * time.Second

// postMemory runs /memory ACTION as the member: forget (the fact given by id, by its number in
// the member's /memory show), forget-me, pause or resume. It answers with the bot's reply.
func (s *server) postMemory(w http.ResponseWriter, r *http.Request) {
	action := r.PathValue("action")
	if !slices.Contains(memoryActions, action) {
		writeError(w, http.StatusNotFound, fmt.Errorf("playground: no memory action %q (forget, forget-me, pause, resume)", action))
		return
	}
	var in memoryAction
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("playground: memory %s: %w (want {\"member\": NAME or ID, \"fact_id\": N for forget})", action, err))
		return
	}
	if action == "forget" && in.FactID <= 0 {
		writeError(w, http.StatusBadRequest, errors.New(`playground: memory forget: "fact_id" is required (GET /api/memory lists the ids)`))
		return
	}
	member, status, err := s.memoryMember(r.Context(), in.Member)
	if err != nil {
		writeError(w, status, err)
		return
	}
	sub := discordsim.CommandOption{Name: action, Type: 1}
	if action == "forget" {
		n, status, err := s.factNumber(r.Context(), member.ID, in.FactID)
		if err != nil {
			writeError(w, status, err)
			return
		}
		sub.Options = []discordsim.CommandOption{{Name: "number", Type: 4, Value: n}}
	}
	answer, err := s.invokeMemory(r.Context(), member.ID, sub)
	if err != nil {
		writeError(w, http.StatusBadGateway, err)
		return
	}
	if action == "forget" {
		// The command takes a number: a fact formed between the lookup and the command shifts
		// the numbers, and another fact went. Say so rather than report success.
		if _, _, err := s.factNumber(r.Context(), member.ID, in.FactID); err == nil {
			writeError(w, http.StatusConflict, fmt.Errorf("playground: fact %d is still there (the bot answered %q): %s's facts changed meanwhile; GET /api/memory and try again", in.FactID, answer, member.Name))
			return
		}
	}
	// The pages follow the hub: a command run by a script updates every open memory panel.
	s.hub.publish(Event{Time: time.Now(), Level: slog.LevelInfo.String(), Name: "playground_memory_command",
		Attrs: map[string]any{"action": action, "user_id": string(member.ID), "answer": answer}})
	writeJSON(w, http.StatusOK, MemoryResult{Action: action, Member: member.Name, Answer: answer})
}

// memoryMember resolves a member's name or id.
func (s *server) memoryMember(ctx context.Context, who string) (simMember, int, error) {
	if who == "" {
		return simMember{}, http.StatusBadRequest, errors.New(`playground: "member" is required (a member's name or user id)`)
	}
	members, err := s.members(ctx)
	if err != nil {
		return simMember{}, http.StatusServiceUnavailable, err
	}
	for _, m := range members {
		if m.Name == who || string(m.ID) == who {
			return m, 0, nil
		}
	}
	return simMember{}, http.StatusNotFound, fmt.Errorf("playground: no member %q", who)
}

// factNumber is the fact's number in the member's /memory show list.
func (s *server) factNumber(ctx context.Context, member discordsim.UserID, factID int64) (int, int, error) {
	st, err := s.memoryStore()
	if err != nil {
		return 0, http.StatusServiceUnavailable, err
	}
	fs, err := st.Facts(ctx, store.FactQuery{GuildID: string(s.w.guild), SubjectIDs: []string{string(member)}, Limit: memoryShown})
	if err != nil {
		return 0, http.StatusServiceUnavailable, fmt.Errorf("playground: memory: %w", err)
	}
	for i, f := range fs {
		if f.ID == factID {
			return i + 1, 0, nil
		}
	}
	return 0, http.StatusNotFound, fmt.Errorf("playground: %s has no current fact %d (GET /api/memory lists them)", member, factID)
}

// invokeMemory runs /memory as the member in #general and waits for the bot's answer.
func (s *server) invokeMemory(ctx context.Context, member discordsim.UserID, sub discordsim.CommandOption) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, memoryCommandTimeout)
	defer cancel()
	if err := s.w.ds.Await(ctx, s.memoryRegistered); err != nil {
		return "", fmt.Errorf("playground: /memory %s: the bot has not registered /memory: %w", sub.Name, err)
	}
	it, err := s.w.ds.InvokeCommand(member, s.w.general, "memory", sub)
	if err != nil {
		return "", fmt.Errorf("playground: /memory %s: %w", sub.Name, err)
	}
	var resp discordsim.InteractionResponse
	if err := s.w.ds.Await(ctx, func() bool {
		var ok bool
		resp, ok = s.w.ds.InteractionResponse(it.ID)
		return ok
	}); err != nil {
		return "", fmt.Errorf("playground: /memory %s: no answer from the bot: %w", sub.Name, err)
	}
	var data struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal(resp.Data, &data); err != nil {
		return "", fmt.Errorf("playground: /memory %s: the bot's answer: %w", sub.Name, err)
	}
	return data.Content, nil
}

// memoryRegistered reports whether the bot has registered /memory (globally or in the server).
func (s *server) memoryRegistered() bool {
	for _, g := range []discordsim.GuildID{"", s.w.guild} {
		for _, c := range s.w.ds.Commands(g) {
			if c.Name == "memory" {
				return true
			}
		}
	}
	return false
}

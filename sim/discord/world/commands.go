package world

import (
	"encoding/json"
	"slices"
	"strconv"
)

// Application command registration.
// https://discord.com/developers/docs/interactions/application-commands

// Command is a registered application command.
type Command struct {
	ID                       CommandID
	Application              UserID
	Guild                    GuildID // "" for a global command
	Name                     string
	NameLocalizations        json.RawMessage
	Description              string
	DescriptionLocalizations json.RawMessage
	Options                  []json.RawMessage
	DefaultMemberPermissions *string
	Type                     int
	NSFW                     bool
	Version                  string
}

// CommandScope is where a command call acts: the application (from the
// path), the caller, and the guild ("" for global commands).
type CommandScope struct {
	Application UserID
	Caller      UserID
	Guild       GuildID
}

// checkScopeLocked allows only the application's own bot to manage its
// commands, in a guild that exists.
func (w *World) checkScopeLocked(s CommandScope) error {
	if s.Application != w.st.bot || s.Caller != w.st.bot {
		return ErrMissingAccess
	}
	if s.Guild != "" && w.st.guilds[s.Guild] == nil {
		return ErrUnknownGuild
	}
	return nil
}

// maxBitSet is the largest permission bit set Discord takes (2^54-1, its spec's bound).
const maxBitSet = 1<<54 - 1

// validate fills defaults and checks lengths as Discord does.
func (c *Command) validate() error {
	if c.Type == 0 {
		c.Type = 1
	}
	if n := len(c.Name); n < 1 || n > 32 {
		return invalidBody("name", "Must be between 1 and 32 in length.")
	}
	if c.Type == 1 && (len(c.Description) < 1 || len(c.Description) > 100) {
		return invalidBody("description", "Must be between 1 and 100 in length.")
	}
	if p := c.DefaultMemberPermissions; p != nil {
		n, err := strconv.ParseUint(*p, 10, 64)
		if err != nil || strconv.FormatUint(n, 10) != *p || n > maxBitSet {
			return invalidBody("default_member_permissions", "Must be a permission bit set: an integer from 0 to 18014398509481983, or its decimal string.")
		}
	}
	return nil
}

func (w *World) commandsInLocked(g GuildID) []*Command {
	var out []*Command
	for _, c := range w.st.commands {
		if c.Guild == g {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b *Command) int { return cmpSnowflake(string(a.ID), string(b.ID)) })
	return out
}

// upsertCommandLocked creates or updates (same name and type) a command.
func (w *World) upsertCommandLocked(g GuildID, b Command) (*Command, bool) {
	for _, c := range w.commandsInLocked(g) {
		if c.Name == b.Name && c.Type == b.Type {
			// The new definition replaces the old one (permissions included); the id stays.
			id := c.ID
			*c = b
			c.ID, c.Application, c.Guild, c.Version = id, w.st.bot, g, w.ids.nextString()
			return c, false
		}
	}
	c := b
	c.ID, c.Application, c.Guild = CommandID(w.ids.nextString()), w.st.bot, g
	c.Version = string(c.ID)
	w.st.commands[c.ID] = &c
	return &c, true
}

// UpsertCommand registers a command, or updates the one with the same name
// and type; created says which.
func (w *World) UpsertCommand(s CommandScope, b Command) (c Command, created bool, err error) {
	w.lock()
	defer w.mu.Unlock()
	if err := w.checkScopeLocked(s); err != nil {
		return Command{}, false, err
	}
	if err := b.validate(); err != nil {
		return Command{}, false, err
	}
	p, created := w.upsertCommandLocked(s.Guild, b)
	w.emitLocked(Changed{What: "command"})
	return *p, created, nil
}

// OverwriteCommands is the bulk overwrite: bodies become the full set;
// commands keep their ids when name and type match.
func (w *World) OverwriteCommands(s CommandScope, bodies []Command) ([]Command, error) {
	w.lock()
	defer w.mu.Unlock()
	if err := w.checkScopeLocked(s); err != nil {
		return nil, err
	}
	for i := range bodies {
		if err := bodies[i].validate(); err != nil {
			return nil, err
		}
	}
	keep := map[CommandID]bool{}
	out := []Command{}
	for _, b := range bodies {
		c, _ := w.upsertCommandLocked(s.Guild, b)
		keep[c.ID] = true
		out = append(out, *c)
	}
	for _, c := range w.commandsInLocked(s.Guild) {
		if !keep[c.ID] {
			delete(w.st.commands, c.ID)
		}
	}
	w.emitLocked(Changed{What: "command"})
	return out, nil
}

// ListCommands returns the commands of a scope, in registration order.
func (w *World) ListCommands(s CommandScope) ([]Command, error) {
	w.lock()
	defer w.mu.Unlock()
	if err := w.checkScopeLocked(s); err != nil {
		return nil, err
	}
	out := []Command{}
	for _, c := range w.commandsInLocked(s.Guild) {
		out = append(out, *c)
	}
	return out, nil
}

// GetCommand returns one command of a scope.
func (w *World) GetCommand(s CommandScope, id CommandID) (Command, error) {
	w.lock()
	defer w.mu.Unlock()
	if err := w.checkScopeLocked(s); err != nil {
		return Command{}, err
	}
	c := w.st.commands[id]
	if c == nil || c.Guild != s.Guild {
		return Command{}, ErrUnknownCommand
	}
	return *c, nil
}

// DeleteCommand unregisters one command of a scope.
func (w *World) DeleteCommand(s CommandScope, id CommandID) error {
	w.lock()
	defer w.mu.Unlock()
	if err := w.checkScopeLocked(s); err != nil {
		return err
	}
	if c := w.st.commands[id]; c == nil || c.Guild != s.Guild {
		return ErrUnknownCommand
	}
	delete(w.st.commands, id)
	w.emitLocked(Changed{What: "command"})
	return nil
}

// Commands returns the commands registered in a guild (or globally, with
// g ""), in registration order.
func (w *World) Commands(g GuildID) []Command {
	w.lock()
	defer w.mu.Unlock()
	var out []Command
	for _, c := range w.commandsInLocked(g) {
		out = append(out, *c)
	}
	return out
}

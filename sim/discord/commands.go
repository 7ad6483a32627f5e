package discordsim

import (
	"encoding/json"
	"net/http"
	"slices"
)

// Application command registration.
// https://discord.com/developers/docs/interactions/application-commands

type command struct {
	wire wireCommand
}

// Command is a registered application command, for tests.
type Command struct {
	ID          CommandID
	Guild       GuildID // "" for a global command
	Name        string
	Description string
	Type        int
	Options     []json.RawMessage
}

// Commands returns the commands registered in a guild (or globally, with
// g ""), in registration order.
func (s *Server) Commands(g GuildID) []Command {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Command
	for _, c := range s.commandsInLocked(g) {
		out = append(out, Command{ID: c.wire.ID, Guild: c.wire.GuildID, Name: c.wire.Name, Description: c.wire.Description, Type: c.wire.Type, Options: c.wire.Options})
	}
	return out
}

func (s *worldState) commandsInLocked(g GuildID) []*command {
	var out []*command
	for _, c := range s.commands {
		if c.wire.GuildID == g {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b *command) int {
		if snowflakeLess(string(a.wire.ID), string(b.wire.ID)) {
			return -1
		}
		return 1
	})
	return out
}

// commandScope checks the application and guild path values.
func (s *Server) commandScope(q *apiRequest) (GuildID, error) {
	if UserID(q.PathValue("application_id")) != s.bot || q.user != s.bot {
		return "", &apiError{403, codeMissingAccess, "Missing Access"}
	}
	g := GuildID(q.PathValue("guild_id"))
	if g != "" {
		if s.guilds[g] == nil {
			return "", &apiError{404, codeUnknownGuild, "Unknown Guild"}
		}
	}
	return g, nil
}

type commandBody struct {
	Name                     string            `json:"name"`
	NameLocalizations        json.RawMessage   `json:"name_localizations"`
	Description              string            `json:"description"`
	DescriptionLocalizations json.RawMessage   `json:"description_localizations"`
	Options                  []json.RawMessage `json:"options"`
	DefaultMemberPermissions *string           `json:"default_member_permissions"`
	Type                     int               `json:"type"`
	NSFW                     bool              `json:"nsfw"`
}

func (b *commandBody) validate() error {
	if b.Type == 0 {
		b.Type = 1
	}
	if n := len(b.Name); n < 1 || n > 32 {
		return &apiError{400, codeInvalidBody, "Invalid Form Body: name: Must be between 1 and 32 in length."}
	}
	if b.Type == 1 && (len(b.Description) < 1 || len(b.Description) > 100) {
		return &apiError{400, codeInvalidBody, "Invalid Form Body: description: Must be between 1 and 100 in length."}
	}
	return nil
}

// upsertCommandLocked creates or updates (same name and type) a command.
func (s *Server) upsertCommandLocked(g GuildID, b commandBody) (*command, bool) {
	for _, c := range s.commandsInLocked(g) {
		if c.wire.Name == b.Name && c.wire.Type == b.Type {
			c.wire.Description, c.wire.Options = b.Description, b.Options
			c.wire.Version = s.ids.nextString()
			return c, false
		}
	}
	c := &command{wire: wireCommand{
		ID: CommandID(s.ids.nextString()), ApplicationID: s.bot, GuildID: g, Name: b.Name,
		NameLocalizations: b.NameLocalizations, Description: b.Description,
		DescriptionLocalizations: b.DescriptionLocalizations, Options: b.Options,
		DefaultMemberPermissions: b.DefaultMemberPermissions, Type: b.Type, NSFW: b.NSFW,
	}}
	c.wire.Version = string(c.wire.ID)
	s.commands[c.wire.ID] = c
	return c, true
}

func (s *Server) listCommands(q *apiRequest) (int, any, error) {
	g, err := s.commandScope(q)
	if err != nil {
		return 0, nil, err
	}
	out := []wireCommand{}
	for _, c := range s.commandsInLocked(g) {
		out = append(out, c.wire)
	}
	return http.StatusOK, out, nil
}

func (s *Server) createCommand(q *apiRequest) (int, any, error) {
	g, err := s.commandScope(q)
	if err != nil {
		return 0, nil, err
	}
	var b commandBody
	if err := decodeBody(q, &b); err != nil {
		return 0, nil, err
	}
	if err := b.validate(); err != nil {
		return 0, nil, err
	}
	c, created := s.upsertCommandLocked(g, b)
	if created {
		return http.StatusCreated, c.wire, nil
	}
	return http.StatusOK, c.wire, nil
}

// overwriteCommands is the bulk overwrite (PUT): the body becomes the full
// set; commands keep their ids when name and type match.
func (s *Server) overwriteCommands(q *apiRequest) (int, any, error) {
	g, err := s.commandScope(q)
	if err != nil {
		return 0, nil, err
	}
	var bodies []commandBody
	if err := decodeBody(q, &bodies); err != nil {
		return 0, nil, err
	}
	for i := range bodies {
		if err := bodies[i].validate(); err != nil {
			return 0, nil, err
		}
	}
	keep := map[CommandID]bool{}
	out := []wireCommand{}
	for _, b := range bodies {
		c, _ := s.upsertCommandLocked(g, b)
		keep[c.wire.ID] = true
		out = append(out, c.wire)
	}
	for _, c := range s.commandsInLocked(g) {
		if !keep[c.wire.ID] {
			delete(s.commands, c.wire.ID)
		}
	}
	s.notifyLocked()
	return http.StatusOK, out, nil
}

func (s *Server) getCommand(q *apiRequest) (int, any, error) {
	g, err := s.commandScope(q)
	if err != nil {
		return 0, nil, err
	}
	c := s.commands[CommandID(q.PathValue("command_id"))]
	if c == nil || c.wire.GuildID != g {
		return 0, nil, &apiError{404, codeUnknownCommand, "Unknown application command"}
	}
	return http.StatusOK, c.wire, nil
}

func (s *Server) deleteCommand(q *apiRequest) (int, any, error) {
	g, err := s.commandScope(q)
	if err != nil {
		return 0, nil, err
	}
	id := CommandID(q.PathValue("command_id"))
	if c := s.commands[id]; c == nil || c.wire.GuildID != g {
		return 0, nil, &apiError{404, codeUnknownCommand, "Unknown application command"}
	}
	delete(s.commands, id)
	return http.StatusNoContent, nil, nil
}

package discordsim

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/banterbot/banter/sim/discord/world"
)

// Application commands, interaction callbacks and the interaction webhook.
// https://discord.com/developers/docs/interactions/application-commands
// https://discord.com/developers/docs/interactions/receiving-and-responding

func (a *restAPI) interactionRoutes(add func(Route, routeOpts, apiFunc)) {
	for _, base := range []string{"/applications/{application_id}", "/applications/{application_id}/guilds/{guild_id}"} {
		ap := routeOpts{major: "application_id"}
		add(Route("GET "+base+"/commands"), ap, a.listCommands)
		add(Route("POST "+base+"/commands"), ap, a.createCommand)
		add(Route("PUT "+base+"/commands"), ap, a.overwriteCommands)
		add(Route("GET "+base+"/commands/{command_id}"), ap, a.getCommand)
		add(Route("DELETE "+base+"/commands/{command_id}"), ap, a.deleteCommand)
	}
	it := routeOpts{noAuth: true, exemptGlobal: true, major: "interaction_id"}
	add(RouteInteractionResp, it, a.interactionCallback)
	wh := routeOpts{noAuth: true, exemptGlobal: true, major: "token"}
	add("POST /webhooks/{application_id}/{token}", wh, a.webhookFollowup)
	add("GET /webhooks/{application_id}/{token}/messages/{message_id}", wh, a.webhookGetMessage)
	add("PATCH /webhooks/{application_id}/{token}/messages/{message_id}", wh, a.webhookEditMessage)
	add("DELETE /webhooks/{application_id}/{token}/messages/{message_id}", wh, a.webhookDeleteMessage)
}

func commandScope(q *apiRequest) world.CommandScope {
	return world.CommandScope{Application: UserID(q.PathValue("application_id")), Caller: q.user, Guild: GuildID(q.PathValue("guild_id"))}
}

// commandBody is a command as clients register it.
type commandBody struct {
	Name                     string            `json:"name"`
	NameLocalizations        json.RawMessage   `json:"name_localizations"`
	Description              string            `json:"description"`
	DescriptionLocalizations json.RawMessage   `json:"description_localizations"`
	Options                  []json.RawMessage `json:"options"`
	DefaultMemberPermissions *bitSet           `json:"default_member_permissions"`
	Type                     int               `json:"type"`
	NSFW                     bool              `json:"nsfw"`
}

// bitSet is a permission bit set as clients send it: a decimal string (discordgo,
// discord.js) or a JSON integer (the form Discord's OpenAPI spec writes); both are kept as
// the text of the number, which the world validates.
type bitSet string

// UnmarshalJSON takes a string or a number.
func (b *bitSet) UnmarshalJSON(raw []byte) error {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		*b = bitSet(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return fmt.Errorf("permission bit set: %w", err)
	}
	*b = bitSet(n)
	return nil
}

func (b commandBody) command() world.Command {
	var perms *string
	if b.DefaultMemberPermissions != nil {
		s := string(*b.DefaultMemberPermissions)
		perms = &s
	}
	return world.Command{Name: b.Name, NameLocalizations: b.NameLocalizations, Description: b.Description,
		DescriptionLocalizations: b.DescriptionLocalizations, Options: b.Options,
		DefaultMemberPermissions: perms, Type: b.Type, NSFW: b.NSFW}
}

func commandList(cs []world.Command, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	out := make([]wireCommand, 0, len(cs))
	for _, c := range cs {
		out = append(out, wireCommandOf(c))
	}
	return http.StatusOK, out, nil
}

func (a *restAPI) listCommands(q *apiRequest) (int, any, error) {
	return commandList(a.world.ListCommands(commandScope(q)))
}

func (a *restAPI) createCommand(q *apiRequest) (int, any, error) {
	var b commandBody
	if err := decodeBody(q, &b); err != nil {
		return 0, nil, err
	}
	c, created, err := a.world.UpsertCommand(commandScope(q), b.command())
	if err != nil {
		return 0, nil, err
	}
	if created {
		return http.StatusCreated, wireCommandOf(c), nil
	}
	return http.StatusOK, wireCommandOf(c), nil
}

// overwriteCommands is the bulk overwrite (PUT): the body becomes the full
// set; commands keep their ids when name and type match.
func (a *restAPI) overwriteCommands(q *apiRequest) (int, any, error) {
	var bodies []commandBody
	if err := decodeBody(q, &bodies); err != nil {
		return 0, nil, err
	}
	cs := make([]world.Command, 0, len(bodies))
	for _, b := range bodies {
		cs = append(cs, b.command())
	}
	return commandList(a.world.OverwriteCommands(commandScope(q), cs))
}

func (a *restAPI) getCommand(q *apiRequest) (int, any, error) {
	c, err := a.world.GetCommand(commandScope(q), CommandID(q.PathValue("command_id")))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, wireCommandOf(c), nil
}

func (a *restAPI) deleteCommand(q *apiRequest) (int, any, error) {
	return noContent(a.world.DeleteCommand(commandScope(q), CommandID(q.PathValue("command_id"))))
}

// interactionCallback is POST /interactions/{id}/{token}/callback (no
// authentication, as on Discord). 204, or 200 with the created resource
// when ?with_response=true.
func (a *restAPI) interactionCallback(q *apiRequest) (int, any, error) {
	var b struct {
		Type world.InteractionCallbackType `json:"type"`
		Data json.RawMessage               `json:"data"`
	}
	if err := decodeBody(q, &b); err != nil {
		return 0, nil, err
	}
	it, m, err := a.world.Respond(InteractionID(q.PathValue("interaction_id")), q.PathValue("token"), b.Type, b.Data)
	if err != nil {
		return 0, nil, err
	}
	if q.URL.Query().Get("with_response") != "true" {
		return http.StatusNoContent, nil, nil
	}
	return a.ok(func(v *world.View) any {
		var original MessageID
		if m != nil {
			original = m.ID
		}
		res := map[string]any{"interaction": map[string]any{"id": it.ID, "type": 2, "response_message_id": original}}
		if m != nil {
			res["resource"] = map[string]any{"type": b.Type, "message": wireMessageOf(v, *m, a.cdn, 0)}
		}
		return res
	})
}

func webhookPath(q *apiRequest) (UserID, string) {
	return UserID(q.PathValue("application_id")), q.PathValue("token")
}

// webhookFollowup is POST /webhooks/{app}/{token}: a follow-up message.
func (a *restAPI) webhookFollowup(q *apiRequest) (int, any, error) {
	var d world.ResponseMessage
	if err := decodeBody(q, &d); err != nil {
		return 0, nil, err
	}
	app, tok := webhookPath(q)
	return a.message(a.world.Followup(app, tok, d))
}

func (a *restAPI) webhookGetMessage(q *apiRequest) (int, any, error) {
	app, tok := webhookPath(q)
	return a.message(a.world.WebhookMessage(app, tok, MessageID(q.PathValue("message_id"))))
}

// webhookEditMessage edits a response; editing @original of a deferred
// response creates it, as on Discord.
func (a *restAPI) webhookEditMessage(q *apiRequest) (int, any, error) {
	var b editMessageBody
	if err := decodeBody(q, &b); err != nil {
		return 0, nil, err
	}
	app, tok := webhookPath(q)
	return a.message(a.world.EditWebhookMessage(app, tok, MessageID(q.PathValue("message_id")), b.Content, b.Embeds, b.AllowedMentions))
}

func (a *restAPI) webhookDeleteMessage(q *apiRequest) (int, any, error) {
	app, tok := webhookPath(q)
	return noContent(a.world.DeleteWebhookMessage(app, tok, MessageID(q.PathValue("message_id"))))
}

package world

import "fmt"

// Error is a change or lookup Discord refuses: the HTTP status and the JSON
// error code and message Discord answers with.
// https://discord.com/developers/docs/topics/opcodes-and-status-codes#json
type Error struct {
	Status  int
	Code    int
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("discord: %d %s (code %d)", e.Status, e.Message, e.Code)
}

// Discord's JSON error codes the simulator answers with.
const (
	CodeGeneral          = 0
	CodeUnknownChannel   = 10003
	CodeUnknownGuild     = 10004
	CodeUnknownMember    = 10007
	CodeUnknownMessage   = 10008
	CodeUnknownRole      = 10011
	CodeUnknownUser      = 10013
	CodeUnknownEmoji     = 10014
	CodeUnknownWebhook   = 10015
	CodeUnknownInteract  = 10062
	CodeUnknownCommand   = 10063
	CodeTooLarge         = 40005
	CodeNotInVoice       = 40032
	CodeAlreadyAcked     = 40060
	CodeCallbackType     = 40043
	CodeMissingAccess    = 50001
	CodeCannotEditOthers = 50005
	CodeEmptyMessage     = 50006
	CodeNonTextChannel   = 50008
	CodeMissingPerms     = 50013
	CodeChannelType      = 50024
	CodeInvalidBody      = 50035
	CodeInvalidJSON      = 50109
	CodeMaxReactions     = 30010
	// CodeCannotReference is a message_reference its sender may not read: the reply of a bot
	// without Read Message History (discord-api-docs PR #8424, 2026, from the error seen in the
	// wild). The older table's reply-only code, 160002 "Cannot reply without permission to read
	// message history", is not documented as replaced; which of the two today's Discord answers
	// a reply with is not published, so clients (banter's post.Unreferenceable) accept both.
	CodeCannotReference = 160009
)

// Errors shared by several operations.
var (
	ErrUnknownChannel     = &Error{404, CodeUnknownChannel, "Unknown Channel"}
	ErrUnknownGuild       = &Error{404, CodeUnknownGuild, "Unknown Guild"}
	ErrUnknownMember      = &Error{404, CodeUnknownMember, "Unknown Member"}
	ErrUnknownMessage     = &Error{404, CodeUnknownMessage, "Unknown Message"}
	ErrUnknownUser        = &Error{404, CodeUnknownUser, "Unknown User"}
	ErrUnknownRole        = &Error{404, CodeUnknownRole, "Unknown Role"}
	ErrUnknownEmoji       = &Error{400, CodeUnknownEmoji, "Unknown Emoji"}
	ErrUnknownWebhook     = &Error{404, CodeUnknownWebhook, "Unknown Webhook"}
	ErrUnknownInteraction = &Error{404, CodeUnknownInteract, "Unknown interaction"}
	ErrUnknownCommand     = &Error{404, CodeUnknownCommand, "Unknown application command"}
	ErrMissingAccess      = &Error{403, CodeMissingAccess, "Missing Access"}
	ErrMissingPermissions = &Error{403, CodeMissingPerms, "Missing Permissions"}
	ErrTooLarge           = &Error{413, CodeTooLarge, "Request entity too large"}
	// ErrManagedRole is a managed role (a bot's, a booster's, an integration's) given to or
	// taken from a member by hand, through PUT or DELETE /guilds/{g}/members/{u}/roles/{r} or
	// PATCH /guilds/{g}/members/{u} "roles": Discord answers 403 (DSharpPlus/DSharpPlus#1651,
	// a PATCH that dropped a booster's managed role; V-Warden/discord#35: "permission errors")
	// with Missing Permissions, its code for every 403 refusal of a member's role change
	// (e.g. jonathonor/syncBot#23: PUT …/roles/{r} → 403 {"message":"Missing
	// Permissions","code":50013}). The API docs do not list this case; 50013 is the body.
	ErrManagedRole = &Error{403, CodeMissingPerms, "Missing Permissions"}
	// ErrCannotReference is answered with 403, as 160002 was (discord.py raised
	// Forbidden for it); no published source gives 160009's status. Clients should match the
	// JSON code, not the status.
	ErrCannotReference = &Error{403, CodeCannotReference, "Cannot reference a message without permission to read message history"}
)

// invalidBody is Discord's 50035 "Invalid Form Body" for one field.
func invalidBody(field, msg string) *Error {
	return &Error{400, CodeInvalidBody, "Invalid Form Body: " + field + ": " + msg}
}

package discordsim

import (
	"time"

	"github.com/banterbot/banter/sim/discord/world"
)

// The world's types, under the names the scripting API has always used
// (package world holds the state; see its doc).
type (
	// UserID identifies a user (human or bot).
	UserID = world.UserID
	// GuildID identifies a guild. The guild's @everyone role has the same id.
	GuildID = world.GuildID
	// ChannelID identifies a channel; a thread is a channel too.
	ChannelID = world.ChannelID
	// MessageID identifies a message.
	MessageID = world.MessageID
	// RoleID identifies a role.
	RoleID = world.RoleID
	// CommandID identifies an application command.
	CommandID = world.CommandID
	// InteractionID identifies an interaction.
	InteractionID = world.InteractionID
	// AttachmentID identifies an uploaded file.
	AttachmentID = world.AttachmentID

	// ChannelType is a channel's type on the wire.
	ChannelType = world.ChannelType
	// Channel describes a channel or thread.
	Channel = world.Channel
	// MessageType is a message's type on the wire.
	MessageType = world.MessageType
	// Origin says how a message came into being.
	Origin = world.Origin
	// Message is a snapshot of a message.
	Message = world.Message
	// MessageReference is message_reference as the client sent it.
	MessageReference = world.MessageReference
	// AllowedMentions is the allowed_mentions object a client sent.
	AllowedMentions = world.AllowedMentions
	// Attachment is a file attached to a message.
	Attachment = world.Attachment
	// Reaction is one emoji's reactions on a message.
	Reaction = world.Reaction
	// Emoji is a reaction's emoji.
	Emoji = world.Emoji
	// TypingEvent is one typing indicator.
	TypingEvent = world.TypingEvent
	// VoiceState is a user's voice state.
	VoiceState = world.VoiceState
	// Command is a registered application command.
	Command = world.Command
	// CommandOption is one option value of an invoked slash command.
	CommandOption = world.CommandOption
	// CommandPermission is one override of who may use a command in a guild.
	CommandPermission = world.CommandPermission
	// Interaction is a slash command invoked by a simulated user.
	Interaction = world.Interaction
	// InteractionResponse is what the bot answered on the callback endpoint.
	InteractionResponse = world.InteractionResponse
	// InteractionCallbackType is the type of an interaction response.
	InteractionCallbackType = world.InteractionCallbackType
)

// Channel types.
const (
	ChannelText          = world.ChannelText
	ChannelDM            = world.ChannelDM
	ChannelVoice         = world.ChannelVoice
	ChannelCategory      = world.ChannelCategory
	ChannelPublicThread  = world.ChannelPublicThread
	ChannelPrivateThread = world.ChannelPrivateThread
)

// Message types.
const (
	MessageDefault          = world.MessageDefault
	MessageThreadCreated    = world.MessageThreadCreated
	MessageReply            = world.MessageReply
	MessageChatInputCommand = world.MessageChatInputCommand
)

// Message origins.
const (
	OriginUnknown     = world.OriginUnknown
	OriginScript      = world.OriginScript
	OriginREST        = world.OriginREST
	OriginInteraction = world.OriginInteraction
)

// Interaction callback types.
const (
	CallbackPong                   = world.CallbackPong
	CallbackChannelMessage         = world.CallbackChannelMessage
	CallbackDeferredChannelMessage = world.CallbackDeferredChannelMessage
	CallbackDeferredUpdateMessage  = world.CallbackDeferredUpdateMessage
	CallbackUpdateMessage          = world.CallbackUpdateMessage
	CallbackAutocompleteResult     = world.CallbackAutocompleteResult
	CallbackModal                  = world.CallbackModal
)

// Command permission override targets.
const (
	CommandPermissionRole = world.CommandPermissionRole
	CommandPermissionUser = world.CommandPermissionUser
)

// ErrCommandHidden is InvokeCommand's error for a command Discord's client would not offer
// the member (default_member_permissions, the guild's overrides).
var ErrCommandHidden = world.ErrCommandHidden

// ErrGuildUnavailable is InvokeCommand's error in a guild in an outage (SetGuildAvailable).
var ErrGuildUnavailable = world.ErrGuildUnavailable

// SnowflakeTime returns the creation time encoded in a snowflake id, or the
// zero time when id is not a number.
func SnowflakeTime(id string) time.Time { return world.SnowflakeTime(id) }

// MentionUser renders a user mention, "<@id>".
func MentionUser(u UserID) string { return "<@" + string(u) + ">" }

// MentionRole renders a role mention, "<@&id>".
func MentionRole(r RoleID) string { return "<@&" + string(r) + ">" }

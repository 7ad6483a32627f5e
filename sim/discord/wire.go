package discordsim

import (
	"encoding/json"

	"github.com/banterbot/banter/sim/discord/world"
)

// JSON shapes as Discord puts them on the wire. Field sets follow the
// reference captures (discord-clients.md §4 D–I): what discordgo's strict
// decoder and discord.js's structures need, with nulls where Discord sends
// nulls. Permissions are decimal strings; ids are strings.
// https://discord.com/developers/docs/resources/user#user-object

// wireTime is the RFC 3339 layout Discord uses for timestamps.
const wireTime = "2006-01-02T15:04:05.000000+00:00"

type wireUser struct {
	ID            UserID      `json:"id"`
	Username      string      `json:"username"`
	Discriminator string      `json:"discriminator"`
	GlobalName    *string     `json:"global_name"`
	Avatar        *string     `json:"avatar"`
	Bot           bool        `json:"bot"`
	System        bool        `json:"system,omitempty"`
	Flags         int         `json:"public_flags"`
	Member        *wireMember `json:"member,omitempty"` // only inside message mentions
}

type wireSelfUser struct {
	wireUser
	Verified   bool `json:"verified"`
	MFAEnabled bool `json:"mfa_enabled"`
	UserFlags  int  `json:"flags"`
}

type wireMember struct {
	User                       *wireUser `json:"user,omitempty"`
	Nick                       *string   `json:"nick"`
	Avatar                     *string   `json:"avatar"`
	Roles                      []RoleID  `json:"roles"`
	JoinedAt                   string    `json:"joined_at"`
	PremiumSince               *string   `json:"premium_since"`
	Deaf                       bool      `json:"deaf"`
	Mute                       bool      `json:"mute"`
	Flags                      int       `json:"flags"`
	Pending                    bool      `json:"pending"`
	CommunicationDisabledUntil *string   `json:"communication_disabled_until"`
	Permissions                string    `json:"permissions,omitempty"` // interactions only
}

// wireGuildMember is a member with its guild: GUILD_MEMBER_ADD and GUILD_MEMBER_UPDATE.
type wireGuildMember struct {
	wireMember
	GuildID GuildID `json:"guild_id"`
}

// wireRoleEvent is GUILD_ROLE_CREATE's and GUILD_ROLE_UPDATE's payload.
type wireRoleEvent struct {
	GuildID GuildID  `json:"guild_id"`
	Role    wireRole `json:"role"`
}

// wireRoleDeleteEvent is GUILD_ROLE_DELETE's payload.
type wireRoleDeleteEvent struct {
	GuildID GuildID `json:"guild_id"`
	RoleID  RoleID  `json:"role_id"`
}

type wireRole struct {
	ID          RoleID `json:"id"`
	Name        string `json:"name"`
	Color       int    `json:"color"`
	Hoist       bool   `json:"hoist"`
	Position    int    `json:"position"`
	Permissions string `json:"permissions"`
	Managed     bool   `json:"managed"`
	Mentionable bool   `json:"mentionable"`
	Flags       int    `json:"flags"`
	// Tags is present only on a role with tags: a bot's managed role names its bot.
	Tags *wireRoleTags `json:"tags,omitempty"`
}

type wireRoleTags struct {
	BotID UserID `json:"bot_id,omitempty"`
}

type wireOverwrite struct {
	ID    string `json:"id"`
	Type  int    `json:"type"`
	Allow string `json:"allow"`
	Deny  string `json:"deny"`
}

type wireThreadMetadata struct {
	Archived            bool   `json:"archived"`
	AutoArchiveDuration int    `json:"auto_archive_duration"`
	ArchiveTimestamp    string `json:"archive_timestamp"`
	Locked              bool   `json:"locked"`
	CreateTimestamp     string `json:"create_timestamp"`
}

type wireChannel struct {
	ID                   ChannelID           `json:"id"`
	Type                 ChannelType         `json:"type"`
	GuildID              GuildID             `json:"guild_id,omitempty"`
	Name                 string              `json:"name"`
	Position             int                 `json:"position"`
	ParentID             *ChannelID          `json:"parent_id"`
	Topic                *string             `json:"topic"`
	NSFW                 bool                `json:"nsfw"`
	LastMessageID        *MessageID          `json:"last_message_id"`
	RateLimitPerUser     int                 `json:"rate_limit_per_user"`
	PermissionOverwrites []wireOverwrite     `json:"permission_overwrites"`
	Bitrate              int                 `json:"bitrate,omitempty"`
	UserLimit            *int                `json:"user_limit,omitempty"`
	RTCRegion            *string             `json:"rtc_region,omitempty"`
	OwnerID              UserID              `json:"owner_id,omitempty"`
	MessageCount         *int                `json:"message_count,omitempty"`
	MemberCount          *int                `json:"member_count,omitempty"`
	ThreadMetadata       *wireThreadMetadata `json:"thread_metadata,omitempty"`
	Flags                int                 `json:"flags"`
}

type wireVoiceState struct {
	GuildID                 GuildID     `json:"guild_id,omitempty"`
	ChannelID               *ChannelID  `json:"channel_id"`
	UserID                  UserID      `json:"user_id"`
	Member                  *wireMember `json:"member,omitempty"`
	SessionID               string      `json:"session_id"`
	Deaf                    bool        `json:"deaf"`
	Mute                    bool        `json:"mute"`
	SelfDeaf                bool        `json:"self_deaf"`
	SelfMute                bool        `json:"self_mute"`
	SelfVideo               bool        `json:"self_video"`
	Suppress                bool        `json:"suppress"`
	RequestToSpeakTimestamp *string     `json:"request_to_speak_timestamp"`
}

type wireGuild struct {
	ID                          GuildID           `json:"id"`
	Name                        string            `json:"name"`
	Icon                        *string           `json:"icon"`
	OwnerID                     UserID            `json:"owner_id"`
	Unavailable                 bool              `json:"unavailable"`
	Large                       bool              `json:"large"`
	MemberCount                 int               `json:"member_count"`
	JoinedAt                    string            `json:"joined_at"`
	Features                    []string          `json:"features"`
	AFKChannelID                *ChannelID        `json:"afk_channel_id"`
	AFKTimeout                  int               `json:"afk_timeout"`
	SystemChannelID             *ChannelID        `json:"system_channel_id"`
	VerificationLevel           int               `json:"verification_level"`
	DefaultMessageNotifications int               `json:"default_message_notifications"`
	ExplicitContentFilter       int               `json:"explicit_content_filter"`
	MFALevel                    int               `json:"mfa_level"`
	NSFWLevel                   int               `json:"nsfw_level"`
	PremiumTier                 int               `json:"premium_tier"`
	PreferredLocale             string            `json:"preferred_locale"`
	ApplicationID               *UserID           `json:"application_id"`
	Roles                       []wireRole        `json:"roles"`
	Emojis                      []json.RawMessage `json:"emojis"`
	Stickers                    []json.RawMessage `json:"stickers"`
}

// wireGuildCreate is GUILD_CREATE's payload: the guild plus gateway-only
// fields, all present even when empty (discord.js needs channels).
type wireGuildCreate struct {
	wireGuild
	Channels             []wireChannel     `json:"channels"`
	Members              []wireMember      `json:"members"`
	VoiceStates          []wireVoiceState  `json:"voice_states"`
	Threads              []wireChannel     `json:"threads"`
	Presences            []json.RawMessage `json:"presences"`
	StageInstances       []json.RawMessage `json:"stage_instances"`
	GuildScheduledEvents []json.RawMessage `json:"guild_scheduled_events"`
	SoundboardSounds     []json.RawMessage `json:"soundboard_sounds"`
}

type wireUnavailableGuild struct {
	ID          GuildID `json:"id"`
	Unavailable bool    `json:"unavailable"`
}

// wireMessageReference is message_reference, in requests and responses.
// https://discord.com/developers/docs/resources/message#message-reference-structure
type wireMessageReference struct {
	Type            *int      `json:"type,omitempty"`
	MessageID       MessageID `json:"message_id,omitempty"`
	ChannelID       ChannelID `json:"channel_id,omitempty"`
	GuildID         GuildID   `json:"guild_id,omitempty"`
	FailIfNotExists *bool     `json:"fail_if_not_exists,omitempty"`
}

type wireInteractionMetadata struct {
	ID   InteractionID `json:"id"`
	Type int           `json:"type"`
	Name string        `json:"name"`
	User wireUser      `json:"user"`
}

type wireMessage struct {
	ID                MessageID                `json:"id"`
	Type              int                      `json:"type"`
	ChannelID         ChannelID                `json:"channel_id"`
	GuildID           GuildID                  `json:"guild_id,omitempty"`
	Author            wireUser                 `json:"author"`
	Member            *wireMember              `json:"member,omitempty"`
	Content           string                   `json:"content"`
	Timestamp         string                   `json:"timestamp"`
	EditedTimestamp   *string                  `json:"edited_timestamp"`
	TTS               bool                     `json:"tts"`
	MentionEveryone   bool                     `json:"mention_everyone"`
	Mentions          []wireUser               `json:"mentions"`
	MentionRoles      []RoleID                 `json:"mention_roles"`
	Attachments       []json.RawMessage        `json:"attachments"`
	Embeds            []json.RawMessage        `json:"embeds"`
	Components        []json.RawMessage        `json:"components"`
	Pinned            bool                     `json:"pinned"`
	Flags             int                      `json:"flags"`
	Nonce             json.RawMessage          `json:"nonce,omitempty"`
	WebhookID         UserID                   `json:"webhook_id,omitempty"`
	ApplicationID     UserID                   `json:"application_id,omitempty"`
	MessageReference  *wireMessageReference    `json:"message_reference,omitempty"`
	ReferencedMessage *wireMessage             `json:"referenced_message,omitempty"`
	Interaction       *wireInteractionMetadata `json:"interaction,omitempty"`
	Thread            *wireChannel             `json:"thread,omitempty"`
	Reactions         []wireReaction           `json:"reactions,omitempty"`
}

// wireAttachment is an attachment object.
// https://discord.com/developers/docs/resources/message#attachment-object
type wireAttachment struct {
	ID          AttachmentID `json:"id"`
	Filename    string       `json:"filename"`
	Description string       `json:"description,omitempty"`
	ContentType string       `json:"content_type,omitempty"`
	Size        int          `json:"size"`
	URL         string       `json:"url"`
	ProxyURL    string       `json:"proxy_url"`
	Width       *int         `json:"width,omitempty"`
	Height      *int         `json:"height,omitempty"`
}

// wireEmoji is a (partial) emoji object: id null for a Unicode emoji.
type wireEmoji struct {
	ID       *string `json:"id"`
	Name     string  `json:"name"`
	Animated bool    `json:"animated,omitempty"`
}

type wireCountDetails struct {
	Burst  int `json:"burst"`
	Normal int `json:"normal"`
}

// wireReaction is a message's reactions with one emoji.
// https://discord.com/developers/docs/resources/message#reaction-object
type wireReaction struct {
	Count        int              `json:"count"`
	CountDetails wireCountDetails `json:"count_details"`
	Me           bool             `json:"me"`
	MeBurst      bool             `json:"me_burst"`
	Emoji        wireEmoji        `json:"emoji"`
	BurstColors  []string         `json:"burst_colors"`
}

// wireReactionEvent is MESSAGE_REACTION_ADD, _REMOVE, _REMOVE_ALL and
// _REMOVE_EMOJI (each uses a subset).
// https://discord.com/developers/docs/events/gateway-events#message-reaction-add
type wireReactionEvent struct {
	UserID          UserID      `json:"user_id,omitempty"`
	ChannelID       ChannelID   `json:"channel_id"`
	MessageID       MessageID   `json:"message_id"`
	GuildID         GuildID     `json:"guild_id,omitempty"`
	Member          *wireMember `json:"member,omitempty"`
	Emoji           *wireEmoji  `json:"emoji,omitempty"`
	MessageAuthorID UserID      `json:"message_author_id,omitempty"`
	Burst           bool        `json:"burst"`
	BurstColors     []string    `json:"burst_colors,omitempty"`
	Type            int         `json:"type"`
}

type wireCommand struct {
	ID                       CommandID         `json:"id"`
	ApplicationID            UserID            `json:"application_id"`
	GuildID                  GuildID           `json:"guild_id,omitempty"`
	Name                     string            `json:"name"`
	NameLocalizations        json.RawMessage   `json:"name_localizations,omitempty"`
	Description              string            `json:"description"`
	DescriptionLocalizations json.RawMessage   `json:"description_localizations,omitempty"`
	Options                  []json.RawMessage `json:"options,omitempty"`
	DefaultMemberPermissions *string           `json:"default_member_permissions"`
	Type                     int               `json:"type"`
	NSFW                     bool              `json:"nsfw"`
	Version                  string            `json:"version"`
}

func wireCommandOf(c world.Command) wireCommand {
	return wireCommand{
		ID: c.ID, ApplicationID: c.Application, GuildID: c.Guild, Name: c.Name, NameLocalizations: c.NameLocalizations,
		Description: c.Description, DescriptionLocalizations: c.DescriptionLocalizations, Options: c.Options,
		DefaultMemberPermissions: c.DefaultMemberPermissions, Type: c.Type, NSFW: c.NSFW, Version: c.Version,
	}
}

// wireError is Discord's JSON error body.
// https://discord.com/developers/docs/topics/opcodes-and-status-codes#json
type wireError struct {
	Message string          `json:"message"`
	Code    int             `json:"code"`
	Errors  json.RawMessage `json:"errors,omitempty"`
}

// JSON error codes of the transport itself; the world's are in package world.
const (
	codeGeneral      = world.CodeGeneral
	codeUnauthorized = 0
)

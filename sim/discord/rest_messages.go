package discordsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"regexp"
	"strconv"

	"github.com/banterbot/banter/sim/discord/world"
)

// Channel message routes.
// https://discord.com/developers/docs/resources/message

func (a *restAPI) messageRoutes(add func(Route, routeOpts, apiFunc)) {
	ch := routeOpts{major: "channel_id"}
	add(RouteMessageList, ch, a.listMessages)
	add(RouteMessageCreate, ch, a.postMessage)
	add(RouteMessageGet, ch, a.getMessage)
	add(RouteMessageEdit, ch, a.patchMessage)
	add(RouteMessageDelete, ch, a.deleteMessage)
	add(RouteTyping, ch, a.postTyping)
	add("POST /channels/{channel_id}/threads", ch, a.postThread)
	add("POST /channels/{channel_id}/messages/{message_id}/threads", ch, a.postThread)
}

// createMessageBody is POST /channels/{id}/messages as discordgo and
// discord.js send it (nulls accepted for embeds, components, sticker_ids),
// as JSON or as a multipart upload's payload_json.
type createMessageBody struct {
	Content          string                  `json:"content"`
	TTS              bool                    `json:"tts"`
	Embeds           []json.RawMessage       `json:"embeds"`
	Components       []json.RawMessage       `json:"components"`
	AllowedMentions  *world.AllowedMentions  `json:"allowed_mentions"`
	MessageReference *wireMessageReference   `json:"message_reference"`
	Nonce            json.RawMessage         `json:"nonce"`
	EnforceNonce     bool                    `json:"enforce_nonce"`
	Flags            int                     `json:"flags"`
	StickerIDs       []string                `json:"sticker_ids"`
	Attachments      []uploadAttachmentEntry `json:"attachments"`
}

// uploadAttachmentEntry describes files[n] in payload_json's attachments:
// id is n (a number or a string), filename and description override.
type uploadAttachmentEntry struct {
	ID          json.RawMessage `json:"id"`
	Filename    string          `json:"filename"`
	Description string          `json:"description"`
}

func (b *createMessageBody) toNew(ch ChannelID, author UserID, origin world.Origin) world.NewMessage {
	n := world.NewMessage{
		Channel: ch, Author: author, Content: b.Content, TTS: b.TTS, Flags: b.Flags,
		Embeds: b.Embeds, Components: b.Components, AllowedMentions: b.AllowedMentions, Nonce: b.Nonce,
		EnforceNonce: b.EnforceNonce, Origin: origin,
	}
	if r := b.MessageReference; r != nil && r.MessageID != "" {
		n.Reference = &world.MessageReference{MessageID: r.MessageID, ChannelID: r.ChannelID, GuildID: r.GuildID, FailIfNotExists: r.FailIfNotExists}
	}
	return n
}

func (a *restAPI) postMessage(q *apiRequest) (int, any, error) {
	var b createMessageBody
	var files []world.File
	if mt, _, _ := mime.ParseMediaType(q.Header.Get("Content-Type")); mt == "multipart/form-data" {
		up, err := parseUpload(q.Header.Get("Content-Type"), q.body)
		if err != nil {
			return 0, nil, err
		}
		if len(up.payload) > 0 {
			if err := json.Unmarshal(up.payload, &b); err != nil {
				return 0, nil, errInvalidJSON
			}
		} else {
			b.Content = up.content
		}
		if files, err = up.withMetadata(b.Attachments); err != nil {
			return 0, nil, err
		}
	} else if err := decodeBody(q, &b); err != nil {
		return 0, nil, err
	}
	n := b.toNew(ChannelID(q.PathValue("channel_id")), q.user, world.OriginREST)
	n.Files = files
	return a.message(a.world.CreateMessage(n))
}

// upload is a multipart message body: payload_json (or a plain content
// field) and files[n].
type upload struct {
	payload json.RawMessage
	content string
	files   map[int]world.File
	order   []int
}

var reFilePart = regexp.MustCompile(`^files\[(\d{1,2})\]$`)

// parseUpload reads a multipart/form-data message body as Discord takes
// it: a payload_json part and files[n] parts (file, file1… as older
// clients name them, too).
// https://discord.com/developers/docs/reference#uploading-files
func parseUpload(contentType string, body []byte) (*upload, error) {
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil || params["boundary"] == "" {
		return nil, &world.Error{Status: 400, Code: world.CodeInvalidBody, Message: "Invalid Form Body: missing multipart boundary"}
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	up := &upload{files: map[int]world.File{}}
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return up, nil
		}
		if err != nil {
			return nil, &world.Error{Status: 400, Code: world.CodeInvalidBody, Message: "Invalid Form Body: " + err.Error()}
		}
		data, err := io.ReadAll(io.LimitReader(p, maxRequest+1))
		if err != nil {
			return nil, &world.Error{Status: 400, Code: world.CodeInvalidBody, Message: "Invalid Form Body: " + err.Error()}
		}
		name := p.FormName()
		switch {
		case name == "payload_json":
			up.payload = data
		case name == "content":
			up.content = string(data)
		case p.FileName() != "":
			idx := len(up.order)
			if m := reFilePart.FindStringSubmatch(name); m != nil {
				idx, _ = strconv.Atoi(m[1])
			}
			if _, dup := up.files[idx]; dup {
				return nil, &world.Error{Status: 400, Code: world.CodeInvalidBody, Message: fmt.Sprintf("Invalid Form Body: files[%d]: duplicate", idx)}
			}
			ct := p.Header.Get("Content-Type")
			if ct == "application/octet-stream" {
				ct = ""
			}
			up.files[idx] = world.File{Name: p.FileName(), ContentType: ct, Data: data}
			up.order = append(up.order, idx)
		}
	}
}

// withMetadata applies payload_json's attachments (filename, description,
// keyed by files[n]'s n) and returns the files in upload order. An entry
// naming no uploaded file is refused, as on Discord.
func (up *upload) withMetadata(entries []uploadAttachmentEntry) ([]world.File, error) {
	for i, e := range entries {
		var n int
		var s string
		switch {
		case json.Unmarshal(e.ID, &n) == nil:
		case json.Unmarshal(e.ID, &s) == nil:
			var err error
			if n, err = strconv.Atoi(s); err != nil {
				return nil, &world.Error{Status: 400, Code: world.CodeInvalidBody, Message: fmt.Sprintf("Invalid Form Body: attachments.%d.id: Value is not snowflake.", i)}
			}
		default:
			return nil, &world.Error{Status: 400, Code: world.CodeInvalidBody, Message: fmt.Sprintf("Invalid Form Body: attachments.%d.id: This field is required", i)}
		}
		f, ok := up.files[n]
		if !ok {
			return nil, &world.Error{Status: 400, Code: world.CodeInvalidBody, Message: fmt.Sprintf("Invalid Form Body: attachments.%d: Unknown attachment %d (no files[%d] part)", i, n, n)}
		}
		if e.Filename != "" {
			f.Name = e.Filename
		}
		f.Description = e.Description
		up.files[n] = f
	}
	out := make([]world.File, 0, len(up.order))
	for _, n := range up.order {
		out = append(out, up.files[n])
	}
	return out, nil
}

// listMessages is GET /channels/{id}/messages?before|after|around=&limit=.
func (a *restAPI) listMessages(q *apiRequest) (int, any, error) {
	limit, err := intParam(q, "limit", 50, 1, 100)
	if err != nil {
		return 0, nil, err
	}
	var ids [3]string
	for i, name := range []string{"before", "after", "around"} {
		if ids[i], err = snowflakeParam(q, name); err != nil {
			return 0, nil, err
		}
	}
	mq := world.MessageQuery{Before: MessageID(ids[0]), After: MessageID(ids[1]), Around: MessageID(ids[2]), Limit: limit}
	return a.inChannel(q, func(v *world.View, c world.Channel) (any, error) {
		out := []wireMessage{}
		perms := v.ChannelPermissions(c.ID, q.user)
		if perms&world.PermViewChannel == 0 {
			return nil, world.ErrMissingAccess
		}
		if perms&world.PermReadMessageHistory == 0 {
			return out, nil // Discord: "no messages will be returned"
		}
		for _, m := range v.ListMessages(c.ID, mq) {
			out = append(out, wireMessageOf(v, m, a.cdn, 0))
		}
		return out, nil
	})
}

func (a *restAPI) getMessage(q *apiRequest) (int, any, error) {
	return a.inChannel(q, func(v *world.View, c world.Channel) (any, error) {
		const need = world.PermViewChannel | world.PermReadMessageHistory
		if v.ChannelPermissions(c.ID, q.user)&need != need {
			return nil, world.ErrMissingAccess
		}
		m, ok := v.Message(MessageID(q.PathValue("message_id")))
		if !ok || m.ChannelID != c.ID || m.Ephemeral() {
			return nil, world.ErrUnknownMessage
		}
		return wireMessageOf(v, m, a.cdn, 0), nil
	})
}

type editMessageBody struct {
	Content         *string                `json:"content"`
	Embeds          []json.RawMessage      `json:"embeds"`
	AllowedMentions *world.AllowedMentions `json:"allowed_mentions"`
}

func (a *restAPI) patchMessage(q *apiRequest) (int, any, error) {
	var b editMessageBody
	if err := decodeBody(q, &b); err != nil {
		return 0, nil, err
	}
	return a.message(a.world.EditMessage(world.MessageEdit{
		Channel: ChannelID(q.PathValue("channel_id")), ID: MessageID(q.PathValue("message_id")), Editor: q.user,
		Content: b.Content, Embeds: b.Embeds, AllowedMentions: b.AllowedMentions,
	}))
}

// deleteMessage lets authors delete their messages (and, as bots with
// Manage Messages usually can, the bot delete anyone's).
func (a *restAPI) deleteMessage(q *apiRequest) (int, any, error) {
	err := a.world.DeleteMessage(world.MessageDelete{
		Channel: ChannelID(q.PathValue("channel_id")), ID: MessageID(q.PathValue("message_id")), By: q.user,
	})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

func (a *restAPI) postTyping(q *apiRequest) (int, any, error) {
	if err := a.world.StartTyping(q.user, ChannelID(q.PathValue("channel_id"))); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// postThread is POST /channels/{id}/threads and
// POST /channels/{id}/messages/{mid}/threads.
// https://discord.com/developers/docs/resources/channel#start-thread-from-message
func (a *restAPI) postThread(q *apiRequest) (int, any, error) {
	var b struct {
		Name string      `json:"name"`
		Type ChannelType `json:"type"`
	}
	if err := decodeBody(q, &b); err != nil {
		return 0, nil, err
	}
	t, err := a.world.StartThread(world.NewThread{
		Parent: ChannelID(q.PathValue("channel_id")), Owner: q.user, Name: b.Name,
		From: MessageID(q.PathValue("message_id")), Private: b.Type == ChannelPrivateThread,
	})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, wireChannelOf(t), nil
}

package control

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	discordsim "github.com/banterbot/banter/sim/discord"
)

// opTimeout bounds one control operation that waits on the simulator
// (joining voice, playing a WAV is bounded by its own length plus this).
const opTimeout = 30 * time.Second

type messageView struct {
	ID          discordsim.MessageID `json:"id"`
	Channel     discordsim.ChannelID `json:"channel_id"`
	Author      discordsim.UserID    `json:"author_id"`
	FromBot     bool                 `json:"from_bot"`
	Content     string               `json:"content"`
	ReplyTo     discordsim.MessageID `json:"reply_to,omitempty"`
	Edited      bool                 `json:"edited"`
	Embeds      int                  `json:"embeds"`
	Attachments []attachmentView     `json:"attachments"`
	Reactions   []reactionView       `json:"reactions"`
}

type attachmentView struct {
	ID          discordsim.AttachmentID `json:"id"`
	Filename    string                  `json:"filename"`
	ContentType string                  `json:"content_type"`
	Size        int                     `json:"size"`
	Width       int                     `json:"width,omitempty"`
	Height      int                     `json:"height,omitempty"`
	URL         string                  `json:"url"` // signed now, valid for discordsim.URLLifetime
}

type reactionView struct {
	Emoji string              `json:"emoji"`
	Count int                 `json:"count"`
	Users []discordsim.UserID `json:"users"`
}

func (c *Controller) view(m discordsim.Message) messageView {
	v := messageView{ID: m.ID, Channel: m.ChannelID, Author: m.Author, FromBot: m.Author == c.sim.BotID(),
		Content: m.Content, ReplyTo: m.ReplyTo(), Edited: !m.EditedTimestamp.IsZero(), Embeds: len(m.Embeds),
		Attachments: []attachmentView{}, Reactions: []reactionView{}}
	for _, a := range m.Attachments {
		v.Attachments = append(v.Attachments, attachmentView{ID: a.ID, Filename: a.Filename, ContentType: a.ContentType,
			Size: a.Size, Width: a.Width, Height: a.Height, URL: c.sim.AttachmentURL(m.ChannelID, a)})
	}
	for _, r := range m.Reactions {
		v.Reactions = append(v.Reactions, reactionView{Emoji: r.Emoji.String(), Count: len(r.Users), Users: r.Users})
	}
	return v
}

// listMessages is GET /messages?channel=C&from=bot|NAME|ID&after=ID: a
// channel's messages (every channel's without channel), oldest first.
func (c *Controller) listMessages(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var chans []discordsim.ChannelID
	if ch := q.Get("channel"); ch != "" {
		id, err := c.channel(ch)
		if err != nil {
			fail(w, http.StatusNotFound, err)
			return
		}
		chans = append(chans, id)
	} else {
		for _, ch := range c.sim.Channels(c.guild) {
			chans = append(chans, ch.ID)
		}
	}
	var from discordsim.UserID
	if f := q.Get("from"); f != "" {
		id, err := c.user(f)
		if err != nil {
			fail(w, http.StatusNotFound, err)
			return
		}
		from = id
	}
	after := q.Get("after")
	out := []messageView{}
	for _, ch := range chans {
		for _, m := range c.sim.Messages(ch) {
			if (from == "" || m.Author == from) && (after == "" || snowflakeAfter(string(m.ID), after)) {
				out = append(out, c.view(m))
			}
		}
	}
	slices.SortFunc(out, func(a, b messageView) int {
		return cmpSnowflake(string(a.ID), string(b.ID))
	})
	reply(w, http.StatusOK, out)
}

// attachmentIn is a file to attach, base64 in the JSON body.
type attachmentIn struct {
	Filename    string `json:"filename"`
	ContentType string `json:"content_type"`
	DataBase64  string `json:"data_base64"`
}

func (c *Controller) postMessage(w http.ResponseWriter, r *http.Request) {
	var in struct {
		asIn
		Content     string         `json:"content"`
		ReplyTo     string         `json:"reply_to"`
		Attachments []attachmentIn `json:"attachments"`
	}
	if !decode(w, r, &in) {
		return
	}
	u, ch, ok := c.resolve(w, in.asIn)
	if !ok {
		return
	}
	var opts []discordsim.PostOption
	if in.ReplyTo != "" {
		opts = append(opts, discordsim.ReplyTo(discordsim.MessageID(in.ReplyTo)))
	}
	for i, a := range in.Attachments {
		data, err := base64.StdEncoding.DecodeString(a.DataBase64)
		if err != nil || a.Filename == "" {
			fail(w, http.StatusBadRequest, fmt.Errorf(`"attachments"[%d]: want "filename" and "data_base64" (standard base64): %v`, i, err))
			return
		}
		opts = append(opts, discordsim.WithFile(a.Filename, a.ContentType, data))
	}
	m, err := c.sim.Post(r.Context(), u, ch, in.Content, opts...)
	if err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	reply(w, http.StatusCreated, c.view(m))
}

func (c *Controller) editMessage(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Content string `json:"content"`
	}
	if !decode(w, r, &in) {
		return
	}
	m, err := c.sim.Edit(r.Context(), discordsim.MessageID(r.PathValue("id")), in.Content)
	if err != nil {
		fail(w, http.StatusNotFound, err)
		return
	}
	reply(w, http.StatusOK, c.view(m))
}

func (c *Controller) deleteMessage(w http.ResponseWriter, r *http.Request) {
	if err := c.sim.Delete(r.Context(), discordsim.MessageID(r.PathValue("id"))); err != nil {
		fail(w, http.StatusNotFound, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// react is POST /messages/{id}/reactions {"as", "emoji"}: the member
// reacts (MESSAGE_REACTION_ADD reaches the bot).
func (c *Controller) react(w http.ResponseWriter, r *http.Request) { c.reaction(w, r, true) }

// unreact is DELETE /messages/{id}/reactions {"as", "emoji"}: the member
// takes the reaction back (MESSAGE_REACTION_REMOVE).
func (c *Controller) unreact(w http.ResponseWriter, r *http.Request) { c.reaction(w, r, false) }

func (c *Controller) reaction(w http.ResponseWriter, r *http.Request, add bool) {
	var in struct {
		As    string `json:"as"`
		Emoji string `json:"emoji"`
	}
	if !decode(w, r, &in) {
		return
	}
	u, err := c.user(in.As)
	if err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	if in.Emoji == "" {
		fail(w, http.StatusBadRequest, errors.New(`"emoji" is required (a Unicode emoji, e.g. "👍")`))
		return
	}
	id := discordsim.MessageID(r.PathValue("id"))
	if add {
		err = c.sim.React(r.Context(), u, id, in.Emoji)
	} else {
		err = c.sim.Unreact(r.Context(), u, id, in.Emoji)
	}
	if err != nil {
		status := http.StatusBadRequest
		if _, ok := c.sim.Message(id); !ok {
			status = http.StatusNotFound
		}
		fail(w, status, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

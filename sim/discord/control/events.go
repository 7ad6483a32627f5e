package control

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	discordsim "github.com/banterbot/banter/sim/discord"
)

// liveRoutes are the routes for watching and joining the world live: the
// event stream, threads and the voice stream (stream.go).
func (c *Controller) liveRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /events", c.events)
	mux.HandleFunc("POST /threads", c.createThread)
	mux.HandleFunc("GET /voice/stream", c.voiceStream)
}

// event is one event of GET /events: {"type": ..., and the fields of that type}.
type event struct {
	Type    string               `json:"type"`
	Message *eventMessage        `json:"message,omitempty"`    // message, message_update
	Channel *eventChannel        `json:"channel,omitempty"`    // channel
	Member  *memberDetail        `json:"member,omitempty"`     // member, member_update
	Role    *roleView            `json:"role,omitempty"`       // role
	RoleID  discordsim.RoleID    `json:"role_id,omitempty"`    // role_delete
	ID      discordsim.MessageID `json:"id,omitempty"`         // message_delete
	User    discordsim.UserID    `json:"user_id,omitempty"`    // typing, voice_state
	Where   discordsim.ChannelID `json:"channel_id,omitempty"` // typing, voice_state (omitted: left voice)
	At      *time.Time           `json:"at,omitempty"`         // typing
	Bot     discordsim.UserID    `json:"bot_id,omitempty"`     // hello
	Guild   discordsim.GuildID   `json:"guild_id,omitempty"`   // hello
}

// eventMessage is a message as the stream shows it: the message view plus
// its author's name.
type eventMessage struct {
	messageView
	AuthorName string `json:"author_name"`
}

type eventChannel struct {
	channelView
	Parent discordsim.ChannelID `json:"parent_id,omitempty"`
}

// watchState is what one event stream has already told its client.
type watchState struct {
	messages map[discordsim.MessageID]string // content, "\x00" and the edit time
	channels map[discordsim.ChannelID]bool
	members  map[discordsim.UserID]string // what member_update compares: in the guild, nick, roles
	roles    map[discordsim.RoleID]string // name and permissions
	voice    map[discordsim.UserID]discordsim.ChannelID
	typing   int
}

// events is GET /events: a text/event-stream of what happens in the guild,
// as it happens. It starts with "hello" (the bot and guild ids) and the
// current world as events (every channel, member, role, voice state and
// live message), then sends "channel", "member", "member_update" (nick,
// roles, in_guild changed), "role" (new or changed), "role_delete",
// "message", "message_update", "message_delete", "typing" and
// "voice_state" events as the world changes. Each event is one `data: {json}` line.
func (c *Controller) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		fail(w, http.StatusInternalServerError, errors.New("events: streaming unsupported"))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	st := &watchState{messages: map[discordsim.MessageID]string{}, channels: map[discordsim.ChannelID]bool{},
		members: map[discordsim.UserID]string{}, roles: map[discordsim.RoleID]string{}, voice: map[discordsim.UserID]discordsim.ChannelID{}}
	send := func(e event) bool {
		b, err := json.Marshal(e)
		if err == nil {
			_, err = fmt.Fprintf(w, "data: %s\n\n", b)
		}
		return err == nil
	}
	if !send(event{Type: "hello", Bot: c.sim.BotID(), Guild: c.guild}) {
		return
	}
	// A comment line now and then lets the client (and proxies) see a live stream.
	keepAlive := time.NewTicker(15 * time.Second)
	defer keepAlive.Stop()
	for {
		changed := c.sim.Changed()
		for _, e := range c.diff(st) {
			if !send(e) {
				return
			}
		}
		fl.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-changed:
		case <-keepAlive.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
		}
	}
}

// diff returns the events that bring a client at st up to date, and updates st.
func (c *Controller) diff(st *watchState) []event {
	var out []event
	names := map[discordsim.UserID]string{}
	for _, m := range c.members() {
		names[m.ID] = m.Name
		d := c.detailOf(m)
		key := fmt.Sprint(d.InGuild, d.Nick, d.Roles)
		old, known := st.members[m.ID]
		st.members[m.ID] = key
		switch {
		case !known:
			out = append(out, event{Type: "member", Member: &d})
		case old != key:
			out = append(out, event{Type: "member_update", Member: &d})
		}
	}
	c.rolesDiff(st, &out)
	chans := c.sim.Channels(c.guild)
	inGuild := map[discordsim.ChannelID]bool{}
	for _, ch := range chans {
		inGuild[ch.ID] = true
		if !st.channels[ch.ID] {
			st.channels[ch.ID] = true
			v := eventChannel{channelView: channelViewOf(ch), Parent: ch.Parent}
			out = append(out, event{Type: "channel", Channel: &v})
		}
	}
	seen := map[discordsim.MessageID]bool{}
	for _, ch := range chans {
		for _, m := range c.sim.Messages(ch.ID) {
			seen[m.ID] = true
			key := m.Content + "\x00" + m.EditedTimestamp.String()
			old, known := st.messages[m.ID]
			if known && old == key {
				continue
			}
			st.messages[m.ID] = key
			typ := "message"
			if known {
				typ = "message_update"
			}
			out = append(out, event{Type: typ, Message: &eventMessage{messageView: c.view(m), AuthorName: names[m.Author]}})
		}
	}
	for id := range st.messages {
		if !seen[id] {
			delete(st.messages, id)
			out = append(out, event{Type: "message_delete", ID: id})
		}
	}
	typing := c.sim.Typing()
	for _, t := range typing[min(st.typing, len(typing)):] {
		if inGuild[t.Channel] {
			at := t.At
			out = append(out, event{Type: "typing", User: t.User, Where: t.Channel, At: &at})
		}
	}
	st.typing = len(typing)
	for id := range names {
		c.voiceDiff(st, id, &out)
	}
	c.voiceDiff(st, c.sim.BotID(), &out)
	return out
}

func (c *Controller) voiceDiff(st *watchState, u discordsim.UserID, out *[]event) {
	var now discordsim.ChannelID
	if vs, ok := c.sim.VoiceStateOf(c.guild, u); ok {
		now = vs.Channel
	}
	if old, known := st.voice[u]; known && old == now || !known && now == "" {
		return
	}
	st.voice[u] = now
	*out = append(*out, event{Type: "voice_state", User: u, Where: now})
}

// createThread is POST /threads {"channel": C, "name": N, "as": MEMBER}: a
// public thread under a text channel, started by a member (THREAD_CREATE
// reaches the bot).
func (c *Controller) createThread(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Channel string `json:"channel"`
		Name    string `json:"name"`
		As      string `json:"as"`
	}
	if !decode(w, r, &in) {
		return
	}
	if in.Name == "" {
		fail(w, http.StatusBadRequest, errors.New(`"name" is required`))
		return
	}
	u, err := c.user(in.As)
	if err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	parent, err := c.channel(in.Channel)
	if err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	id, err := c.sim.CreateThread(parent, u, in.Name)
	if err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	reply(w, http.StatusCreated, eventChannel{channelView: channelView{ID: id, Name: in.Name, Type: "thread"}, Parent: parent})
}

// channelViewOf names a channel's type as the API does: text, voice or thread.
func channelViewOf(ch discordsim.Channel) channelView {
	typ := "text"
	switch ch.Type {
	case discordsim.ChannelVoice:
		typ = "voice"
	case discordsim.ChannelPublicThread, discordsim.ChannelPrivateThread:
		typ = "thread"
	}
	return channelView{ID: ch.ID, Name: ch.Name, Type: typ}
}

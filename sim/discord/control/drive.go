package control

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/banterbot/banter/audio/wav"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/voicesim"
)

// opTimeout bounds one control operation that waits on the simulator
// (joining voice, playing a WAV is bounded by its own length plus this).
const opTimeout = 30 * time.Second

// maxFaults bounds "n" of a REST fault (how many calls fail).
const maxFaults = 10000

type messageView struct {
	ID       discordsim.MessageID `json:"id"`
	Channel  discordsim.ChannelID `json:"channel_id"`
	Author   discordsim.UserID    `json:"author_id"`
	FromBot  bool                 `json:"from_bot"`
	Content  string               `json:"content"`
	ReplyTo  discordsim.MessageID `json:"reply_to,omitempty"`
	Edited   bool                 `json:"edited"`
	Embeds   int                  `json:"embeds"`
	Attached int                  `json:"attachments"`
}

func (c *Controller) view(m discordsim.Message) messageView {
	return messageView{ID: m.ID, Channel: m.ChannelID, Author: m.Author, FromBot: m.Author == c.sim.BotID(),
		Content: m.Content, ReplyTo: m.ReplyTo(), Edited: !m.EditedTimestamp.IsZero(), Embeds: len(m.Embeds),
		Attached: len(m.Attachments)}
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

func (c *Controller) postMessage(w http.ResponseWriter, r *http.Request) {
	var in struct {
		As      string `json:"as"`
		Channel string `json:"channel"`
		Content string `json:"content"`
		ReplyTo string `json:"reply_to"`
	}
	if !decode(w, r, &in) {
		return
	}
	u, err := c.user(in.As)
	if err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	ch, err := c.channel(in.Channel)
	if err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	var opts []discordsim.PostOption
	if in.ReplyTo != "" {
		opts = append(opts, discordsim.ReplyTo(discordsim.MessageID(in.ReplyTo)))
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

func (c *Controller) joinVoice(w http.ResponseWriter, r *http.Request) {
	var in struct {
		As      string `json:"as"`
		Channel string `json:"channel"`
	}
	if !decode(w, r, &in) {
		return
	}
	u, err := c.user(in.As)
	if err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	ch, err := c.channel(in.Channel)
	if err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	c.mu.Lock()
	_, already := c.voice[u]
	c.mu.Unlock()
	if already {
		fail(w, http.StatusConflict, fmt.Errorf("%s is already in voice (POST /voice/leave first)", in.As))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), opTimeout)
	defer cancel()
	m, err := c.sim.JoinVoiceMember(ctx, u, ch, voicesim.MemberOptions{})
	if err != nil {
		fail(w, http.StatusBadGateway, err)
		return
	}
	c.mu.Lock()
	c.voice[u] = m
	c.mu.Unlock()
	reply(w, http.StatusOK, struct {
		User    discordsim.UserID    `json:"user_id"`
		Channel discordsim.ChannelID `json:"channel_id"`
		SSRC    uint32               `json:"ssrc"`
	}{u, ch, m.SSRC()})
}

func (c *Controller) member(as string) (discordsim.UserID, *voicesim.Member, error) {
	u, err := c.user(as)
	if err != nil {
		return "", nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.voice[u]
	if m == nil {
		return "", nil, fmt.Errorf("%s is not in voice (POST /voice/join first)", as)
	}
	return u, m, nil
}

func (c *Controller) leaveVoice(w http.ResponseWriter, r *http.Request) {
	var in struct {
		As string `json:"as"`
	}
	if !decode(w, r, &in) {
		return
	}
	u, m, err := c.member(in.As)
	if err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	m.Leave()
	c.mu.Lock()
	delete(c.voice, u)
	c.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// playVoice is POST /voice/play?as=NAME with a WAV file as the body (16-bit
// PCM, 48 kHz, mono or stereo). It answers once the audio has been sent,
// with how many frames of the bot's voice the member has heard so far.
func (c *Controller) playVoice(w http.ResponseWriter, r *http.Request) {
	_, m, err := c.member(r.URL.Query().Get("as"))
	if err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, maxWAV+1))
	if err != nil || len(data) > maxWAV {
		fail(w, http.StatusRequestEntityTooLarge, fmt.Errorf("wav: read body (at most %d bytes): %v", maxWAV, err))
		return
	}
	samples, format, err := wav.Decode(nil, data)
	if err != nil {
		fail(w, http.StatusBadRequest, fmt.Errorf("wav: %w", err))
		return
	}
	if format.Rate != 48000 || (format.Channels != 1 && format.Channels != 2) {
		fail(w, http.StatusBadRequest, fmt.Errorf("wav: %d Hz, %d channels: want 48000 Hz, mono or stereo", format.Rate, format.Channels))
		return
	}
	if format.Channels == 1 {
		stereo := make([]int16, 2*len(samples))
		for i, s := range samples {
			stereo[2*i], stereo[2*i+1] = s, s
		}
		samples = stereo
	}
	length := time.Duration(len(samples)/2) * time.Second / 48000
	ctx, cancel := context.WithTimeout(r.Context(), length+opTimeout)
	defer cancel()
	if err := m.PlayPCM(ctx, samples); err != nil {
		fail(w, http.StatusBadGateway, err)
		return
	}
	reply(w, http.StatusOK, struct {
		PlayedMs    int64 `json:"played_ms"`
		HeardFrames int   `json:"heard_bot_frames"`
	}{length.Milliseconds(), len(m.Heard(string(c.sim.BotID())))})
}

// gatewayFault is POST /faults/gateway {"fault": ..., "resumable": bool,
// "n": int}, on the bot's gateway connection.
func (c *Controller) gatewayFault(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Fault     string `json:"fault"`
		Resumable bool   `json:"resumable"`
		N         int    `json:"n"`
	}
	if !decode(w, r, &in) {
		return
	}
	var err error
	switch in.Fault {
	case "reconnect":
		err = c.sim.ForceReconnect()
	case "invalid_session":
		err = c.sim.ForceInvalidSession(in.Resumable)
	case "drop":
		err = c.sim.DropGateway()
	case "withhold_acks":
		err = c.sim.WithholdACKs(max(in.N, 1))
	case "request_heartbeat":
		err = c.sim.RequestHeartbeat()
	default:
		fail(w, http.StatusBadRequest, fmt.Errorf(`"fault" %q: allowed values are reconnect (op 7), invalid_session (op 9), drop, withhold_acks, request_heartbeat (op 1)`, in.Fault))
		return
	}
	if err != nil {
		fail(w, http.StatusConflict, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// restFault is POST /faults/rest {"route": "POST /channels/{channel_id}/messages"
// ("" any), "n": 1, "status": 500} or {"status": 429, "retry_after_ms": 1500,
// "global": false}: the next n calls of the route fail so.
func (c *Controller) restFault(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Route        string `json:"route"`
		N            int    `json:"n"`
		Status       int    `json:"status"`
		RetryAfterMs int64  `json:"retry_after_ms"`
		Global       bool   `json:"global"`
	}
	if !decode(w, r, &in) {
		return
	}
	if in.Status < 400 || in.Status > 599 {
		fail(w, http.StatusBadRequest, fmt.Errorf(`"status" %d: want an HTTP error status (400-599)`, in.Status))
		return
	}
	if in.N > maxFaults {
		// The simulator queues one fault per call: a huge n would take the
		// process's memory.
		fail(w, http.StatusBadRequest, fmt.Errorf(`"n" %d: at most %d`, in.N, maxFaults))
		return
	}
	n := max(in.N, 1)
	if in.Status == http.StatusTooManyRequests {
		c.sim.RateLimitNext(discordsim.Route(in.Route), n, time.Duration(max(in.RetryAfterMs, 1))*time.Millisecond, in.Global)
	} else {
		c.sim.FailNext(discordsim.Route(in.Route), n, in.Status)
	}
	w.WriteHeader(http.StatusNoContent)
}

type restView struct {
	Method string            `json:"method"`
	Path   string            `json:"path"`
	Route  string            `json:"route"`
	User   discordsim.UserID `json:"user_id"`
	Status int               `json:"status"`
	Query  string            `json:"query,omitempty"`
	Body   jsonRaw           `json:"body,omitempty"`
}

type gatewayView struct {
	Kind    string            `json:"kind"`
	Conn    int               `json:"conn"`
	User    discordsim.UserID `json:"user_id,omitempty"`
	Session string            `json:"session,omitempty"`
	Seq     int64             `json:"seq,omitempty"`
	Close   int               `json:"close_code,omitempty"`
}

// requests is GET /requests: every REST call and gateway event recorded.
func (c *Controller) requests(w http.ResponseWriter, _ *http.Request) {
	rest := []restView{}
	for _, q := range c.sim.RESTLog() {
		rest = append(rest, restView{q.Method, q.Path, string(q.Route), q.User, q.Status, q.Query, jsonRaw(q.Body)})
	}
	gw := []gatewayView{}
	for _, e := range c.sim.GatewayEvents() {
		gw = append(gw, gatewayView{e.Kind.String(), e.Conn, e.User, e.Session, e.Seq, int(e.CloseCode)})
	}
	reply(w, http.StatusOK, struct {
		REST    []restView    `json:"rest"`
		Gateway []gatewayView `json:"gateway"`
	}{rest, gw})
}

// jsonRaw is a JSON body that marshals as null when empty.
type jsonRaw []byte

func (j jsonRaw) MarshalJSON() ([]byte, error) {
	if len(j) == 0 {
		return []byte("null"), nil
	}
	return j, nil
}

// cmpSnowflake orders decimal snowflakes numerically.
func cmpSnowflake(a, b string) int {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	if errA != nil || errB != nil {
		return strings.Compare(a, b)
	}
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func snowflakeAfter(id, after string) bool { return cmpSnowflake(id, after) > 0 }

func sortBy[T any](s []T, key func(T) string) {
	slices.SortFunc(s, func(a, b T) int { return strings.Compare(key(a), key(b)) })
}

package discordsim

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/banterbot/banter/sim/discord/world"
)

// cdn serves uploaded files the way Discord's CDN (cdn.discordapp.com) and
// media proxy (media.discordapp.net) do, on the simulator's own host:
// GET /attachments/{channel}/{attachment}/{filename} and the same under
// /media. Attachment URLs are signed: ex (expiry) and is (issue time) are
// hex Unix seconds, hm an HMAC of the path and both times. A URL past its
// expiry, or without its parameters, is 404 "This content is no longer
// available."; one whose signature does not match is 403. Every message
// fetch renders fresh URLs, as Discord's API does.
// https://discord.com/developers/docs/reference#signed-attachment-cdn-urls
type cdn struct {
	world *world.World
	base  func() string // the simulator's http://host:port
	now   func() time.Time
	key   []byte
}

// URLLifetime is how long a signed attachment URL stays valid (Discord:
// about a day).
const URLLifetime = 24 * time.Hour

func newCDN(w *world.World, base func() string, now func() time.Time) *cdn {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand.Read never fails
	return &cdn{world: w, base: base, now: now, key: key}
}

func (c *cdn) mount(mux *http.ServeMux) {
	mux.HandleFunc("GET /attachments/{channel_id}/{attachment_id}/{filename}", c.serve)
	mux.HandleFunc("GET /media/attachments/{channel_id}/{attachment_id}/{filename}", c.serve)
}

// path is the attachment's CDN path, the part the signature covers.
func attachmentPath(ch ChannelID, id AttachmentID, filename string) string {
	return "/attachments/" + string(ch) + "/" + string(id) + "/" + url.PathEscape(filename)
}

func (c *cdn) sign(path string, ex, is int64) string {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(path + "?ex=" + strconv.FormatInt(ex, 16) + "&is=" + strconv.FormatInt(is, 16)))
	return hex.EncodeToString(m.Sum(nil))
}

// urls returns an attachment's CDN and media proxy URLs, signed now.
func (c *cdn) urls(ch ChannelID, a world.Attachment) (string, string) {
	p := attachmentPath(ch, a.ID, a.Filename)
	is := c.now().Unix()
	ex := is + int64(URLLifetime/time.Second)
	q := "?ex=" + strconv.FormatInt(ex, 16) + "&is=" + strconv.FormatInt(is, 16) + "&hm=" + c.sign(p, ex, is) + "&"
	base := c.base()
	return base + p + q, base + "/media" + p + q
}

// AttachmentURL returns a's CDN URL in channel ch, signed now (what a message
// fetched now carries).
func (s *Server) AttachmentURL(ch ChannelID, a Attachment) string {
	u, _ := s.cdn.urls(ch, a)
	return u
}

func (c *cdn) serve(w http.ResponseWriter, r *http.Request) {
	gone := func() {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("This content is no longer available."))
	}
	ch, id, name := ChannelID(r.PathValue("channel_id")), AttachmentID(r.PathValue("attachment_id")), r.PathValue("filename")
	q := r.URL.Query()
	ex, errEx := strconv.ParseInt(q.Get("ex"), 16, 64)
	is, errIs := strconv.ParseInt(q.Get("is"), 16, 64)
	if errEx != nil || errIs != nil || q.Get("hm") == "" || c.now().Unix() >= ex {
		gone()
		return
	}
	want := c.sign(attachmentPath(ch, id, name), ex, is)
	if !hmac.Equal([]byte(want), []byte(q.Get("hm"))) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte("Forbidden"))
		return
	}
	a, data, ok := c.world.FileData(ch, id, name)
	if !ok {
		gone()
		return
	}
	ct := a.ContentType
	if ct == "" {
		ct = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.Header().Set("Cache-Control", "public, max-age=31536000")
	_, _ = w.Write(data)
}

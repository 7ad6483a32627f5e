package discordsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/sim/discord/world"
)

// pngOf encodes a w×h PNG.
func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// fetch GETs a URL and returns the status, the content type and the body.
func fetch(t *testing.T, u string) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

// TestUploadThroughDiscordgo: discordgo's multipart upload (payload_json
// and files[n]) creates a message whose attachment the CDN and the media
// proxy serve byte for byte; other sessions get it in MESSAGE_CREATE.
func TestUploadThroughDiscordgo(t *testing.T) {
	w := newWorld(t)
	dg, _ := openDiscordgo(t, w.sim)
	watcher, _ := identify(t, w.sim, w.sim.UserToken(w.alice), allIntents)
	watcher.until("GUILD_CREATE")
	img := pngOf(t, 3, 2)
	sent, err := dg.ChannelMessageSendComplex(string(w.text), &discordgo.MessageSend{
		Content: "look",
		Files:   []*discordgo.File{{Name: "cat.png", ContentType: "image/png", Reader: bytes.NewReader(img)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sent.Attachments) != 1 {
		t.Fatalf("attachments %+v", sent.Attachments)
	}
	a := sent.Attachments[0]
	if a.Filename != "cat.png" || a.Size != len(img) || a.ContentType != "image/png" || a.Width != 3 || a.Height != 2 {
		t.Errorf("attachment %+v", a)
	}
	for _, u := range []string{a.URL, a.ProxyURL} {
		if !strings.HasPrefix(u, w.sim.APIBaseURL()+"/") || !strings.Contains(u, "ex=") || !strings.Contains(u, "&hm=") {
			t.Errorf("URL %q is not a signed URL on the simulator", u)
		}
		st, ct, body := fetch(t, u)
		if st != 200 || ct != "image/png" || !bytes.Equal(body, img) {
			t.Errorf("GET %s: %d %s, %d bytes", u, st, ct, len(body))
		}
	}
	var mc struct {
		Content     string
		Attachments []struct {
			Filename string `json:"filename"`
			URL      string `json:"url"`
		}
	}
	if err := json.Unmarshal(watcher.until("MESSAGE_CREATE").D, &mc); err != nil {
		t.Fatal(err)
	}
	if mc.Content != "look" || len(mc.Attachments) != 1 || mc.Attachments[0].Filename != "cat.png" {
		t.Errorf("MESSAGE_CREATE %+v", mc)
	}
	if got := w.sim.Sent(); len(got) != 1 || len(got[0].Attachments) != 1 || got[0].Attachments[0].Width != 3 {
		t.Errorf("recorded %+v", got)
	}
	if log := w.sim.RESTLog(); len(log[len(log)-1].Files) != 1 || !json.Valid(log[len(log)-1].Body) {
		t.Errorf("the log keeps payload_json and the file names: %+v", log[len(log)-1])
	}
}

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestCDNSignedURLs: the CDN serves a URL while it is signed and valid, as
// Discord's does: expired or unsigned is 404, a tampered signature 403; a
// message fetched again carries fresh URLs.
func TestCDNSignedURLs(t *testing.T) {
	c := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	w := newWorld(t, WithClock(c.now))
	ctx := testCtx(t)
	data := []byte("hello, file")
	m, err := w.sim.Post(ctx, w.alice, w.text, "", WithFile("notes.txt", "", data))
	if err != nil {
		t.Fatal(err)
	}
	if a := m.Attachments[0]; a.ContentType != "text/plain; charset=utf-8" || a.Size != len(data) || a.Width != 0 {
		t.Errorf("attachment %+v", a)
	}
	fresh := func() string {
		var got wireMessage
		rest(t, w.sim, "GET", "/api/v10/channels/"+string(w.text)+"/messages/"+string(m.ID), "Bot "+w.sim.Token(), nil, &got)
		var a wireAttachment
		if len(got.Attachments) != 1 || json.Unmarshal(got.Attachments[0], &a) != nil {
			t.Fatalf("attachments %s", got.Attachments)
		}
		return a.URL
	}
	u := fresh()
	p, _ := url.Parse(u)
	q := p.Query()
	tampered := *p
	q2 := p.Query()
	q2.Set("hm", strings.Repeat("0", 64))
	tampered.RawQuery = q2.Encode()
	unsigned := *p
	unsigned.RawQuery = ""
	otherName := strings.Replace(u, "notes.txt", "other.txt", 1)
	tests := []struct {
		name string
		url  string
		want int
	}{
		{"signed", u, 200},
		{"tampered signature", tampered.String(), 403},
		{"another file name under the same signature", otherName, 403},
		{"unsigned", unsigned.String(), 404},
	}
	for _, tt := range tests {
		if st, _, body := fetch(t, tt.url); st != tt.want || (st == 200 && !bytes.Equal(body, data)) {
			t.Errorf("%s: %d, want %d", tt.name, st, tt.want)
		}
	}
	if q.Get("is") == "" || q.Get("ex") == "" {
		t.Fatalf("URL %s lacks is/ex", u)
	}
	c.advance(URLLifetime + time.Minute)
	if st, _, body := fetch(t, u); st != 404 || string(body) != "This content is no longer available." {
		t.Errorf("expired URL: %d %q, want 404", st, body)
	}
	if st, _, _ := fetch(t, fresh()); st != 200 {
		t.Errorf("a fresh URL after the old one expired: %d", st)
	}
	if err := w.sim.Delete(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	if st, _, _ := fetch(t, w.sim.AttachmentURL(w.text, m.Attachments[0])); st != 404 {
		t.Errorf("the attachment of a deleted message: %d, want 404", st)
	}
}

// multipartBody builds a message upload: payload_json (if any) and files.
func multipartBody(t *testing.T, payload string, files map[string][]byte) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	if payload != "" {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="payload_json"`)
		h.Set("Content-Type", "application/json")
		p, _ := mw.CreatePart(h)
		_, _ = p.Write([]byte(payload))
	}
	for field, data := range files {
		name, filename, _ := strings.Cut(field, "=")
		p, _ := mw.CreateFormFile(name, filename)
		_, _ = p.Write(data)
	}
	_ = mw.Close()
	return mw.FormDataContentType(), b.Bytes()
}

// TestMultipartUploadRules: payload_json's attachments rename and describe
// files[n]; what Discord refuses, the simulator refuses the same way.
func TestMultipartUploadRules(t *testing.T) {
	w := newWorld(t)
	big := make([]byte, world.MaxUpload/2+1)
	tests := []struct {
		name    string
		payload string
		files   map[string][]byte
		status  int
		code    int
		check   func(wireAttachment) string
	}{
		{"renamed and described", `{"content":"x","attachments":[{"id":0,"filename":"renamed.txt","description":"a note"}]}`,
			map[string][]byte{"files[0]=orig.bin": []byte("abc")}, 200, 0, func(a wireAttachment) string {
				if a.Filename != "renamed.txt" || a.Description != "a note" || a.ContentType != "text/plain; charset=utf-8" || a.Size != 3 {
					return fmt.Sprintf("%+v", a)
				}
				return ""
			}},
		{"a file alone", "", map[string][]byte{"files[0]=a.png": pngOf(t, 1, 1)}, 200, 0, func(a wireAttachment) string {
			if a.Width == nil || *a.Width != 1 {
				return fmt.Sprintf("%+v", a)
			}
			return ""
		}},
		{"an attachment entry without its file", `{"content":"x","attachments":[{"id":1}]}`,
			map[string][]byte{"files[0]=a.txt": []byte("a")}, 400, world.CodeInvalidBody, nil},
		{"too large together", `{"content":"x"}`,
			map[string][]byte{"files[0]=a.bin": big, "files[1]=b.bin": big}, 413, world.CodeTooLarge, nil},
		{"payload_json not JSON", `{"content":`, map[string][]byte{"files[0]=a.txt": []byte("a")}, 400, world.CodeInvalidJSON, nil},
	}
	for _, tt := range tests {
		ct, body := multipartBody(t, tt.payload, tt.files)
		req, _ := http.NewRequestWithContext(t.Context(), "POST", w.sim.APIBaseURL()+"/api/v10/channels/"+string(w.text)+"/messages", bytes.NewReader(body))
		req.Header.Set("Content-Type", ct)
		req.Header.Set("Authorization", "Bot "+w.sim.Token())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("%s: status %d, want %d: %s", tt.name, resp.StatusCode, tt.status, raw)
			continue
		}
		if tt.status != 200 {
			var e wireError
			if json.Unmarshal(raw, &e); e.Code != tt.code {
				t.Errorf("%s: code %d, want %d", tt.name, e.Code, tt.code)
			}
			continue
		}
		var m wireMessage
		var a wireAttachment
		if json.Unmarshal(raw, &m) != nil || len(m.Attachments) != 1 || json.Unmarshal(m.Attachments[0], &a) != nil {
			t.Fatalf("%s: %s", tt.name, raw)
		}
		if msg := tt.check(a); msg != "" {
			t.Errorf("%s: %s", tt.name, msg)
		}
	}
}

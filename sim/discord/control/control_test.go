package control_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/wav"
	"github.com/banterbot/banter/sim/discord/control"
)

// standalone runs RunStandalone and returns its printed fields.
func standalone(t *testing.T, o control.Options) map[string]string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := control.RunStandalone(ctx, o, pw)
		pw.Close()
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("RunStandalone: %v", err)
		}
	})
	fields := map[string]string{}
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "serving until interrupted" {
			break
		}
		for _, k := range []string{"bot token", "bot user id", "API base URL", "control API", "guild", "text channel", "voice channel", "human user", "voice CA", "voice endpoint"} {
			if v, ok := strings.CutPrefix(line, k+" "); ok {
				fields[k] = strings.Fields(v)[0]
			}
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if fields["control API"] == "" {
		t.Fatalf("printed %v", fields)
	}
	return fields
}

// call makes one control API call and decodes the answer into out.
func call(t *testing.T, method, url string, body any, out any) int {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, url, err, raw)
		}
	}
	return resp.StatusCode
}

func TestStandaloneRefusesNonLoopback(t *testing.T) {
	for _, o := range []control.Options{{Addr: "0.0.0.0:0"}, {ControlAddr: "0.0.0.0:0"}} {
		if err := control.RunStandalone(t.Context(), o, io.Discard); err == nil {
			t.Errorf("%+v: a non-loopback address must be refused", o)
		}
	}
}

// TestPinnedIDsAndConfig: with -id-time and -bot-token, two runs print the
// same ids and token; the written config names the simulator.
func TestPinnedIDsAndConfig(t *testing.T) {
	pin := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg := filepath.Join(t.TempDir(), "banter.sim.yaml")
	a := standalone(t, control.Options{IDTime: pin, BotToken: "sim-token", WriteConfig: cfg, OpenAIURL: "http://127.0.0.1:9/v1"})
	b := standalone(t, control.Options{IDTime: pin, BotToken: "sim-token"})
	for _, k := range []string{"bot token", "bot user id", "guild", "text channel", "voice channel", "human user"} {
		if a[k] == "" || a[k] != b[k] {
			t.Errorf("%s: %q then %q, want the same pinned value", k, a[k], b[k])
		}
	}
	if a["bot token"] != "sim-token" {
		t.Errorf("bot token %q", a["bot token"])
	}
	written, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"apiUrl: " + a["API base URL"], "voiceCaFile: " + a["voice CA"], "baseUrl: http://127.0.0.1:9/v1", "DISCORD_TOKEN=sim-token"} {
		if !strings.Contains(string(written), want) {
			t.Errorf("config lacks %q:\n%s", want, written)
		}
	}
}

type message struct {
	ID      string `json:"id"`
	Channel string `json:"channel_id"`
	Author  string `json:"author_id"`
	Content string `json:"content"`
	ReplyTo string `json:"reply_to"`
	Edited  bool   `json:"edited"`
}

// TestControlAPI drives the world over HTTP: members, channels, messages,
// voice, faults and the request log.
func TestControlAPI(t *testing.T) {
	f := standalone(t, control.Options{})
	ctl := f["control API"]

	var bob struct{ ID, Name, Token string }
	if st := call(t, "POST", ctl+"/members", map[string]any{"name": "bob"}, &bob); st != 201 || bob.ID == "" || bob.Token == "" {
		t.Fatalf("create member: %d %+v", st, bob)
	}
	if st := call(t, "POST", ctl+"/members", map[string]any{"name": "bob"}, nil); st != 409 {
		t.Errorf("duplicate member: %d", st)
	}
	var ch struct{ ID, Name, Type string }
	if st := call(t, "POST", ctl+"/channels", map[string]any{"name": "random", "type": "text"}, &ch); st != 201 || ch.ID == "" {
		t.Fatalf("create channel: %d %+v", st, ch)
	}
	if st := call(t, "POST", ctl+"/channels", map[string]any{"name": "x", "type": "stage"}, nil); st != 400 {
		t.Errorf("bad channel type: %d", st)
	}

	var first, second message
	if st := call(t, "POST", ctl+"/messages", map[string]any{"as": "alice", "channel": "general", "content": "hi"}, &first); st != 201 || first.Author != f["human user"] {
		t.Fatalf("post: %d %+v", st, first)
	}
	if st := call(t, "POST", ctl+"/messages", map[string]any{"as": bob.ID, "channel": "#general", "content": "yo", "reply_to": first.ID}, &second); st != 201 || second.ReplyTo != first.ID || second.Author != bob.ID {
		t.Fatalf("reply: %d %+v", st, second)
	}
	if st := call(t, "POST", ctl+"/messages", map[string]any{"as": "nobody", "channel": "general", "content": "x"}, nil); st != 400 {
		t.Errorf("unknown member: %d", st)
	}
	var edited message
	if st := call(t, "PATCH", ctl+"/messages/"+first.ID, map[string]any{"content": "hi there"}, &edited); st != 200 || !edited.Edited || edited.Content != "hi there" {
		t.Errorf("edit: %d %+v", st, edited)
	}
	if st := call(t, "DELETE", ctl+"/messages/"+second.ID, nil, nil); st != 204 {
		t.Errorf("delete: %d", st)
	}
	var list []message
	call(t, "GET", ctl+"/messages", nil, &list)
	if len(list) != 1 || list[0].ID != first.ID || list[0].Content != "hi there" {
		t.Errorf("messages after edit and delete: %+v", list)
	}

	// REST faults apply to the next real REST call; the log shows it.
	if st := call(t, "POST", ctl+"/faults/rest", map[string]any{"route": "GET /channels/{channel_id}/messages", "status": 503}, nil); st != 204 {
		t.Fatalf("rest fault: %d", st)
	}
	req, _ := http.NewRequest("GET", f["API base URL"]+"/api/v10/channels/"+f["text channel"]+"/messages", nil)
	req.Header.Set("Authorization", "Bot "+f["bot token"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 {
		t.Errorf("REST call after the fault: %d, want 503", resp.StatusCode)
	}
	var log struct {
		REST []struct {
			Method, Route string
			Status        int
		} `json:"rest"`
	}
	call(t, "GET", ctl+"/requests", nil, &log)
	if n := len(log.REST); n == 0 || log.REST[n-1].Status != 503 || log.REST[n-1].Route != "GET /channels/{channel_id}/messages" {
		t.Errorf("request log: %+v", log.REST)
	}
	// Gateway faults need the bot connected: refused clearly without.
	if st := call(t, "POST", ctl+"/faults/gateway", map[string]any{"fault": "reconnect"}, nil); st != 409 {
		t.Errorf("gateway fault without a bot session: %d", st)
	}
	if st := call(t, "POST", ctl+"/faults/gateway", map[string]any{"fault": "explode"}, nil); st != 400 {
		t.Errorf("unknown gateway fault: %d", st)
	}

	// Voice: join, play a WAV, leave.
	if st := call(t, "POST", ctl+"/voice/join", map[string]any{"as": "bob", "channel": "Voice"}, nil); st != 200 {
		t.Fatalf("join voice: %d", st)
	}
	tone := make([]int16, 48000/5) // 200 ms of mono
	for i := range tone {
		tone[i] = int16((i % 96) * 300)
	}
	var played struct {
		PlayedMs int64 `json:"played_ms"`
	}
	if st := call(t, "POST", ctl+"/voice/play?as=bob", wav.Encode(pcm.Format{Rate: 48000, Channels: 1}, tone), &played); st != 200 || played.PlayedMs != 200 {
		t.Errorf("play: %d %+v", st, played)
	}
	if st := call(t, "POST", ctl+"/voice/play?as=bob", wav.Encode(pcm.Format{Rate: 16000, Channels: 1}, tone), nil); st != 400 {
		t.Errorf("16 kHz WAV: %d, want 400", st)
	}
	if st := call(t, "POST", ctl+"/voice/leave", map[string]any{"as": "bob"}, nil); st != 204 {
		t.Errorf("leave: %d", st)
	}
	if st := call(t, "POST", ctl+"/voice/play?as=bob", wav.Encode(pcm.Format{Rate: 48000, Channels: 1}, tone), nil); st != 400 {
		t.Errorf("play after leaving: %d, want 400", st)
	}
}

// TestControlRefusesOtherOrigins: a page of another site cannot drive the
// simulator through the user's browser (a text/plain POST needs no preflight);
// scripts (no Origin) and the API's own origin can.
func TestControlRefusesOtherOrigins(t *testing.T) {
	f := standalone(t, control.Options{})
	ctl := f["control API"]
	post := func(origin string) int {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), "POST", ctl+"/messages",
			strings.NewReader(`{"as":"alice","channel":"general","content":"from `+origin+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "text/plain")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := post("https://evil.example"); st != http.StatusForbidden {
		t.Errorf("another origin: %d, want 403", st)
	}
	if st := post(""); st != http.StatusCreated {
		t.Errorf("no origin (a script): %d, want 201", st)
	}
	if st := post(ctl); st != http.StatusCreated {
		t.Errorf("the API's own origin: %d, want 201", st)
	}
	var list []message
	call(t, "GET", ctl+"/messages", nil, &list)
	for _, m := range list {
		if strings.Contains(m.Content, "evil") {
			t.Errorf("the refused post was made: %+v", m)
		}
	}
}

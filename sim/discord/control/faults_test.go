package control_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image"
	"image/png"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/wav"
	"github.com/banterbot/banter/sim/discord/control"
)

// frame is one gateway payload.
type frame struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
	T  string          `json:"t"`
}

// wsClient is a raw WebSocket client (the main gateway or the voice
// gateway) for checking what a fault does to the connection.
type wsClient struct {
	t  *testing.T
	ws *websocket.Conn
}

func dial(t *testing.T, url string, cfg *tls.Config) *wsClient {
	t.Helper()
	d := websocket.Dialer{TLSClientConfig: cfg, HandshakeTimeout: 10 * time.Second}
	ws, _, err := d.DialContext(t.Context(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return &wsClient{t: t, ws: ws}
}

func (c *wsClient) send(v any) {
	c.t.Helper()
	if err := c.ws.WriteJSON(v); err != nil {
		c.t.Fatal(err)
	}
}

// next reads one frame; a closed connection ends the test unless wantClose.
func (c *wsClient) next() (frame, error) {
	_ = c.ws.SetReadDeadline(time.Now().Add(30 * time.Second)) // a failure guard only
	var f frame
	_, data, err := c.ws.ReadMessage()
	if err == nil {
		err = json.Unmarshal(data, &f)
	}
	return f, err
}

// until reads frames until match accepts one.
func (c *wsClient) until(what string, match func(frame) bool) frame {
	c.t.Helper()
	for {
		f, err := c.next()
		if err != nil {
			c.t.Fatalf("waiting for %s: %v", what, err)
		}
		if match(f) {
			return f
		}
	}
}

// closeCode reads until the server ends the connection and returns its
// close code (1006 when the TCP connection was cut without one).
func (c *wsClient) closeCode() int {
	c.t.Helper()
	for {
		_, err := c.next()
		var ce *websocket.CloseError
		switch {
		case errors.As(err, &ce):
			return ce.Code
		case err != nil:
			c.t.Fatalf("connection ended without a close code: %v", err)
		}
	}
}

func dispatch(t string) func(frame) bool { return func(f frame) bool { return f.T == t } }
func op(n int) func(frame) bool          { return func(f frame) bool { return f.Op == n } }

// botGateway logs in as the bot (guilds, voice states, messages,
// reactions, message content) and reads READY.
func botGateway(t *testing.T, f map[string]string) *wsClient {
	t.Helper()
	var st struct {
		GatewayURL string `json:"gateway_url"`
	}
	call(t, "GET", f["control API"]+"/state", nil, &st)
	g := dial(t, st.GatewayURL+"/?v=10&encoding=json", nil)
	g.until("Hello", op(10))
	g.send(map[string]any{"op": 2, "d": map[string]any{"token": f["bot token"], "intents": 1 | 1<<7 | 1<<9 | 1<<10 | 1<<15,
		"properties": map[string]string{"os": "linux", "browser": "test", "device": "test"}}})
	g.until("READY", dispatch("READY"))
	return g
}

// gatewayLog returns the recorded gateway events of the control API.
func gatewayLog(t *testing.T, ctl string) []struct {
	Kind  string `json:"kind"`
	ACKed bool   `json:"acked"`
} {
	var log struct {
		Gateway []struct {
			Kind  string `json:"kind"`
			ACKed bool   `json:"acked"`
		} `json:"gateway"`
	}
	call(t, "GET", ctl+"/requests", nil, &log)
	return log.Gateway
}

// TestControlGatewayFaults applies every gateway fault over HTTP to a bot
// connected with a raw client and checks what the client sees.
func TestControlGatewayFaults(t *testing.T) {
	f := standalone(t, control.Options{})
	ctl := f["control API"]
	fault := func(body map[string]any) {
		t.Helper()
		if st := call(t, "POST", ctl+"/faults/gateway", body, nil); st != 204 {
			t.Fatalf("%v: %d", body, st)
		}
	}
	g := botGateway(t, f)

	fault(map[string]any{"fault": "request_heartbeat"})
	g.until("op 1", op(1))
	fault(map[string]any{"fault": "reconnect"})
	g.until("op 7", op(7))

	// withhold_acks: of two heartbeats the first goes unanswered.
	fault(map[string]any{"fault": "withhold_acks", "n": 1})
	g.send(map[string]any{"op": 1, "d": 2})
	g.send(map[string]any{"op": 1, "d": 2})
	g.until("op 11", op(11))
	var beats []bool
	for _, e := range gatewayLog(t, ctl) {
		if e.Kind == "heartbeat" {
			beats = append(beats, e.ACKed)
		}
	}
	if len(beats) != 2 || beats[0] || !beats[1] {
		t.Errorf("heartbeats acked %v, want [false true]", beats)
	}

	// Latency: frames carry it, and the count says so.
	if st := call(t, "POST", ctl+"/faults/latency", map[string]any{"gateway_ms": 20}, nil); st != 200 {
		t.Fatalf("latency: %d", st)
	}
	call(t, "POST", ctl+"/messages", map[string]any{"as": "alice", "channel": "general", "content": "slow"}, nil)
	g.until("MESSAGE_CREATE", dispatch("MESSAGE_CREATE"))
	var lat struct {
		GatewayMs     int64 `json:"gateway_ms"`
		DelayedFrames int   `json:"gateway_delayed_frames"`
	}
	call(t, "POST", ctl+"/faults/latency", map[string]any{"gateway_ms": 0}, &lat)
	if lat.GatewayMs != 0 || lat.DelayedFrames < 1 {
		t.Errorf("latency after the message: %+v, want frames delayed and the latency off", lat)
	}

	fault(map[string]any{"fault": "invalid_session", "resumable": false})
	if f := g.until("op 9", op(9)); string(f.D) != "false" {
		t.Errorf("op 9 d=%s", f.D)
	}
	g.send(map[string]any{"op": 2, "d": map[string]any{"token": f["bot token"], "intents": 1,
		"properties": map[string]string{"os": "linux", "browser": "test", "device": "test"}}})
	g.until("READY on the same socket", dispatch("READY"))

	fault(map[string]any{"fault": "close", "code": 4000})
	if code := g.closeCode(); code != 4000 {
		t.Errorf("close fault: code %d, want 4000", code)
	}
	if st := call(t, "POST", ctl+"/faults/gateway", map[string]any{"fault": "close", "code": 77}, nil); st != 400 {
		t.Errorf("close code 77: %d, want 400", st)
	}
	g = botGateway(t, f)
	fault(map[string]any{"fault": "drop"})
	if code := g.closeCode(); code != websocket.CloseAbnormalClosure {
		t.Errorf("drop: code %d, want 1006 (no close frame)", code)
	}
	// Every gateway event in /requests says when it happened.
	var log struct {
		Gateway []struct {
			Kind string `json:"kind"`
			At   string `json:"at"`
		} `json:"gateway"`
	}
	call(t, "GET", ctl+"/requests", nil, &log)
	for _, e := range log.Gateway {
		if _, err := time.Parse("2006-01-02T15:04:05.000Z07:00", e.At); err != nil {
			t.Errorf("gateway event %s: at %q: %v", e.Kind, e.At, err)
		}
	}
	if len(log.Gateway) == 0 {
		t.Error("no gateway events in /requests")
	}
}

// restCall makes one REST call as the bot and returns the status.
func restCall(t *testing.T, f map[string]string, method, path, body string) (int, http.Header) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, f["API base URL"]+"/api/v10"+path, bytes.NewReader([]byte(body)))
	req.Header.Set("Authorization", "Bot "+f["bot token"])
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}

// TestControlRESTFaults: 429s, lost answers and latency set over HTTP act
// on the next REST calls.
func TestControlRESTFaults(t *testing.T) {
	f := standalone(t, control.Options{})
	ctl := f["control API"]
	messages := "/channels/" + f["text channel"] + "/messages"
	route := "POST /channels/{channel_id}/messages"

	// A 429 on one route (its bucket then stays empty for retry_after, as on Discord), and a
	// global one on whichever call comes next.
	call(t, "POST", ctl+"/faults/rest", map[string]any{"route": "GET /users/@me", "status": 429, "retry_after_ms": 1500}, nil)
	st, h := restCall(t, f, "GET", "/users/@me", "")
	if st != 429 || h.Get("Retry-After") != "2" || h.Get("X-RateLimit-Scope") != "user" || h.Get("X-RateLimit-Remaining") != "0" {
		t.Errorf("after a 429 fault: %d, Retry-After %q, scope %q, remaining %q", st, h.Get("Retry-After"), h.Get("X-RateLimit-Scope"), h.Get("X-RateLimit-Remaining"))
	}
	call(t, "POST", ctl+"/faults/rest", map[string]any{"status": 429, "global": true}, nil)
	if st, h := restCall(t, f, "GET", "/gateway/bot", ""); st != 429 || h.Get("X-RateLimit-Global") != "true" {
		t.Errorf("a global 429: %d, global %q", st, h.Get("X-RateLimit-Global"))
	}
	if st, _ := restCall(t, f, "POST", messages, `{"content":"two"}`); st != 200 {
		t.Errorf("a call after the faults: %d", st)
	}

	call(t, "POST", ctl+"/faults/rest", map[string]any{"route": route, "status": 503, "after_commit": true}, nil)
	if st, _ := restCall(t, f, "POST", messages, `{"content":"lost answer"}`); st != 503 {
		t.Errorf("after_commit fault: %d, want 503", st)
	}
	var list []struct{ Content string }
	call(t, "GET", ctl+"/messages?from=bot", nil, &list)
	if len(list) != 2 || list[1].Content != "lost answer" {
		t.Errorf("the bot's messages %+v: the lost answer's message must exist", list)
	}
	if st := call(t, "POST", ctl+"/faults/rest", map[string]any{"status": 429, "after_commit": true}, nil); st != 400 {
		t.Errorf("a 429 after commit: %d, want 400", st)
	}

	call(t, "POST", ctl+"/faults/latency", map[string]any{"rest_ms": 30, "route": "GET /channels/{channel_id}/messages"}, nil)
	restCall(t, f, "GET", messages, "")
	restCall(t, f, "GET", "/users/@me", "")
	var log struct {
		REST []struct {
			Route   string `json:"route"`
			DelayMs int64  `json:"delay_ms"`
		} `json:"rest"`
	}
	call(t, "GET", ctl+"/requests", nil, &log)
	n := len(log.REST)
	if n < 2 || log.REST[n-2].DelayMs != 30 || log.REST[n-1].DelayMs != 0 {
		t.Errorf("delays recorded %+v, want 30 ms on the route only", log.REST[max(n-2, 0):])
	}
	if st := call(t, "POST", ctl+"/faults/latency", map[string]any{"rest_ms": -1}, nil); st != 400 {
		t.Errorf("negative latency: %d", st)
	}
}

// TestControlReactionsAndAttachments: a member reacts and posts an image
// over HTTP; the bot's gateway session sees both, the CDN serves the file.
func TestControlReactionsAndAttachments(t *testing.T) {
	f := standalone(t, control.Options{})
	ctl := f["control API"]
	g := botGateway(t, f)
	var img bytes.Buffer
	_ = png.Encode(&img, image.NewRGBA(image.Rect(0, 0, 4, 3)))
	var posted struct {
		ID          string `json:"id"`
		Attachments []struct {
			Filename      string `json:"filename"`
			Width, Height int
			URL           string `json:"url"`
		} `json:"attachments"`
	}
	st := call(t, "POST", ctl+"/messages", map[string]any{"as": "alice", "channel": "general", "content": "my cat",
		"attachments": []map[string]any{{"filename": "cat.png", "data_base64": base64.StdEncoding.EncodeToString(img.Bytes())}}}, &posted)
	if st != 201 || len(posted.Attachments) != 1 || posted.Attachments[0].Width != 4 || posted.Attachments[0].Height != 3 {
		t.Fatalf("post with an attachment: %d %+v", st, posted)
	}
	var mc struct {
		Attachments []struct {
			URL         string `json:"url"`
			ContentType string `json:"content_type"`
		} `json:"attachments"`
	}
	_ = json.Unmarshal(g.until("MESSAGE_CREATE", dispatch("MESSAGE_CREATE")).D, &mc)
	if len(mc.Attachments) != 1 || mc.Attachments[0].ContentType != "image/png" {
		t.Fatalf("MESSAGE_CREATE attachments %+v", mc.Attachments)
	}
	resp, err := http.Get(mc.Attachments[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(body, img.Bytes()) {
		t.Errorf("CDN: %d, %d bytes", resp.StatusCode, len(body))
	}
	if st := call(t, "POST", ctl+"/messages", map[string]any{"as": "alice", "channel": "general",
		"attachments": []map[string]any{{"filename": "x.png", "data_base64": "%%%"}}}, nil); st != 400 {
		t.Errorf("bad base64: %d", st)
	}

	if st := call(t, "POST", ctl+"/messages/"+posted.ID+"/reactions", map[string]any{"as": "alice", "emoji": "😻"}, nil); st != 204 {
		t.Fatalf("react: %d", st)
	}
	var add struct {
		UserID string `json:"user_id"`
		Emoji  struct{ Name string }
	}
	_ = json.Unmarshal(g.until("MESSAGE_REACTION_ADD", dispatch("MESSAGE_REACTION_ADD")).D, &add)
	if add.UserID != f["human user"] || add.Emoji.Name != "😻" {
		t.Errorf("MESSAGE_REACTION_ADD %+v", add)
	}
	var list []struct {
		Reactions []struct {
			Emoji string
			Count int
		}
	}
	call(t, "GET", ctl+"/messages", nil, &list)
	if len(list) != 1 || len(list[0].Reactions) != 1 || list[0].Reactions[0].Count != 1 {
		t.Errorf("messages %+v", list)
	}
	if st := call(t, "DELETE", ctl+"/messages/"+posted.ID+"/reactions", map[string]any{"as": "alice", "emoji": "😻"}, nil); st != 204 {
		t.Errorf("unreact: %d", st)
	}
	g.until("MESSAGE_REACTION_REMOVE", dispatch("MESSAGE_REACTION_REMOVE"))
	for body, want := range map[string]int{`{"as":"alice","emoji":"cat"}`: 400, `{"as":"alice"}`: 400} {
		if st := call(t, "POST", ctl+"/messages/"+posted.ID+"/reactions", []byte(body), nil); st != want {
			t.Errorf("react %s: %d, want %d", body, st, want)
		}
	}
	if st := call(t, "POST", ctl+"/messages/1/reactions", map[string]any{"as": "alice", "emoji": "😻"}, nil); st != 404 {
		t.Errorf("react to an unknown message: %d", st)
	}
}

// TestControlVoiceFaults: voice faults over HTTP on the bot's own voice
// connection (close with a code, a TCP drop), UDP loss on a member, and a
// corrupted DAVE Welcome that the member recovers from with op 31.
func TestControlVoiceFaults(t *testing.T) {
	f := standalone(t, control.Options{})
	ctl := f["control API"]
	voiceFault := func(body map[string]any, want int) {
		t.Helper()
		if st := call(t, "POST", ctl+"/faults/voice", body, nil); st != want {
			t.Fatalf("%v: %d, want %d", body, st, want)
		}
	}
	voiceFault(map[string]any{"as": "bot", "fault": "drop"}, 409) // not in voice
	voiceFault(map[string]any{"as": "bot", "fault": "udp", "direction": "sideways"}, 400)

	g := botGateway(t, f)
	pem, err := os.ReadFile(f["voice CA"])
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	joinVoice := func() *wsClient {
		t.Helper()
		g.send(map[string]any{"op": 4, "d": map[string]any{"guild_id": f["guild"], "channel_id": f["voice channel"], "self_mute": false, "self_deaf": false}})
		var vs struct {
			SessionID string `json:"session_id"`
		}
		_ = json.Unmarshal(g.until("VOICE_STATE_UPDATE", dispatch("VOICE_STATE_UPDATE")).D, &vs)
		var srv struct{ Token, Endpoint string }
		_ = json.Unmarshal(g.until("VOICE_SERVER_UPDATE", dispatch("VOICE_SERVER_UPDATE")).D, &srv)
		v := dial(t, "wss://"+srv.Endpoint+"/?v=8", &tls.Config{RootCAs: roots})
		v.until("voice Hello", op(8))
		v.send(map[string]any{"op": 0, "d": map[string]any{"server_id": f["guild"], "user_id": f["bot user id"],
			"session_id": vs.SessionID, "token": srv.Token, "max_dave_protocol_version": 0}})
		v.until("voice Ready", op(2))
		return v
	}
	v := joinVoice()
	voiceFault(map[string]any{"as": "bot", "fault": "close", "code": 4006}, 204)
	if code := v.closeCode(); code != 4006 {
		t.Errorf("voice close: %d, want 4006", code)
	}
	v = joinVoice()
	voiceFault(map[string]any{"as": "bot", "fault": "drop"}, 204)
	if code := v.closeCode(); code != websocket.CloseAbnormalClosure {
		t.Errorf("voice drop: %d, want 1006", code)
	}

	// The bot leaves (its client had no DAVE); bob and alice form a DAVE group.
	g.send(map[string]any{"op": 4, "d": map[string]any{"guild_id": f["guild"], "channel_id": nil, "self_mute": false, "self_deaf": false}})
	g.until("VOICE_STATE_UPDATE (left)", dispatch("VOICE_STATE_UPDATE"))
	call(t, "POST", ctl+"/members", map[string]any{"name": "bob"}, nil)
	for _, who := range []string{"bob", "alice"} {
		if st := call(t, "POST", ctl+"/voice/join", map[string]any{"as": who, "channel": "Voice"}, nil); st != 200 {
			t.Fatalf("join %s: %d", who, st)
		}
	}
	type daveView struct {
		Established    bool     `json:"established"`
		Members        []string `json:"members"`
		Busy           bool     `json:"busy"`
		InvalidReports uint64   `json:"invalid_reports"`
	}
	dave := func() daveView {
		var st struct {
			DAVE daveView `json:"dave"`
		}
		call(t, "GET", ctl+"/voice/state?channel=Voice", nil, &st)
		return st.DAVE
	}
	waitFor(t, "a DAVE group of bob and alice", func() bool { d := dave(); return d.Established && !d.Busy && len(d.Members) == 2 })

	// UDP loss on what bob sends: the voice server counts the drops.
	voiceFault(map[string]any{"as": "bob", "fault": "udp", "direction": "to_server", "jitter_ms": -1}, 400)
	voiceFault(map[string]any{"as": "bob", "fault": "udp", "direction": "to_server", "delay_ms": 20, "jitter_ms": 40, "loss_percent": 100, "seed": 1}, 204)
	tone := make([]int16, 48000/5)
	for i := range tone {
		tone[i] = int16((i % 96) * 300)
	}
	call(t, "POST", ctl+"/voice/play?as=bob", wav.Encode(pcm.Format{Rate: 48000, Channels: 1}, tone), nil)
	var stats struct {
		RTP          uint64 `json:"rtp"`
		FaultDropped uint64 `json:"fault_dropped"`
	}
	waitFor(t, "dropped packets counted", func() bool {
		call(t, "GET", ctl+"/voice/stats", nil, &stats)
		return stats.FaultDropped > 0
	})
	if call(t, "GET", ctl+"/voice/stats?as=bob", nil, &stats); stats.RTP != 0 {
		t.Errorf("stats %+v: with 100%% loss no RTP of bob's reaches the server", stats)
	}

	// A corrupted Welcome: carol answers op 31 and is re-added.
	call(t, "POST", ctl+"/members", map[string]any{"name": "carol"}, nil)
	voiceFault(map[string]any{"as": "carol", "fault": "corrupt_welcome"}, 400) // not in voice, no channel
	voiceFault(map[string]any{"as": "carol", "fault": "corrupt_welcome", "channel": "Voice"}, 204)
	call(t, "POST", ctl+"/voice/join", map[string]any{"as": "carol", "channel": "Voice"}, nil)
	waitFor(t, "op 31 from carol, and carol in the group", func() bool {
		d := dave()
		return d.InvalidReports == 1 && !d.Busy && len(d.Members) == 3
	})
}

// waitFor polls the control API until cond holds: the API is plain HTTP,
// so there is no event to block on. The deadline is a failure guard.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPinnedVoicePort: -voice-port pins the voice endpoint.
func TestPinnedVoicePort(t *testing.T) {
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // free again; the simulator takes it
	f := standalone(t, control.Options{VoicePort: port})
	if want := "127.0.0.1:" + strconv.Itoa(port); f["voice endpoint"] != want {
		t.Errorf("voice endpoint %q, want %q", f["voice endpoint"], want)
	}
}

package discordsim

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// world is a small populated simulator: one guild with a text and a voice
// channel, the bot and alice as members.
type simWorld struct {
	sim   *Server
	guild GuildID
	text  ChannelID
	voice ChannelID
	alice UserID
}

func newWorld(t *testing.T, opts ...Option) *simWorld {
	t.Helper()
	s := serve(t, opts...)
	w := &simWorld{sim: s, guild: s.CreateGuild("Sim Guild")}
	w.text = s.CreateTextChannel(w.guild, "general")
	w.voice = s.CreateVoiceChannel(w.guild, "Voice")
	w.alice = s.CreateUser("alice")
	if err := s.AddMember(w.guild, w.alice); err != nil {
		t.Fatal(err)
	}
	return w
}

// testCtx bounds a test's waits: a generous failure guard (the race detector
// on a loaded 2-core machine is slow), never a timing requirement.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// rest performs one REST call as token (raw, "" for none) and decodes the
// JSON answer into out (if non-nil).
func rest(t *testing.T, s *Server, method, path, token string, body any, out any) *http.Response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, s.APIBaseURL()+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: decode %q: %v", method, path, b, err)
		}
	}
	return resp
}

// rawGW is a hand-driven gateway client for precise protocol checks.
type rawGW struct {
	t  *testing.T
	ws *websocket.Conn
}

type gwFrame struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
	S  *int64          `json:"s"`
	T  *string         `json:"t"`
	// Binary is set when the frame arrived as a binary (compressed) frame.
	Binary bool `json:"-"`
}

func (f gwFrame) typ() string {
	if f.T == nil {
		return ""
	}
	return *f.T
}

func dialGW(t *testing.T, s *Server, query string) *rawGW {
	t.Helper()
	u, _ := url.Parse(s.GatewayURL() + "/?" + query)
	ws, _, err := websocket.DefaultDialer.DialContext(t.Context(), u.String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return &rawGW{t: t, ws: ws}
}

func (g *rawGW) send(v any) {
	g.t.Helper()
	if err := g.ws.WriteJSON(v); err != nil {
		g.t.Fatal(err)
	}
}

// read returns the next frame, inflating binary frames (payload
// compression: each a whole zlib stream).
func (g *rawGW) read() gwFrame {
	g.t.Helper()
	f, err := g.tryRead()
	if err != nil {
		g.t.Fatalf("gateway read: %v", err)
	}
	return f
}

func (g *rawGW) tryRead() (gwFrame, error) {
	_ = g.ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	mt, data, err := g.ws.ReadMessage()
	if err != nil {
		return gwFrame{}, err
	}
	var f gwFrame
	if mt == websocket.BinaryMessage {
		f.Binary = true
		z, err := zlib.NewReader(bytes.NewReader(data))
		if err != nil {
			return f, err
		}
		data, err = io.ReadAll(z)
		if err != nil {
			return f, err
		}
	}
	err = json.Unmarshal(data, &f)
	f.Binary = mt == websocket.BinaryMessage
	return f, err
}

// until reads frames until one has dispatch type typ (or op, for typ "").
func (g *rawGW) until(typ string) gwFrame {
	g.t.Helper()
	for {
		f := g.read()
		if f.typ() == typ {
			return f
		}
	}
}

// closeCode reads until the server closes and returns the close code.
func (g *rawGW) closeCode() int {
	g.t.Helper()
	for {
		_, err := g.tryRead()
		if err != nil {
			var ce *websocket.CloseError
			if ok := asCloseError(err, &ce); ok {
				return ce.Code
			}
			return -1
		}
	}
}

func asCloseError(err error, ce **websocket.CloseError) bool {
	e, ok := err.(*websocket.CloseError)
	if ok {
		*ce = e
	}
	return ok
}

func identifyPayload(token string, intents Intents, compress bool) map[string]any {
	return map[string]any{"op": 2, "d": map[string]any{
		"token": token, "intents": intents, "compress": compress,
		"properties": map[string]string{"os": "linux", "browser": "test", "device": "test"},
	}}
}

// serve is simtest.Serve for this package's own tests (which cannot import
// simtest: it imports this package).
func serve(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := New(opts...)
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatalf("discordsim: start: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

package control_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/banterbot/banter/sim/discord/control"
)

// liveEvent is one event of GET /events.
type liveEvent struct {
	Type    string `json:"type"`
	Message *struct {
		ID         string `json:"id"`
		Content    string `json:"content"`
		AuthorName string `json:"author_name"`
		Channel    string `json:"channel_id"`
	} `json:"message"`
	Channel *struct {
		ID, Name, Type string
		Parent         string `json:"parent_id"`
	} `json:"channel"`
	Member *struct {
		ID, Name, Nick string
		Roles          []string
		InGuild        bool `json:"in_guild"`
	} `json:"member"`
	Role *struct {
		ID, Name, Permissions string
		Managed               bool
	} `json:"role"`
	RoleID string `json:"role_id"`
	ID     string `json:"id"`
	User   string `json:"user_id"`
	Where  string `json:"channel_id"`
}

// eventStream opens GET /events and returns a function that waits for the
// first event (from the start of the stream) matching pred.
func eventStream(t *testing.T, ctl string) func(what string, pred func(liveEvent) bool) liveEvent {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", ctl+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	events := make(chan liveEvent, 1024)
	var history []liveEvent
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var e liveEvent
			if err := json.Unmarshal([]byte(data), &e); err != nil {
				t.Errorf("event %q: %v", data, err)
				return
			}
			events <- e
		}
	}()
	return func(what string, pred func(liveEvent) bool) liveEvent {
		t.Helper()
		guard := time.NewTimer(60 * time.Second) // a failure guard, not a timing requirement
		defer guard.Stop()
		for _, e := range history {
			if pred(e) {
				return e
			}
		}
		for {
			select {
			case e, ok := <-events:
				if !ok {
					t.Fatalf("stream ended before %s", what)
				}
				history = append(history, e)
				if pred(e) {
					return e
				}
			case <-guard.C:
				t.Fatalf("no %s event", what)
			}
		}
	}
}

// TestEventStream: the stream starts with the world as it is, then reports
// messages (new, edited, deleted), threads, typing and voice states live.
func TestEventStream(t *testing.T) {
	f := standalone(t, control.Options{})
	ctl := f["control API"]
	var early message
	call(t, "POST", ctl+"/messages", map[string]any{"as": "alice", "channel": "general", "content": "before the stream"}, &early)

	wait := eventStream(t, ctl)
	wait("hello", func(e liveEvent) bool { return e.Type == "hello" })
	wait("#general", func(e liveEvent) bool {
		return e.Type == "channel" && e.Channel.Name == "general" && e.Channel.Type == "text"
	})
	wait("alice", func(e liveEvent) bool { return e.Type == "member" && e.Member.Name == "alice" })
	wait("the earlier message", func(e liveEvent) bool { return e.Type == "message" && e.Message.ID == early.ID })

	var m message
	if st := call(t, "POST", ctl+"/messages", map[string]any{"as": "alice", "channel": "general", "content": "live one"}, &m); st != 201 {
		t.Fatalf("post: %d", st)
	}
	got := wait("the new message", func(e liveEvent) bool { return e.Type == "message" && e.Message.ID == m.ID })
	if got.Message.Content != "live one" || got.Message.AuthorName != "alice" || got.Message.Channel != f["text channel"] {
		t.Errorf("message event %+v", got.Message)
	}
	call(t, "PATCH", ctl+"/messages/"+m.ID, map[string]any{"content": "live one, edited"}, nil)
	if got := wait("the edit", func(e liveEvent) bool { return e.Type == "message_update" && e.Message.ID == m.ID }); got.Message.Content != "live one, edited" {
		t.Errorf("update event %+v", got.Message)
	}
	call(t, "DELETE", ctl+"/messages/"+m.ID, nil, nil)
	wait("the delete", func(e liveEvent) bool { return e.Type == "message_delete" && e.ID == m.ID })

	var th struct {
		ID     string `json:"id"`
		Parent string `json:"parent_id"`
	}
	if st := call(t, "POST", ctl+"/threads", map[string]any{"channel": "general", "name": "side chat", "as": "alice"}, &th); st != 201 || th.Parent != f["text channel"] {
		t.Fatalf("create thread: %d %+v", st, th)
	}
	if st := call(t, "POST", ctl+"/threads", map[string]any{"channel": "Voice", "name": "x", "as": "alice"}, nil); st != 400 {
		t.Errorf("thread under a voice channel: %d, want 400", st)
	}
	wait("the thread", func(e liveEvent) bool {
		return e.Type == "channel" && e.Channel.ID == th.ID && e.Channel.Type == "thread" && e.Channel.Parent == f["text channel"]
	})
	call(t, "POST", ctl+"/messages", map[string]any{"as": "alice", "channel": th.ID, "content": "in the thread"}, nil)
	wait("the thread's message", func(e liveEvent) bool { return e.Type == "message" && e.Message.Channel == th.ID })

	call(t, "POST", ctl+"/voice/join", map[string]any{"as": "alice", "channel": "Voice"}, nil)
	wait("alice in voice", func(e liveEvent) bool {
		return e.Type == "voice_state" && e.User == f["human user"] && e.Where == f["voice channel"]
	})
	call(t, "POST", ctl+"/voice/leave", map[string]any{"as": "alice"}, nil)
	wait("alice out of voice", func(e liveEvent) bool { return e.Type == "voice_state" && e.User == f["human user"] && e.Where == "" })
}

// voiceSocket is one end of GET /voice/stream.
type voiceSocket struct {
	ws    *websocket.Conn
	audio chan audioChunk
	text  chan map[string]any
}

type audioChunk struct {
	user string
	pcm  []int16
}

func openVoiceStream(t *testing.T, ctl, as, extra string) *voiceSocket {
	t.Helper()
	u := "ws" + strings.TrimPrefix(ctl, "http") + "/voice/stream?as=" + as + extra
	ws, _, err := websocket.DefaultDialer.DialContext(t.Context(), u, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", u, err)
	}
	t.Cleanup(func() { ws.Close() })
	vs := &voiceSocket{ws: ws, audio: make(chan audioChunk, 4096), text: make(chan map[string]any, 256)}
	go func() {
		defer close(vs.audio)
		defer close(vs.text)
		for {
			typ, data, err := ws.ReadMessage()
			if err != nil {
				return
			}
			if typ == websocket.TextMessage {
				var m map[string]any
				_ = json.Unmarshal(data, &m)
				vs.text <- m
				continue
			}
			n := int(data[0])
			pcm := make([]int16, (len(data)-1-n)/2)
			for i := range pcm {
				pcm[i] = int16(binary.LittleEndian.Uint16(data[1+n+2*i:]))
			}
			vs.audio <- audioChunk{user: string(data[1 : 1+n]), pcm: pcm}
		}
	}()
	return vs
}

func (vs *voiceSocket) waitText(t *testing.T, what string, pred func(map[string]any) bool) {
	t.Helper()
	guard := time.NewTimer(60 * time.Second) // failure guard
	defer guard.Stop()
	for {
		select {
		case m, ok := <-vs.text:
			if !ok {
				t.Fatalf("socket closed before %s", what)
			}
			if pred(m) {
				return
			}
		case <-guard.C:
			t.Fatalf("no %s", what)
		}
	}
}

func speaking(user string, on bool) func(map[string]any) bool {
	return func(m map[string]any) bool {
		return m["type"] == "speaking" && m["user_id"] == user && m["speaking"] == on
	}
}

// TestVoiceStream: PCM written to one member's stream is heard, decoded, on
// another member's stream, with speaking states for both ends; closing a
// stream opened with leave_on_close takes its member out of voice.
func TestVoiceStream(t *testing.T) {
	f := standalone(t, control.Options{})
	ctl := f["control API"]
	var bob struct{ ID string }
	call(t, "POST", ctl+"/members", map[string]any{"name": "bob"}, &bob)
	for _, who := range []string{"alice", "bob"} {
		if st := call(t, "POST", ctl+"/voice/join", map[string]any{"as": who, "channel": "Voice"}, nil); st != 200 {
			t.Fatalf("join %s: %d", who, st)
		}
	}
	if st := call(t, "GET", ctl+"/voice/stream?as=nobody", nil, nil); st != 400 {
		t.Errorf("stream for an unknown member: %d", st)
	}
	alice := openVoiceStream(t, ctl, "alice", "")
	bobWS := openVoiceStream(t, ctl, "bob", "&leave_on_close=1")
	// The standalone voice server runs DAVE: both ends report end-to-end encryption up (in
	// "ready", or in an "e2ee" message after it).
	e2eeActive := func(m map[string]any) bool {
		return (m["type"] == "ready" || m["type"] == "e2ee") && m["e2ee"] == "active"
	}
	alice.waitText(t, "alice's E2EE", e2eeActive)
	bobWS.waitText(t, "bob's E2EE", e2eeActive)

	// One second of a 440 Hz tone, sent in 100 ms pieces as a microphone would.
	tone := make([]byte, 0, 2*48000)
	for i := range 48000 {
		s := int16(8000 * math.Sin(2*math.Pi*440*float64(i)/48000))
		tone = binary.LittleEndian.AppendUint16(tone, uint16(s))
	}
	for off := 0; off < len(tone); off += 9600 {
		if err := bobWS.ws.WriteMessage(websocket.BinaryMessage, tone[off:off+9600]); err != nil {
			t.Fatal(err)
		}
	}
	bobWS.waitText(t, "bob's own speaking on", speaking(bob.ID, true))
	alice.waitText(t, "alice hears bob speaking", speaking(bob.ID, true))

	var samples int
	var energy float64
	guard := time.NewTimer(60 * time.Second) // failure guard
	defer guard.Stop()
	for samples < 2*48000*8/10 { // most of the second, as stereo
		select {
		case c := <-alice.audio:
			if c.user != bob.ID {
				t.Fatalf("audio from %q, want bob %s", c.user, bob.ID)
			}
			samples += len(c.pcm)
			for _, s := range c.pcm {
				energy += float64(s) * float64(s)
			}
		case <-guard.C:
			t.Fatalf("alice heard %d samples of bob", samples)
		}
	}
	if rms := math.Sqrt(energy / float64(samples)); rms < 2000 {
		t.Errorf("what alice heard has RMS %.0f; the tone's is about 5600", rms)
	}
	bobWS.waitText(t, "bob's spurt ends", speaking(bob.ID, false))
	alice.waitText(t, "alice hears bob stop", speaking(bob.ID, false))

	wait := eventStream(t, ctl)
	wait("bob in voice", func(e liveEvent) bool { return e.Type == "voice_state" && e.User == bob.ID && e.Where != "" })
	bobWS.ws.Close()
	wait("bob out of voice after closing his stream", func(e liveEvent) bool { return e.Type == "voice_state" && e.User == bob.ID && e.Where == "" })

	// A page of another site may not open a member's stream.
	hdr := http.Header{"Origin": {"https://evil.example"}}
	u := "ws" + strings.TrimPrefix(ctl, "http") + "/voice/stream?as=alice"
	if ws, resp, err := websocket.DefaultDialer.DialContext(context.Background(), u, hdr); err == nil {
		ws.Close()
		t.Error("a cross-origin page opened a voice stream")
	} else if resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-origin stream: %v", err)
	}
}

package openaisim

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestRealtimeFaults: each fault of a realtime rule (handshake refusals, drops, malformed and
// lost events) as a client sees it on the socket.
func TestRealtimeFaults(t *testing.T) {
	t.Run("handshake 429", func(t *testing.T) {
		s := serve(t, WithRules(Rule{Match: Match{Endpoint: EndpointRealtime}, Fault: Fault{Status: 429, RetryAfter: 3 * time.Second}}))
		_, res, err := websocket.DefaultDialer.Dial(s.RealtimeURL()+"?model=gpt-realtime", nil)
		if err == nil || res == nil || res.StatusCode != 429 || res.Header.Get("Retry-After") != "3" {
			t.Fatalf("dial: %v %v", err, res)
		}
		var body struct{ Error APIError }
		if json.NewDecoder(res.Body).Decode(&body) != nil || body.Error.Type != "requests" {
			t.Errorf("body %+v", body)
		}
	})
	t.Run("drop after connect", func(t *testing.T) {
		s := serve(t, WithRules(Rule{Match: Match{Endpoint: EndpointRealtime}, Fault: Fault{DropAfterEvents: 2}}))
		c := dialRT(t, s, "gpt-realtime")
		c.send(map[string]any{"type": "input_audio_buffer.clear"})
		if ev := c.next(); ev["type"] != "input_audio_buffer.cleared" {
			t.Fatalf("event %v", ev)
		}
		_, err := c.read()
		if err == nil || websocket.IsCloseError(err, websocket.CloseNormalClosure) {
			t.Errorf("after drop: %v, want abrupt close", err)
		}
	})
	t.Run("drop on a client event", func(t *testing.T) {
		s := serve(t, WithRules(Rule{Match: Match{Endpoint: EndpointRealtime}, Fault: Fault{DropOnClientEvent: "input_audio_buffer.clear"}}))
		c := dialRT(t, s, "gpt-realtime")
		c.send(map[string]any{"type": "input_audio_buffer.commit"}) // another type: answered (an error: nothing to commit)
		if ev := c.next(); ev["type"] != "error" {
			t.Fatalf("event %v", ev)
		}
		c.send(map[string]any{"type": "input_audio_buffer.clear"})
		_, err := c.read()
		if err == nil || websocket.IsCloseError(err, websocket.CloseNormalClosure) {
			t.Errorf("after the clear: %v, want an abrupt close and no cleared", err)
		}
		if ev := s.RealtimeEvents(); len(ev) != 2 || ev[1].Type != "input_audio_buffer.clear" {
			t.Errorf("recorded %v, want the commit and the clear", ev)
		}
	})
	t.Run("ignore a client event", func(t *testing.T) {
		s := serve(t, WithRules(Rule{Match: Match{Endpoint: EndpointRealtime}, Fault: Fault{IgnoreClientEvent: "input_audio_buffer.clear"}}))
		c := dialRT(t, s, "gpt-realtime")
		c.send(map[string]any{"type": "input_audio_buffer.clear"})  // lost: no cleared
		c.send(map[string]any{"type": "input_audio_buffer.commit"}) // answered (an error: nothing to commit)
		if ev := c.next(); ev["type"] != "error" {
			t.Fatalf("event %v, want the commit's error and no cleared before it", ev)
		}
		if ev := s.RealtimeEvents(); len(ev) != 2 || ev[0].Type != "input_audio_buffer.clear" {
			t.Errorf("recorded %v, want the clear and the commit", ev)
		}
	})
	t.Run("drop mid response", func(t *testing.T) {
		s := serve(t, WithRules(Rule{Match: Match{Endpoint: EndpointRealtimeResponse}, Reply: Reply{Text: "one two three"}, Fault: Fault{DropAfterEvents: 5}}))
		c := dialRT(t, s, "gpt-realtime")
		c.send(map[string]any{"type": "response.create"})
		n := 0
		for {
			if _, err := c.read(); err != nil {
				break
			}
			n++
		}
		if n != 5 {
			t.Errorf("got %d events before the drop, want 5", n)
		}
	})
	t.Run("malformed delta", func(t *testing.T) {
		s := serve(t, WithRules(Rule{Match: Match{Endpoint: EndpointRealtimeResponse}, Fault: Fault{MalformedJSON: true}}))
		c := dialRT(t, s, "gpt-realtime")
		c.send(map[string]any{"type": "response.create"})
		bad := 0
		for {
			_ = c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, b, err := c.conn.ReadMessage()
			if err != nil {
				t.Fatal(err)
			}
			var ev map[string]any
			if json.Unmarshal(b, &ev) != nil {
				bad++
				continue
			}
			if ev["type"] == "response.done" {
				break
			}
		}
		if bad != 1 {
			t.Errorf("%d malformed events, want 1", bad)
		}
	})
	t.Run("response 500", func(t *testing.T) {
		s := serve(t, WithRules(Rule{Match: Match{Endpoint: EndpointRealtimeResponse}, Fault: Fault{Status: 500}}))
		c := dialRT(t, s, "gpt-realtime")
		c.send(map[string]any{"type": "response.create"})
		evs := c.until("response.done")
		if got := strings.Join(types(evs), ","); got != "response.created,error,response.done" {
			t.Errorf("events %s", got)
		}
		if evs[2]["response"].(map[string]any)["status"] != "failed" {
			t.Errorf("done %v", evs[2])
		}
	})
	t.Run("response timeout then cancel", func(t *testing.T) {
		s := serve(t, WithRules(Rule{Match: Match{Endpoint: EndpointRealtimeResponse}, Fault: Fault{Timeout: true}}))
		c := dialRT(t, s, "gpt-realtime")
		c.send(map[string]any{"type": "response.create"})
		c.until("response.created")
		_ = c.conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		if _, _, err := c.conn.ReadMessage(); err == nil {
			t.Fatal("stalled response sent an event")
		}
		// a read deadline breaks gorilla's conn for reading; use a new one
		c = dialRT(t, s, "gpt-realtime")
		c.send(map[string]any{"type": "response.create"})
		c.until("response.created")
		c.send(map[string]any{"type": "response.cancel"})
		evs := c.until("response.done")
		if evs[len(evs)-1]["response"].(map[string]any)["status"] != "cancelled" {
			t.Errorf("done %v", evs[len(evs)-1])
		}
	})
}

package control_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/banterbot/banter/sim/discord/control"
)

// restCallErr makes one REST call as the bot that may get no answer: it returns the status,
// or the transport's error when the connection ended without one. A hanging call is given up
// when ctx ends.
func restCallErr(ctx context.Context, f map[string]string, method, path, body string) (int, error) {
	req, _ := http.NewRequestWithContext(ctx, method, f["API base URL"]+"/api/v10"+path, bytes.NewReader([]byte(body)))
	req.Header.Set("Authorization", "Bot "+f["bot token"])
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// requestLog is GET /requests' REST part, with the fields these tests read.
type requestLog struct {
	REST []struct {
		Route      string `json:"route"`
		Status     int    `json:"status"`
		Fault      string `json:"fault"`
		ReceivedAt string `json:"received_at"`
		AnsweredAt string `json:"answered_at"`
	} `json:"rest"`
}

// TestControlRESTCuts: the faults that leave a REST call without any answer, set over HTTP:
// the connection cut before the request takes effect (no message), after it (the message
// exists), or the request held without effect until the client gives up. /requests names the
// fault, with the time received and no time answered; an answered call has both, RFC 3339
// with milliseconds.
func TestControlRESTCuts(t *testing.T) {
	f := standalone(t, control.Options{})
	ctl := f["control API"]
	messages := "/channels/" + f["text channel"] + "/messages"
	tests := []struct {
		fault   string
		created bool
	}{
		{"cut_before_effect", false},
		{"cut_after_effect", true},
		{"hang_before_effect", false},
	}
	botMessages := func() []struct{ Content string } {
		var list []struct{ Content string }
		call(t, "GET", ctl+"/messages?from=bot", nil, &list)
		return list
	}
	for _, tt := range tests {
		t.Run(tt.fault, func(t *testing.T) {
			before := len(botMessages())
			if st := call(t, "POST", ctl+"/faults/rest", map[string]any{"route": "POST /channels/{channel_id}/messages", "fault": tt.fault}, nil); st != http.StatusNoContent {
				t.Fatalf("inject: %d", st)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tt.fault == "hang_before_effect" {
				// Give up once the simulator holds the request: the answer never comes.
				ctx, cancel = context.WithTimeout(t.Context(), 300*time.Millisecond)
				defer cancel()
			}
			st, err := restCallErr(ctx, f, "POST", messages, `{"content":"`+tt.fault+`"}`)
			if err == nil {
				t.Fatalf("the faulted call was answered %d", st)
			}
			if tt.fault == "hang_before_effect" && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("a hung call ended with %v, want the client's own deadline", err)
			}
			var log requestLog
			// The log has the call once the simulator is done with it (for a hang: once it
			// has seen the client go).
			waitFor(t, tt.fault+" in /requests", func() bool {
				call(t, "GET", ctl+"/requests", nil, &log)
				n := len(log.REST)
				return n > 0 && log.REST[n-1].Fault == tt.fault
			})
			list := botMessages()
			if got := len(list) == before+1 && list[len(list)-1].Content == tt.fault; got != tt.created {
				t.Errorf("bot messages %+v: the faulted create exists = %v, want %v", list, got, tt.created)
			}
			last := log.REST[len(log.REST)-1]
			if last.Fault != tt.fault || last.Status != 0 || last.AnsweredAt != "" {
				t.Errorf("recorded %+v, want fault %s, status 0 and no answered_at", last, tt.fault)
			}
			if _, err := time.Parse("2006-01-02T15:04:05.000Z07:00", last.ReceivedAt); err != nil {
				t.Errorf("received_at %q: %v", last.ReceivedAt, err)
			}
		})
	}
	t.Run("answered", func(t *testing.T) {
		if st, err := restCallErr(t.Context(), f, "GET", "/users/@me", ""); err != nil || st != 200 {
			t.Fatalf("GET /users/@me: %d %v", st, err)
		}
		var log requestLog
		call(t, "GET", ctl+"/requests", nil, &log)
		last := log.REST[len(log.REST)-1]
		rcv, err1 := time.Parse("2006-01-02T15:04:05.000Z07:00", last.ReceivedAt)
		ans, err2 := time.Parse("2006-01-02T15:04:05.000Z07:00", last.AnsweredAt)
		if err := errors.Join(err1, err2); err != nil || ans.Before(rcv) || last.Fault != "" {
			t.Errorf("recorded %+v (%v): want received_at <= answered_at, both RFC 3339 with ms, no fault", last, err)
		}
	})
	for _, bad := range []map[string]any{
		{"fault": "cut_sometimes"},
		{"fault": "cut_after_effect", "status": 503},
		{"fault": "hang_before_effect", "after_commit": true},
	} {
		if st := call(t, "POST", ctl+"/faults/rest", bad, nil); st != http.StatusBadRequest {
			t.Errorf("%v: %d, want 400", bad, st)
		}
	}
}

package simtest_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
)

// TestWaits: the waits see what a client did through REST, in order.
func TestWaits(t *testing.T) {
	s := simtest.Serve(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second) // a failure guard
	defer cancel()
	g := s.CreateGuild("g")
	ch := s.CreateTextChannel(g, "general")
	post := func(content string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, "POST", s.APIBaseURL()+"/api/v10/channels/"+string(ch)+"/messages",
			bytes.NewReader([]byte(`{"content":"`+content+`"}`)))
		req.Header.Set("Authorization", "Bot "+s.Token())
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	done := make(chan []discordsim.Message, 1)
	go func() {
		ms, err := simtest.WaitMessages(ctx, s, 2, simtest.From(s.BotID()))
		if err != nil {
			t.Error(err)
		}
		done <- ms
	}()
	post("one")
	post("two")
	if ms := <-done; len(ms) != 2 || ms[0].Content != "one" || ms[1].Content != "two" {
		t.Errorf("WaitMessages: %+v", ms)
	}
	m, err := simtest.WaitMessage(ctx, s, simtest.InChannel(ch))
	if err != nil || m.Content != "one" {
		t.Errorf("WaitMessage scans from the first: %+v, %v", m, err)
	}
	if err := s.StartTyping(s.BotID(), ch); err != nil {
		t.Fatal(err)
	}
	if ev, err := simtest.WaitTyping(ctx, s, ch, s.BotID()); err != nil || ev.Channel != ch {
		t.Errorf("WaitTyping: %+v, %v", ev, err)
	}
	short, cancelShort := context.WithCancel(ctx)
	cancelShort()
	if err := simtest.WaitReady(short, s, s.BotID()); err == nil {
		t.Error("WaitReady with no session and a cancelled context returned nil")
	}
}

package discordsim

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/banterbot/banter/sim/discord/world"
)

// BenchmarkEncodeMessage is the baseline: rendering and JSON-encoding one
// MESSAGE_CREATE dispatch, the least any Post must do per session.
func BenchmarkEncodeMessage(b *testing.B) {
	s := New()
	g := s.CreateGuild("g")
	ch := s.CreateTextChannel(g, "c")
	m, err := s.Post(context.Background(), s.BotID(), ch, "hello there "+MentionUser(s.BotID()))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		var w wireMessage
		s.Read(func(v *world.View) { w = wireMessageOf(v, m, s.cdn, 0) })
		if _, err := encodeDispatch(1, "MESSAGE_CREATE", w); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPost measures a scripted Post (store, mentions, dispatch) with
// no session connected, and with one gateway session that drains its
// socket (the frame is also written to loopback).
func BenchmarkPost(b *testing.B) {
	for _, sessions := range []int{0, 1} {
		b.Run(map[int]string{0: "no-session", 1: "one-session"}[sessions], func(b *testing.B) {
			s := New(WithReplayLimit(64))
			if err := s.Start("127.0.0.1:0"); err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			g := s.CreateGuild("g")
			ch := s.CreateTextChannel(g, "c")
			alice := s.CreateUser("alice")
			_ = s.AddMember(g, alice)
			if sessions == 1 {
				ws, _, err := websocket.DefaultDialer.Dial(s.GatewayURL()+"/?v=10&encoding=json", nil)
				if err != nil {
					b.Fatal(err)
				}
				defer ws.Close()
				id, _ := json.Marshal(identifyPayload(s.Token(), allIntents, false))
				if err := ws.WriteMessage(websocket.TextMessage, id); err != nil {
					b.Fatal(err)
				}
				go func() { // drain until the socket closes
					for {
						if _, _, err := ws.ReadMessage(); err != nil {
							return
						}
					}
				}()
				if err := waitReady(context.Background(), s, s.BotID()); err != nil {
					b.Fatal(err)
				}
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Post(ctx, alice, ch, "hello there "+MentionUser(s.BotID())); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// memoryView is GET /api/memory as a script reads it.
type memoryView struct {
	Enabled bool `json:"enabled"`
	Members []struct {
		ID     string `json:"id"`
		Name   string `json:"name"`
		Paused bool   `json:"paused"`
		Facts  []struct {
			ID        int64  `json:"id"`
			Number    int    `json:"number"`
			Statement string `json:"statement"`
			CreatedAt string `json:"created_at"`
			Sources   []struct {
				ID        string `json:"id"`
				ChannelID string `json:"channel_id"`
				Content   string `json:"content"`
			} `json:"sources"`
		} `json:"facts"`
	} `json:"members"`
}

// memoryPlayground starts the playground on a seed that extracts every message at once
// (memory.batchMessages 1) and sets nothing else of memory: memory.enabled is the
// playground's own default.
func memoryPlayground(t *testing.T) (url, botID string) {
	t.Helper()
	seed := filepath.Join(t.TempDir(), "seed.yaml")
	if err := os.WriteFile(seed, []byte("memory:\n  batchMessages: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url = startPlayground(t, nil, "-config", seed)
	var info struct {
		BotID string `json:"bot_id"`
	}
	httpDo(t, "GET", url+"/api/info", nil, &info)
	return url, info.BotID
}

func (v memoryView) facts(name string) []string {
	var out []string
	for _, m := range v.Members {
		if m.Name == name {
			for _, f := range m.Facts {
				out = append(out, f.Statement)
			}
		}
	}
	return out
}

// TestPlaygroundMemory: in the playground (memory on by default, the demo brain as memoryLlm),
// alice says "I have a cat named Miso": the fact forms (a memory_extracted event on the page's
// stream) and GET /api/memory shows it with its source message; a later message's reply prompt
// carries it (and the demo brain's reply uses it); POST /api/memory/forget runs the bot's /memory forget as alice and the fact is
// gone; pause and resume show in the panel; forget-me forgets the rest.
func TestPlaygroundMemory(t *testing.T) {
	url, botID := memoryPlayground(t)
	events := sse(t, url+"/api/events")
	discord := sse(t, url+"/discord/events")
	var v memoryView
	if st := httpDo(t, "GET", url+"/api/memory", nil, &v); st != 200 || !v.Enabled || len(v.Members) != 3 || len(v.facts("alice")) != 0 {
		t.Fatalf("before: %d %+v", st, v)
	}

	var said struct{ ID string }
	httpDo(t, "POST", url+"/discord/messages", map[string]any{"as": "alice", "channel": "general", "content": "I have a cat named Miso"}, &said)
	attr := func(e map[string]any, k string) any { a, _ := e["attrs"].(map[string]any); return a[k] }
	events("the extraction of alice's message", func(e map[string]any) bool {
		ids, _ := attr(e, "message_ids").([]any)
		return e["event"] == "memory_extracted" && len(ids) == 1 && ids[0] == said.ID && attr(e, "facts") == 1.0
	})
	httpDo(t, "GET", url+"/api/memory", nil, &v)
	if got := v.facts("alice"); len(got) != 1 || got[0] != "alice has a cat named Miso" {
		t.Fatalf("alice's facts %q", got)
	}
	var fact = v.Members[0].Facts
	for _, m := range v.Members {
		if m.Name == "alice" {
			fact = m.Facts
		}
	}
	if src := fact[0].Sources; len(src) != 1 || src[0].ID != said.ID || src[0].Content != "I have a cat named Miso" || fact[0].CreatedAt == "" || fact[0].Number != 1 {
		t.Errorf("the fact's source and time: %+v", fact[0])
	}

	// A later message's prompt carries the fact.
	var asked struct{ ID string }
	httpDo(t, "POST", url+"/discord/messages", map[string]any{"as": "bob", "channel": "general",
		"content": fmt.Sprintf("<@%s> what is the name of alice's cat?", botID)}, &asked)
	reply := ""
	discord("the bot's reply to bob", func(e map[string]any) bool {
		m, _ := e["message"].(map[string]any)
		if e["type"] == "message" && m["from_bot"] == true && m["reply_to"] == asked.ID {
			reply, _ = m["content"].(string)
			return true
		}
		return false
	})
	if !strings.Contains(reply, "from what I remember: alice has a cat named Miso") {
		t.Errorf("the demo brain's reply %q does not use the fact", reply)
	}
	var reqs []struct {
		LastUserText string
	}
	httpDo(t, "GET", url+"/openai/_sim/requests", nil, &reqs)
	prompt := ""
	for _, r := range reqs {
		if strings.Contains(r.LastUserText, "Message to answer: msg "+asked.ID) {
			prompt = r.LastUserText
		}
	}
	if !strings.Contains(prompt, "alice has a cat named Miso") {
		t.Errorf("the reply prompt of bob's question does not carry alice's fact:\n%s", prompt)
	}

	// Forget it, as alice would with /memory forget.
	var res struct {
		Answer string `json:"answer"`
		Error  string `json:"error"`
	}
	if st := httpDo(t, "POST", url+"/api/memory/forget", map[string]any{"member": "alice", "fact_id": fact[0].ID}, &res); st != 200 || !strings.Contains(res.Answer, "Forgotten: fact 1") {
		t.Fatalf("forget: %d %+v", st, res)
	}
	events("the bot's own forget", func(e map[string]any) bool { return e["event"] == "memory_fact_forgotten" })
	httpDo(t, "GET", url+"/api/memory", nil, &v)
	if got := v.facts("alice"); len(got) != 0 {
		t.Errorf("after forget, alice's facts %q", got)
	}
	if st := httpDo(t, "POST", url+"/api/memory/forget", map[string]any{"member": "alice", "fact_id": fact[0].ID}, &res); st != 404 {
		t.Errorf("forgetting a fact no longer there: %d %+v", st, res)
	}

	// Pause and resume show in the panel; the bot answers each.
	for _, step := range []struct {
		action string
		paused bool
		answer string
	}{{"pause", true, "Paused"}, {"resume", false, "Resumed"}} {
		if st := httpDo(t, "POST", url+"/api/memory/"+step.action, map[string]any{"member": "bob"}, &res); st != 200 || !strings.HasPrefix(res.Answer, step.answer) {
			t.Fatalf("%s: %d %+v", step.action, st, res)
		}
		httpDo(t, "GET", url+"/api/memory", nil, &v)
		for _, m := range v.Members {
			if m.Name == "bob" && m.Paused != step.paused {
				t.Errorf("after %s, bob paused=%v", step.action, m.Paused)
			}
		}
	}

	// forget-me takes the rest of alice's facts.
	httpDo(t, "POST", url+"/discord/messages", map[string]any{"as": "alice", "channel": "general", "content": "I live in Lyon"}, &said)
	events("the extraction of alice's second fact", func(e map[string]any) bool {
		ids, _ := attr(e, "message_ids").([]any)
		return e["event"] == "memory_extracted" && len(ids) == 1 && ids[0] == said.ID
	})
	httpDo(t, "GET", url+"/api/memory", nil, &v)
	if got := v.facts("alice"); len(got) != 1 || got[0] != "alice lives in Lyon" {
		t.Fatalf("alice's facts %q", got)
	}
	if st := httpDo(t, "POST", url+"/api/memory/forget-me", map[string]any{"member": "alice"}, &res); st != 200 || !strings.Contains(res.Answer, "I forgot 1 fact about you") {
		t.Fatalf("forget-me: %d %+v", st, res)
	}
	httpDo(t, "GET", url+"/api/memory", nil, &v)
	if got := v.facts("alice"); len(got) != 0 {
		t.Errorf("after forget-me, alice's facts %q", got)
	}

	// Bad requests name what is wrong.
	for _, c := range []struct {
		path string
		body any
		want int
	}{
		{"/api/memory/explode", map[string]any{"member": "alice"}, 404},
		{"/api/memory/pause", map[string]any{"member": "nobody"}, 404},
		{"/api/memory/pause", map[string]any{}, 400},
		{"/api/memory/forget", map[string]any{"member": "alice"}, 400},
		{"/api/memory/pause", map[string]any{"member": "alice", "extra": 1}, 400},
	} {
		if st := httpDo(t, "POST", url+c.path, c.body, &res); st != c.want || res.Error == "" {
			t.Errorf("POST %s %v: %d %+v, want %d with an error", c.path, c.body, st, res, c.want)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/banterbot/banter/sim/conform"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
)

// conformanceErrors checks every request the simulators recorded (Discord
// REST, OpenAI HTTP, OpenAI Realtime client events) against the official
// specs (package conform) and returns one error per violation.
func conformanceErrors(t *testing.T, dsim *discordsim.Server, osim *openaisim.Server) (errs []error, checked int) {
	t.Helper()
	d, err := conform.Discord()
	if err != nil {
		t.Fatal(err)
	}
	o, err := conform.OpenAI()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range dsim.RESTLog() {
		checked++
		if err := d.Request(r.Method, r.Path, r.Body); err != nil {
			errs = append(errs, err)
		}
	}
	if osim == nil {
		return errs, checked
	}
	for _, r := range osim.Requests() {
		if r.Method == "WS" || r.Endpoint == openaisim.EndpointRealtime {
			continue // a WebSocket upgrade; its client events are checked below
		}
		var body []byte
		if r.Endpoint != openaisim.EndpointTranscriptions {
			body = r.Body
		}
		checked++
		if err := o.Request(r.Method, r.Path, body); err != nil {
			errs = append(errs, err)
		}
	}
	for _, e := range osim.RealtimeEvents() {
		checked++
		if err := o.RealtimeClientEvent(e.Raw); err != nil {
			errs = append(errs, err)
		}
	}
	return errs, checked
}

// assertConforms fails the test for every request the bot sent that the
// real APIs' specs do not allow.
func assertConforms(t *testing.T, dsim *discordsim.Server, osim *openaisim.Server) {
	t.Helper()
	errs, checked := conformanceErrors(t, dsim, osim)
	for _, err := range errs {
		t.Errorf("request off the spec: %v", err)
	}
	if checked == 0 {
		t.Error("no requests recorded to check")
	}
	t.Logf("conformance: %d requests and events checked", checked)
}

// TestConformanceCatchesViolations: the check itself finds a Discord body
// and an OpenAI body that the specs refuse but the simulators let through.
func TestConformanceCatchesViolations(t *testing.T) {
	dsim := simtest.Serve(t)
	osim := openaitest.Serve(t)
	g := dsim.CreateGuild("g")
	ch := dsim.CreateTextChannel(g, "general")
	post := func(url, auth, body string) {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, bytes.NewReader([]byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", auth)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	// Conforming requests first: they must not be reported.
	post(dsim.APIBaseURL()+"/api/v10/channels/"+string(ch)+"/messages", "Bot "+dsim.Token(), `{"content":"fine"}`)
	post(osim.BaseURL()+"/chat/completions", "Bearer sk-test", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`)
	if errs, _ := conformanceErrors(t, dsim, osim); len(errs) != 0 {
		t.Fatalf("conforming requests reported: %v", errs)
	}
	// An embed title over Discord's 256-character limit; a chat message
	// whose content is a number.
	post(dsim.APIBaseURL()+"/api/v10/channels/"+string(ch)+"/messages", "Bot "+dsim.Token(),
		`{"content":"x","embeds":[{"title":"`+strings.Repeat("t", 300)+`"}]}`)
	post(osim.BaseURL()+"/chat/completions", "Bearer sk-test", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":7}]}`)
	errs, _ := conformanceErrors(t, dsim, osim)
	var discord, openai bool
	for _, err := range errs {
		discord = discord || strings.Contains(err.Error(), "discord") && strings.Contains(err.Error(), "/messages")
		openai = openai || strings.Contains(err.Error(), "openai") && strings.Contains(err.Error(), "/chat/completions")
	}
	if len(errs) != 2 || !discord || !openai {
		t.Errorf("want one Discord and one OpenAI violation, got %v", errs)
	}
}

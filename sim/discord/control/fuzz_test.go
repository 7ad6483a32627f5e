package control_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/control"
)

// fuzzWorld is a fresh simulator (not listening: the control API needs only
// its world) with a guild, a text channel, a voice channel, a member alice and
// one message of hers, behind a Controller.
func fuzzWorld(t *testing.T) (http.Handler, func()) {
	t.Helper()
	sim := discordsim.New()
	g := sim.CreateGuild("fuzz")
	general := sim.CreateTextChannel(g, "general")
	sim.CreateVoiceChannel(g, "lounge")
	alice := sim.CreateUser("alice")
	if err := sim.AddMember(g, alice); err != nil {
		t.Fatal(err)
	}
	if _, err := sim.Post(context.Background(), alice, general, "hello"); err != nil {
		t.Fatal(err)
	}
	ctl := control.New(sim, g)
	ctl.Name("alice", alice)
	return ctl.Handler(), func() { ctl.Close(); _ = sim.Close() }
}

// FuzzControlAPI sends one request of any method, path, query and body to
// the control API's handler. The API is for local tools, but what it reads
// comes from outside the process: every request gets an answer (never a
// panic), a status that is an HTTP status, and an error body that says what
// is wrong.
func FuzzControlAPI(f *testing.F) {
	seeds := []struct {
		method, target, body string
	}{
		{"GET", "/state", ""},
		{"GET", "/members", ""},
		{"POST", "/members", `{"name":"bob"}`},
		{"POST", "/members", `{"name":"botty","bot":true}`},
		{"POST", "/members", `{"name":"bot"}`},
		{"POST", "/members", `{"name":"alice"}`},
		{"POST", "/members", `{"nam":"typo"}`},
		{"GET", "/roles", ""},
		{"POST", "/roles", `{"name":"mods","permissions":"8"}`},
		{"POST", "/roles", `{"name":"","permissions":"-1"}`},
		{"POST", "/roles/bot", ""},
		{"PATCH", "/roles/mods", `{"name":"moderators"}`},
		{"PATCH", "/roles/@everyone", `{"permissions":"18446744073709551616"}`},
		{"DELETE", "/roles/mods", ""},
		{"PUT", "/members/alice/roles/mods", ""},
		{"DELETE", "/members/alice/roles/%40everyone", ""},
		{"PATCH", "/members/alice", `{"nick":"ali"}`},
		{"PATCH", "/members/alice", `{"nick":null}`},
		{"DELETE", "/members/alice", ""},
		{"PUT", "/members/alice", ""},
		{"DELETE", "/members/bot", ""},
		{"PUT", "/channels/general/permissions/alice", `{"type":"member","deny":"2048"}`},
		{"PUT", "/channels/general/permissions/mods", `{"type":"role","allow":"x"}`},
		{"POST", "/guild/availability", `{"available":false}`},
		{"POST", "/guild/availability", `{"available":"no"}`},
		{"PATCH", "/guild", `{"afk_channel":"Voice","afk_timeout":60}`},
		{"PATCH", "/guild", `{"afk_channel":null,"afk_timeout":7}`},
		{"POST", "/typing", `{"as":"alice","channel":"general"}`},
		{"POST", "/commands/ping", `{"as":"alice","channel":"general","options":[{"name":"what","type":3,"value":"x"}]}`},
		{"POST", "/commands/ping", `{"as":"alice","channel":"general","options":[{"options":[{"options":[]}]}]}`},
		{"PUT", "/commands/ping/permissions", `{"permissions":[{"type":"role","target":"@everyone","permission":false}]}`},
		{"GET", "/interactions/1?wait=0", ""},
		{"POST", "/voice/move", `{"as":"bot","channel":""}`},
		{"GET", "/channels", ""},
		{"POST", "/channels", `{"name":"random"}`},
		{"POST", "/channels", `{"name":"stage","type":"voice"}`},
		{"POST", "/channels", `{"name":"x","type":"forum"}`},
		{"GET", "/messages", ""},
		{"GET", "/messages?channel=general&from=alice&after=0", ""},
		{"GET", "/messages?channel=%23general&from=bot&after=18446744073709551616", ""},
		{"GET", "/messages?channel=nope", ""},
		{"POST", "/messages", `{"as":"alice","channel":"general","content":"hi <@1>"}`},
		{"POST", "/messages", `{"as":"alice","channel":"#general","content":"re","reply_to":"1"}`},
		{"POST", "/messages", `{"as":"mallory","channel":"general","content":"x"}`},
		{"POST", "/messages", `{"as":"alice","channel":"lounge","content":""}`},
		{"PATCH", "/messages/1", `{"content":"edited"}`},
		{"DELETE", "/messages/1", ""},
		{"DELETE", "/messages/", ""},
		{"POST", "/voice/join", `{"as":"alice","channel":"lounge"}`},
		{"POST", "/voice/leave", `{"as":"alice"}`},
		{"POST", "/voice/play?as=alice", "RIFF\x24\x00\x00\x00WAVEfmt "},
		{"POST", "/voice/play?as=alice&music=2&seed=3", ""},
		{"POST", "/voice/play?as=alice&music=NaN", ""},
		{"POST", "/faults/gateway", `{"fault":"invalid_session","resumable":true}`},
		{"POST", "/faults/gateway", `{"fault":"withhold_acks","n":-5}`},
		{"POST", "/faults/gateway", `{"fault":"meteor"}`},
		{"POST", "/faults/rest", `{"route":"POST /channels/{channel_id}/messages","n":2,"status":500}`},
		{"POST", "/faults/rest", `{"status":429,"retry_after_ms":-1,"global":true,"n":1000000000}`},
		{"POST", "/faults/rest", `{"status":200}`},
		{"GET", "/requests", ""},
		{"GET", "/nowhere", ""},
		{"PUT", "/state", "{}"},
		{"POST", "/messages", `{"as":"alice","channel":"general","content":"a"}{"trailing":1}`},
		{"POST", "/messages", `[1,2,3]`},
		{"POST", "/messages", "\xff\xfe"},
	}
	for _, s := range seeds {
		f.Add(s.method, s.target, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, method, target string, body []byte) {
		req, err := http.NewRequest(method, "http://control.test"+target, bytes.NewReader(body))
		if err != nil || req.URL.Path == "" || req.URL.Path[0] != '/' {
			return // not a request a client can send
		}
		h, stop := fuzzWorld(t)
		defer stop()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		code := rec.Code
		if code < 200 || code > 599 {
			t.Fatalf("%s %s: status %d", method, target, code)
		}
		out := rec.Body.Bytes()
		switch {
		case code >= 300 && code < 400:
			// net/http's mux redirects an unclean path ("/a/../state") to the clean one.
			if rec.Header().Get("Location") == "" {
				t.Fatalf("%s %s: %d without a Location", method, target, code)
			}
			return
		case code == http.StatusNoContent:
			return
		}
		if !json.Valid(out) {
			t.Fatalf("%s %s: %d with a body that is not JSON: %q", method, target, code, out)
		}
		if code >= 400 {
			var e struct {
				Error string `json:"error"`
			}
			if json.Unmarshal(out, &e) != nil || strings.TrimSpace(e.Error) == "" {
				t.Fatalf("%s %s: %d without an error message: %s", method, target, code, out)
			}
		}
	})
}

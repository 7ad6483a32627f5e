package discordsim

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/banterbot/banter/sim/discord/world"
)

var reSnowflake = regexp.MustCompile(`^\d{17,19}$`)

func TestRESTAuthAndVersions(t *testing.T) {
	w := newWorld(t)
	tok := w.sim.Token()
	tests := []struct {
		name, path, auth string
		want             int
	}{
		{"v9 Bot prefix", "/api/v9/users/@me", "Bot " + tok, 200},
		{"v10 Bot prefix", "/api/v10/users/@me", "Bot " + tok, 200},
		{"raw token", "/api/v10/users/@me", tok, 200},
		{"no auth", "/api/v10/users/@me", "", 401},
		{"wrong token", "/api/v10/users/@me", "Bot nope", 401},
		{"unknown version", "/api/v8/users/@me", "Bot " + tok, 404},
		{"gateway needs no auth", "/api/v9/gateway", "", 200},
		{"unknown route", "/api/v10/nothing/here", "Bot " + tok, 404},
	}
	var e wireError
	if resp := rest(t, w.sim, "PUT", "/api/v10/channels/1/messages", "Bot "+tok, nil, &e); resp.StatusCode != 405 || e.Message != "405: Method Not Allowed" {
		t.Errorf("wrong method: %d %+v", resp.StatusCode, e)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var body map[string]any
			resp := rest(t, w.sim, "GET", tc.path, tc.auth, nil, &body)
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d (%v)", resp.StatusCode, tc.want, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if tc.want == 401 && body["message"] != "401: Unauthorized" {
				t.Errorf("401 body %v", body)
			}
		})
	}
}

func TestRESTGatewayAndLookups(t *testing.T) {
	w := newWorld(t)
	auth := "Bot " + w.sim.Token()
	var gw struct {
		URL   string `json:"url"`
		Limit struct {
			MaxConcurrency int `json:"max_concurrency"`
		} `json:"session_start_limit"`
	}
	rest(t, w.sim, "GET", "/api/v10/gateway/bot", auth, nil, &gw)
	if gw.URL != w.sim.GatewayURL() || gw.Limit.MaxConcurrency != 1 {
		t.Errorf("gateway/bot = %+v", gw)
	}
	var me wireSelfUser
	rest(t, w.sim, "GET", "/api/v10/users/@me", auth, nil, &me)
	if me.ID != w.sim.BotID() || !me.Bot || !reSnowflake.MatchString(string(me.ID)) {
		t.Errorf("users/@me = %+v", me)
	}
	var g wireGuild
	rest(t, w.sim, "GET", "/api/v10/guilds/"+string(w.guild), auth, nil, &g)
	if g.ID != w.guild || g.Name != "Sim Guild" || g.MemberCount != 2 {
		t.Errorf("guild = %+v", g)
	}
	var chans []wireChannel
	rest(t, w.sim, "GET", "/api/v10/guilds/"+string(w.guild)+"/channels", auth, nil, &chans)
	if len(chans) != 2 || chans[0].Type != ChannelText || chans[1].Type != ChannelVoice {
		t.Errorf("channels = %+v", chans)
	}
	var m wireMember
	rest(t, w.sim, "GET", "/api/v10/guilds/"+string(w.guild)+"/members/"+string(w.alice), auth, nil, &m)
	if m.User == nil || m.User.ID != w.alice {
		t.Errorf("member = %+v", m)
	}
	var c wireChannel
	rest(t, w.sim, "GET", "/api/v10/channels/"+string(w.text), auth, nil, &c)
	if c.ID != w.text || c.GuildID != w.guild || c.Name != "general" {
		t.Errorf("channel = %+v", c)
	}
	notFound := []struct{ path, msg string }{
		{"/api/v10/channels/1", "Unknown Channel"},
		{"/api/v10/guilds/1", "Unknown Guild"},
		{"/api/v10/guilds/" + string(w.guild) + "/members/1", "Unknown Member"},
		{"/api/v10/users/1", "Unknown User"},
		{"/api/v10/channels/" + string(w.text) + "/messages/1", "Unknown Message"},
	}
	for _, nf := range notFound {
		var e wireError
		if resp := rest(t, w.sim, "GET", nf.path, auth, nil, &e); resp.StatusCode != 404 || e.Message != nf.msg || e.Code == 0 {
			t.Errorf("GET %s: %d %+v, want 404 %s", nf.path, resp.StatusCode, e, nf.msg)
		}
	}
}

func TestRESTMessagesCRUD(t *testing.T) {
	w := newWorld(t)
	ctx := testCtx(t)
	auth := "Bot " + w.sim.Token()
	base := "/api/v9/channels/" + string(w.text) + "/messages"
	orig, err := w.sim.Post(ctx, w.alice, w.text, "original")
	if err != nil {
		t.Fatal(err)
	}
	// A reply shaped as discordgo sends it (nulls included).
	var m wireMessage
	resp := rest(t, w.sim, "POST", base, auth, map[string]any{
		"content": "hi " + MentionUser(w.alice), "embeds": nil, "tts": false, "components": nil, "sticker_ids": nil,
		"allowed_mentions":  map[string]any{"parse": []string{}, "replied_user": true},
		"message_reference": map[string]any{"message_id": orig.ID, "channel_id": w.text, "guild_id": w.guild, "fail_if_not_exists": false},
	}, &m)
	if resp.StatusCode != 200 || !reSnowflake.MatchString(string(m.ID)) || m.Type != 19 || m.Author.ID != w.sim.BotID() {
		t.Fatalf("create: %d %+v", resp.StatusCode, m)
	}
	if m.ReferencedMessage == nil || m.ReferencedMessage.Content != "original" || m.MessageReference.MessageID != orig.ID {
		t.Errorf("reference not populated: %+v", m.MessageReference)
	}
	// parse:[] drops the content mention, replied_user adds alice back.
	if len(m.Mentions) != 1 || m.Mentions[0].ID != w.alice {
		t.Errorf("mentions = %+v", m.Mentions)
	}
	if _, err := time.Parse(time.RFC3339, m.Timestamp); err != nil {
		t.Errorf("timestamp %q: %v", m.Timestamp, err)
	}
	sent, err := waitMessage(ctx, w.sim, from(w.sim.BotID()))
	if err != nil || sent.ID != m.ID || sent.ReplyTo() != orig.ID || sent.AllowedMentions == nil || !sent.AllowedMentions.RepliedUser {
		t.Fatalf("WaitMessage = %+v, %v", sent, err)
	}

	var got wireMessage
	rest(t, w.sim, "GET", base+"/"+string(m.ID), auth, nil, &got)
	if got.ID != m.ID || got.Content != m.Content {
		t.Errorf("get = %+v", got)
	}
	var edited wireMessage
	rest(t, w.sim, "PATCH", base+"/"+string(m.ID), auth, map[string]any{"content": "edited"}, &edited)
	if edited.Content != "edited" || edited.EditedTimestamp == nil {
		t.Errorf("edit = %+v", edited)
	}
	var e wireError
	if resp := rest(t, w.sim, "PATCH", base+"/"+string(orig.ID), auth, map[string]any{"content": "x"}, &e); resp.StatusCode != 403 || e.Code != 50005 {
		t.Errorf("editing another's message: %d %+v", resp.StatusCode, e)
	}
	if resp := rest(t, w.sim, "DELETE", base+"/"+string(m.ID), auth, nil, nil); resp.StatusCode != 204 {
		t.Fatalf("delete: %d", resp.StatusCode)
	}
	e = wireError{}
	if resp := rest(t, w.sim, "GET", base+"/"+string(m.ID), auth, nil, &e); resp.StatusCode != 404 || e.Code != 10008 || e.Message != "Unknown Message" {
		t.Errorf("deleted: %d %+v", resp.StatusCode, e)
	}
	if resp := rest(t, w.sim, "POST", base, auth, map[string]any{"content": ""}, &e); resp.StatusCode != 400 {
		t.Errorf("empty message: %d", resp.StatusCode)
	}
	if resp := rest(t, w.sim, "POST", "/api/v9/channels/"+string(w.text)+"/typing", auth, nil, nil); resp.StatusCode != 204 {
		t.Errorf("typing: %d", resp.StatusCode)
	}
	if ty, err := waitTyping(ctx, w.sim, w.text, w.sim.BotID()); err != nil || ty.Channel != w.text {
		t.Errorf("typing event %+v %v", ty, err)
	}
}

func TestAllowedMentions(t *testing.T) {
	w := newWorld(t)
	ctx := testCtx(t)
	bob := w.sim.CreateUser("bob")
	_ = w.sim.AddMember(w.guild, bob)
	role, _ := w.sim.CreateRole(w.guild, "mods")
	orig, _ := w.sim.Post(ctx, bob, w.text, "question")
	content := fmt.Sprintf("%s %s %s @everyone", MentionUser(w.alice), MentionUser(bob), MentionRole(role))
	tests := []struct {
		name         string
		allowed      any // nil: field absent
		reply        bool
		wantUsers    []UserID
		wantRoles    int
		wantEveryone bool
	}{
		{"absent parses all", nil, false, []UserID{w.alice, bob}, 1, true},
		{"parse none", map[string]any{"parse": []string{}}, false, nil, 0, false},
		{"users only", map[string]any{"parse": []string{"users"}}, false, []UserID{w.alice, bob}, 0, false},
		{"listed user", map[string]any{"parse": []string{}, "users": []UserID{bob}}, false, []UserID{bob}, 0, false},
		{"roles and everyone", map[string]any{"parse": []string{"roles", "everyone"}}, false, nil, 1, true},
		{"reply pings by default", nil, true, []UserID{w.alice, bob}, 1, true},
		{"reply without replied_user", map[string]any{"parse": []string{}}, true, nil, 0, false},
		{"reply with replied_user", map[string]any{"parse": []string{}, "replied_user": true}, true, []UserID{bob}, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := map[string]any{"content": content}
			if tc.allowed != nil {
				body["allowed_mentions"] = tc.allowed
			}
			if tc.reply {
				body["message_reference"] = map[string]any{"message_id": orig.ID}
			}
			var m wireMessage
			rest(t, w.sim, "POST", "/api/v10/channels/"+string(w.text)+"/messages", "Bot "+w.sim.Token(), body, &m)
			var users []UserID
			for _, u := range m.Mentions {
				users = append(users, u.ID)
			}
			slices.Sort(users)
			want := slices.Clone(tc.wantUsers)
			slices.Sort(want)
			if !slices.Equal(users, want) || len(m.MentionRoles) != tc.wantRoles || m.MentionEveryone != tc.wantEveryone {
				t.Errorf("mentions %v roles %v everyone %v; want %v %d %v", users, m.MentionRoles, m.MentionEveryone, want, tc.wantRoles, tc.wantEveryone)
			}
		})
	}
}

func TestMessagePagination(t *testing.T) {
	w := newWorld(t)
	ctx := testCtx(t)
	var ids []MessageID // oldest first
	for i := range 10 {
		m, err := w.sim.Post(ctx, w.alice, w.text, strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	rev := func(idx ...int) []MessageID {
		var out []MessageID
		for _, i := range idx {
			out = append(out, ids[i])
		}
		return out
	}
	tests := []struct {
		query string
		want  []MessageID // newest first, as Discord
	}{
		{"limit=3", rev(9, 8, 7)},
		{"", rev(9, 8, 7, 6, 5, 4, 3, 2, 1, 0)},
		{"before=" + string(ids[5]) + "&limit=2", rev(4, 3)},
		{"before=" + string(ids[1]), rev(0)},
		{"after=" + string(ids[5]) + "&limit=2", rev(7, 6)},
		{"after=" + string(ids[8]), rev(9)},
		{"around=" + string(ids[5]) + "&limit=3", rev(6, 5, 4)},
		{"around=" + string(ids[0]) + "&limit=4", rev(3, 2, 1, 0)},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			var got []wireMessage
			resp := rest(t, w.sim, "GET", "/api/v9/channels/"+string(w.text)+"/messages?"+tc.query, "Bot "+w.sim.Token(), nil, &got)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			var gotIDs []MessageID
			for _, m := range got {
				gotIDs = append(gotIDs, m.ID)
			}
			if !slices.Equal(gotIDs, tc.want) {
				t.Fatalf("got %v, want %v", gotIDs, tc.want)
			}
		})
	}
	for _, bad := range []string{"limit=0", "limit=101", "before=abc"} {
		if resp := rest(t, w.sim, "GET", "/api/v9/channels/"+string(w.text)+"/messages?"+bad, "Bot "+w.sim.Token(), nil, nil); resp.StatusCode != 400 {
			t.Errorf("%s: status %d, want 400", bad, resp.StatusCode)
		}
	}
}

func TestThreads(t *testing.T) {
	w := newWorld(t)
	ctx := testCtx(t)
	auth := "Bot " + w.sim.Token()
	m, _ := w.sim.Post(ctx, w.alice, w.text, "start here")
	var th wireChannel
	resp := rest(t, w.sim, "POST", "/api/v10/channels/"+string(w.text)+"/messages/"+string(m.ID)+"/threads", auth, map[string]any{"name": "chat"}, &th)
	if resp.StatusCode != 201 || th.Type != ChannelPublicThread || th.ParentID == nil || *th.ParentID != w.text || th.ThreadMetadata == nil {
		t.Fatalf("thread from message: %d %+v", resp.StatusCode, th)
	}
	scripted, err := w.sim.CreateThread(w.text, w.alice, "side")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.sim.Post(ctx, w.alice, scripted, "in thread"); err != nil {
		t.Fatal(err)
	}
	var msgs []wireMessage
	rest(t, w.sim, "GET", "/api/v10/channels/"+string(scripted)+"/messages", auth, nil, &msgs)
	if len(msgs) != 1 || msgs[0].ChannelID != scripted {
		t.Fatalf("thread messages %+v", msgs)
	}
	var active struct{ Threads []wireChannel }
	rest(t, w.sim, "GET", "/api/v10/guilds/"+string(w.guild)+"/threads/active", auth, nil, &active)
	if len(active.Threads) != 2 {
		t.Fatalf("active threads %+v", active.Threads)
	}
}

func TestRateLimits(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	w := newWorld(t, WithRateLimitClock(clock.now), WithRouteLimit(RouteMessageCreate, 2, 5*time.Second), WithGlobalLimit(5, time.Second))
	auth := "Bot " + w.sim.Token()
	post := func(ch ChannelID) (*http.Response, map[string]any) {
		var body map[string]any
		resp := rest(t, w.sim, "POST", "/api/v10/channels/"+string(ch)+"/messages", auth, map[string]any{"content": "x"}, &body)
		return resp, body
	}
	t.Run("route bucket", func(t *testing.T) {
		for i, wantRemaining := range []string{"1", "0"} {
			resp, _ := post(w.text)
			h := resp.Header
			if resp.StatusCode != 200 || h.Get("X-RateLimit-Limit") != "2" || h.Get("X-RateLimit-Remaining") != wantRemaining || h.Get("X-RateLimit-Reset-After") != "5.000" || h.Get("X-RateLimit-Bucket") == "" || h.Get("X-RateLimit-Reset") == "" {
				t.Fatalf("request %d: %d %v", i, resp.StatusCode, h)
			}
		}
		resp, body := post(w.text)
		h := resp.Header
		if resp.StatusCode != 429 || body["retry_after"] != 5.0 || body["global"] != false || h.Get("Retry-After") != "5" || h.Get("X-RateLimit-Scope") != "user" || h.Get("X-RateLimit-Global") != "" {
			t.Fatalf("429: %d %v %v", resp.StatusCode, body, h)
		}
		// Another channel is another bucket (major parameter).
		other := w.sim.CreateTextChannel(w.guild, "other")
		if resp, _ := post(other); resp.StatusCode != 200 {
			t.Fatalf("other channel: %d", resp.StatusCode)
		}
		clock.advance(5 * time.Second)
		if resp, _ := post(w.text); resp.StatusCode != 200 {
			t.Fatalf("after reset: %d", resp.StatusCode)
		}
	})
	t.Run("global", func(t *testing.T) {
		clock.advance(5 * time.Second)
		n := 0
		var last *http.Response
		var body map[string]any
		for n = 0; n < 10; n++ {
			last, body = post(w.sim.CreateTextChannel(w.guild, "g"+strconv.Itoa(n)))
			if last.StatusCode != 200 {
				break
			}
		}
		if n != 5 || last.StatusCode != 429 || body["global"] != true || last.Header.Get("X-RateLimit-Global") != "true" || last.Header.Get("X-RateLimit-Scope") != "global" {
			t.Fatalf("after %d: %d %v %v", n, last.StatusCode, body, last.Header)
		}
	})
	t.Run("injected", func(t *testing.T) {
		clock.advance(5 * time.Second)
		w.sim.RateLimitNext(RouteMessageCreate, 1, 250*time.Millisecond, false)
		w.sim.RateLimitNext(RouteAny, 1, time.Second, true)
		w.sim.FailNext(RouteMessageCreate, 1, 502)
		want := []int{429, 502, 429, 200} // route faults first, then RouteAny
		for i, code := range want {
			resp, body := post(w.sim.CreateTextChannel(w.guild, "i"+strconv.Itoa(i)))
			if resp.StatusCode != code {
				t.Fatalf("request %d: %d %v, want %d", i, resp.StatusCode, body, code)
			}
			if code == 429 && i == 0 && (body["retry_after"] != 0.25 || body["global"] != false) {
				t.Fatalf("injected 429 body %v", body)
			}
			if code == 429 && i == 2 && (body["global"] != true || resp.Header.Get("X-RateLimit-Global") != "true") {
				t.Fatalf("injected global 429 %v %v", body, resp.Header)
			}
		}
	})
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex // guards following
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestWaitMessages(t *testing.T) {
	w := newWorld(t)
	ctx := testCtx(t)
	auth := "Bot " + w.sim.Token()
	done := make(chan []Message, 1)
	go func() {
		ms, err := waitMessages(ctx, w.sim, 2, from(w.sim.BotID()))
		if err != nil {
			t.Error(err)
		}
		done <- ms
	}()
	if _, err := w.sim.Post(ctx, w.alice, w.text, "scripted posts are not client messages"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"first", "second", "third"} {
		rest(t, w.sim, "POST", "/api/v10/channels/"+string(w.text)+"/messages", auth, map[string]any{"content": c}, nil)
	}
	ms := <-done
	if len(ms) != 2 || ms[0].Content != "first" || ms[1].Content != "second" {
		t.Fatalf("WaitMessages = %+v", ms)
	}
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, err := waitMessages(short, w.sim, 4, from(w.sim.BotID())); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want a deadline error, got %v", err)
	}
}

func TestRESTMoreRoutes(t *testing.T) {
	w := newWorld(t)
	bot := "Bot " + w.sim.Token()
	g := "/api/v10/guilds/" + string(w.guild)
	app := "/api/v10/applications/" + string(w.sim.ApplicationID())
	stranger := w.sim.CreateUser("stranger")
	strangerAuth := "Bot " + w.sim.UserToken(stranger)

	var roles []wireRole
	rest(t, w.sim, "GET", g+"/roles", bot, nil, &roles)
	if len(roles) != 1 || roles[0].Name != "@everyone" {
		t.Errorf("roles %+v", roles)
	}
	var members []wireMember
	rest(t, w.sim, "GET", g+"/members?limit=1", bot, nil, &members)
	if len(members) != 1 || members[0].User.ID != w.sim.BotID() {
		t.Errorf("members limit=1 %+v", members)
	}
	rest(t, w.sim, "GET", g+"/members?limit=10&after="+string(w.sim.BotID()), bot, nil, &members)
	if len(members) != 1 || members[0].User.ID != w.alice {
		t.Errorf("members after the bot %+v", members)
	}
	var appInfo struct {
		ID  UserID   `json:"id"`
		Bot wireUser `json:"bot"`
	}
	rest(t, w.sim, "GET", "/api/v10/applications/@me", bot, nil, &appInfo)
	if appInfo.ID != w.sim.BotID() || appInfo.Bot.ID != w.sim.BotID() {
		t.Errorf("applications/@me %+v", appInfo)
	}

	forbidden := []struct{ method, path, auth string }{
		{"GET", g, strangerAuth},
		{"GET", "/api/v10/channels/" + string(w.text) + "/messages", strangerAuth},
		{"POST", "/api/v10/channels/" + string(w.text) + "/typing", strangerAuth},
		{"GET", app + "/commands", strangerAuth},
	}
	for _, f := range forbidden {
		var e wireError
		if resp := rest(t, w.sim, f.method, f.path, f.auth, nil, &e); resp.StatusCode != 403 || e.Code != world.CodeMissingAccess {
			t.Errorf("%s %s as a non-member: %d %+v", f.method, f.path, resp.StatusCode, e)
		}
	}

	var cmd wireCommand
	if resp := rest(t, w.sim, "POST", app+"/guilds/"+string(w.guild)+"/commands", bot, map[string]any{"name": "ping", "description": "Ping!"}, &cmd); resp.StatusCode != 201 {
		t.Fatalf("create command: %d", resp.StatusCode)
	}
	if resp := rest(t, w.sim, "POST", app+"/guilds/"+string(w.guild)+"/commands", bot, map[string]any{"name": "ping", "description": "Pong?"}, &cmd); resp.StatusCode != 200 || cmd.Description != "Pong?" {
		t.Fatalf("upsert command: %d %+v", resp.StatusCode, cmd)
	}
	var bad wireError
	if resp := rest(t, w.sim, "POST", app+"/commands", bot, map[string]any{"name": "", "description": "x"}, &bad); resp.StatusCode != 400 || bad.Code != world.CodeInvalidBody {
		t.Errorf("invalid command: %d %+v", resp.StatusCode, bad)
	}
	var one wireCommand
	rest(t, w.sim, "GET", app+"/guilds/"+string(w.guild)+"/commands/"+string(cmd.ID), bot, nil, &one)
	if one.ID != cmd.ID || one.Name != "ping" {
		t.Errorf("get command %+v", one)
	}

	// Interaction routes need no Authorization, as on Discord.
	it, err := w.sim.InvokeCommand(w.alice, w.text, "ping")
	if err != nil {
		t.Fatal(err)
	}
	cb := "/api/v10/interactions/" + string(it.ID) + "/"
	var e wireError
	if resp := rest(t, w.sim, "POST", cb+"wrong-token/callback", "", map[string]any{"type": 4, "data": map[string]any{"content": "x"}}, &e); resp.StatusCode != 404 || e.Code != world.CodeUnknownInteract {
		t.Errorf("wrong token: %d %+v", resp.StatusCode, e)
	}
	var withResp struct {
		Resource struct {
			Type    int         `json:"type"`
			Message wireMessage `json:"message"`
		} `json:"resource"`
	}
	resp := rest(t, w.sim, "POST", cb+it.Token+"/callback?with_response=true", "", map[string]any{"type": 4, "data": map[string]any{"content": "pong"}}, &withResp)
	if resp.StatusCode != 200 || withResp.Resource.Message.Content != "pong" || withResp.Resource.Message.Interaction == nil {
		t.Fatalf("callback with_response: %d %+v", resp.StatusCode, withResp)
	}
	hook := "/api/v10/webhooks/" + string(w.sim.ApplicationID()) + "/" + it.Token
	var fu wireMessage
	rest(t, w.sim, "POST", hook, "", map[string]any{"content": "follow-up"}, &fu)
	if fu.Content != "follow-up" || fu.WebhookID != w.sim.BotID() {
		t.Fatalf("follow-up %+v", fu)
	}
	if resp := rest(t, w.sim, "DELETE", hook+"/messages/"+string(fu.ID), "", nil, nil); resp.StatusCode != 204 {
		t.Fatalf("delete follow-up: %d", resp.StatusCode)
	}
	if _, ok := w.sim.Message(fu.ID); ok {
		t.Error("follow-up still there")
	}
	if resp := rest(t, w.sim, "DELETE", app+"/guilds/"+string(w.guild)+"/commands/"+string(cmd.ID), bot, nil, nil); resp.StatusCode != 204 {
		t.Fatalf("delete command: %d", resp.StatusCode)
	}
	if resp := rest(t, w.sim, "GET", app+"/guilds/"+string(w.guild)+"/commands/"+string(cmd.ID), bot, nil, &e); resp.StatusCode != 404 || e.Code != world.CodeUnknownCommand {
		t.Errorf("deleted command: %d %+v", resp.StatusCode, e)
	}
	if _, err := w.sim.InvokeCommand(w.alice, w.text, "ping"); err == nil {
		t.Error("invoking a deleted command must fail")
	}
}

func TestOversizedBodyIs413(t *testing.T) {
	w := newWorld(t)
	auth := "Bot " + w.sim.Token()
	var e struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	resp := rest(t, w.sim, "POST", "/api/v10/channels/"+string(w.text)+"/messages", auth,
		map[string]any{"content": strings.Repeat("x", maxBody)}, &e)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || e.Code != 40005 {
		t.Errorf("oversized body: %d %+v, want 413 code 40005", resp.StatusCode, e)
	}
}

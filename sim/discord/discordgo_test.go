package discordsim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/sim/discord/world"
)

// rewrite sends discordgo's https://discord.com/api/v9/... requests to the
// simulator, keeping the path (the reference's recommended option A).
type rewrite struct{ base *url.URL }

func (r rewrite) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host = r.base.Scheme, r.base.Host
	req.Host = r.base.Host
	return http.DefaultTransport.RoundTrip(req)
}

// events collects discordgo events for waiting on.
type events struct {
	mu      sync.Mutex // guards following
	list    []any
	changed chan struct{}
}

func (e *events) add(v any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, v)
	if e.changed != nil {
		close(e.changed)
	}
	e.changed = make(chan struct{})
}

// wait returns the first collected event for which match is true.
func (e *events) wait(t *testing.T, ctx context.Context, match func(any) bool) any {
	t.Helper()
	var found any
	e.waitList(t, ctx, func(list []any) bool {
		for _, v := range list {
			if match(v) {
				found = v
				return true
			}
		}
		return false
	})
	return found
}

// waitList waits until match holds for the whole list collected so far.
func (e *events) waitList(t *testing.T, ctx context.Context, match func([]any) bool) {
	t.Helper()
	for {
		e.mu.Lock()
		if match(e.list) {
			e.mu.Unlock()
			return
		}
		if e.changed == nil {
			e.changed = make(chan struct{})
		}
		ch := e.changed
		e.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("discordgo event not seen: %v", ctx.Err())
		}
	}
}

// openDiscordgo opens a real discordgo v0.29.0 session on the simulator as
// the bot, with MESSAGE_CONTENT, and collects its events.
func openDiscordgo(t *testing.T, s *Server) (*discordgo.Session, *events) {
	t.Helper()
	dg, err := discordgo.New("Bot " + s.Token())
	if err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse(s.APIBaseURL())
	dg.Client = &http.Client{Transport: rewrite{base}, Timeout: 10 * time.Second}
	dg.Identify.Intents = discordgo.IntentsAllWithoutPrivileged | discordgo.IntentMessageContent | discordgo.IntentGuildMembers
	dg.LogLevel = -1
	dg.SyncEvents = true // handlers in dispatch order
	ev := &events{}
	dg.AddHandler(func(_ *discordgo.Session, e any) { ev.add(e) })
	if err := dg.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dg.Close() })
	return dg, ev
}

func isMessage(content string) func(any) bool {
	return func(v any) bool {
		m, ok := v.(*discordgo.MessageCreate)
		return ok && m.Content == content
	}
}

func TestDiscordgoTextFlow(t *testing.T) {
	w := newWorld(t)
	ctx := testCtx(t)
	dg, ev := openDiscordgo(t, w.sim)
	ev.wait(t, ctx, func(v any) bool { _, ok := v.(*discordgo.GuildCreate); return ok })
	if dg.State.User == nil || dg.State.User.ID != string(w.sim.BotID()) {
		t.Fatalf("state user %+v", dg.State.User)
	}
	g, err := dg.State.Guild(string(w.guild))
	if err != nil || len(g.Channels) != 2 || len(g.Members) != 1 { // the bot: no presences intent
		t.Fatalf("state guild %+v, %v", g, err)
	}

	orig, err := w.sim.Post(ctx, w.alice, w.text, "hello "+MentionUser(w.sim.BotID()))
	if err != nil {
		t.Fatal(err)
	}
	mc := ev.wait(t, ctx, isMessage(orig.Content)).(*discordgo.MessageCreate)
	if mc.Author.ID != string(w.alice) || mc.GuildID != string(w.guild) || len(mc.Mentions) != 1 || mc.Member == nil {
		t.Fatalf("MESSAGE_CREATE %+v", mc.Message)
	}

	reply, err := dg.ChannelMessageSendComplex(string(w.text), &discordgo.MessageSend{
		Content:         "hi " + MentionUser(w.alice),
		Reference:       mc.Reference(),
		AllowedMentions: &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}, RepliedUser: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	if reply.ReferencedMessage == nil || reply.ReferencedMessage.ID != string(orig.ID) || reply.Type != discordgo.MessageTypeReply {
		t.Fatalf("reply %+v", reply)
	}
	sent, err := waitMessage(ctx, w.sim, from(w.sim.BotID()))
	if err != nil || sent.ReplyTo() != orig.ID || !sent.AllowedMentions.RepliedUser || len(sent.AllowedMentions.Parse) != 0 || !sent.MentionsUser(w.alice) {
		t.Fatalf("sent %+v %v", sent, err)
	}
	// The echo reaches the sender too.
	ev.wait(t, ctx, isMessage(reply.Content))

	if err := dg.ChannelTyping(string(w.text)); err != nil {
		t.Fatal(err)
	}
	if _, err := waitTyping(ctx, w.sim, w.text, w.sim.BotID()); err != nil {
		t.Fatal(err)
	}
	msgs, err := dg.ChannelMessages(string(w.text), 10, "", "", "")
	if err != nil || len(msgs) != 2 || msgs[0].ID != reply.ID {
		t.Fatalf("ChannelMessages %v %v", msgs, err)
	}
	older, err := dg.ChannelMessages(string(w.text), 10, reply.ID, "", "")
	if err != nil || len(older) != 1 || older[0].ID != string(orig.ID) {
		t.Fatalf("before: %v %v", older, err)
	}
	edited, err := dg.ChannelMessageEdit(string(w.text), reply.ID, "edited")
	if err != nil || edited.Content != "edited" || edited.EditedTimestamp == nil {
		t.Fatalf("edit %+v %v", edited, err)
	}
	if _, err := w.sim.Edit(ctx, orig.ID, "changed"); err != nil {
		t.Fatal(err)
	}
	ev.wait(t, ctx, func(v any) bool { u, ok := v.(*discordgo.MessageUpdate); return ok && u.Content == "changed" })
	if err := w.sim.Delete(ctx, orig.ID); err != nil {
		t.Fatal(err)
	}
	ev.wait(t, ctx, func(v any) bool { d, ok := v.(*discordgo.MessageDelete); return ok && d.ID == string(orig.ID) })
	_, err = dg.ChannelMessage(string(w.text), string(orig.ID))
	var re *discordgo.RESTError
	if !asRESTError(err, &re) || re.Response.StatusCode != 404 || re.Message == nil || re.Message.Code != discordgo.ErrCodeUnknownMessage {
		t.Fatalf("fetch deleted: %v", err)
	}
	ch, err := dg.Channel(string(w.text))
	if err != nil || ch.GuildID != string(w.guild) {
		t.Fatalf("Channel %+v %v", ch, err)
	}
	mem, err := dg.GuildMember(string(w.guild), string(w.alice))
	if err != nil || mem.User.Username != "alice" {
		t.Fatalf("GuildMember %+v %v", mem, err)
	}
	th, err := dg.MessageThreadStartComplex(string(w.text), reply.ID, &discordgo.ThreadStart{Name: "t", AutoArchiveDuration: 60})
	if err != nil || !th.IsThread() || th.ParentID != string(w.text) {
		t.Fatalf("thread %+v %v", th, err)
	}
	if _, err := dg.ChannelMessageSend(th.ID, "in thread"); err != nil {
		t.Fatal(err)
	}
}

func asRESTError(err error, re **discordgo.RESTError) bool {
	e, ok := err.(*discordgo.RESTError)
	if ok {
		*re = e
	}
	return ok
}

func TestDiscordgoRetriesRateLimitsAnd502(t *testing.T) {
	w := newWorld(t)
	dg, _ := openDiscordgo(t, w.sim)
	tests := []struct {
		name   string
		inject func()
		want   []int // statuses the simulator answered, in order
	}{
		{"route 429", func() { w.sim.RateLimitNext(RouteMessageCreate, 2, 20*time.Millisecond, false) }, []int{429, 429, 200}},
		{"global 429", func() { w.sim.RateLimitNext(RouteAny, 1, 20*time.Millisecond, true) }, []int{429, 200}},
		{"502", func() { w.sim.FailNext(RouteMessageCreate, 2, 502) }, []int{502, 502, 200}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(w.sim.RESTLog())
			tc.inject()
			if _, err := dg.ChannelMessageSend(string(w.text), tc.name); err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, r := range w.sim.RESTLog()[before:] {
				got = append(got, r.Status)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("statuses %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("statuses %v, want %v", got, tc.want)
				}
			}
		})
	}
	t.Run("500 is an error", func(t *testing.T) {
		w.sim.FailNext(RouteMessageCreate, 1, 500)
		if _, err := dg.ChannelMessageSend(string(w.text), "x"); err == nil || !strings.Contains(err.Error(), "500") {
			t.Fatalf("err %v, want a 500 RESTError", err)
		}
	})
}

func TestDiscordgoVoiceSignalling(t *testing.T) {
	backend := &fakeVoice{endpoint: "localhost:9999"}
	w := newWorld(t, WithVoiceBackend(backend))
	ctx := testCtx(t)
	dg, ev := openDiscordgo(t, w.sim)
	if _, err := w.sim.JoinVoice(w.alice, w.voice); err != nil {
		t.Fatal(err)
	}
	ev.wait(t, ctx, func(v any) bool { e, ok := v.(*discordgo.VoiceStateUpdate); return ok && e.UserID == string(w.alice) })
	if err := dg.ChannelVoiceJoinManual(string(w.guild), string(w.voice), false, true); err != nil {
		t.Fatal(err)
	}
	ev.wait(t, ctx, func(v any) bool {
		e, ok := v.(*discordgo.VoiceServerUpdate)
		return ok && e.Token != "" && e.Endpoint == "localhost:9999" && e.GuildID == string(w.guild)
	})
	var order []string
	ev.mu.Lock()
	for _, v := range ev.list {
		switch e := v.(type) {
		case *discordgo.VoiceStateUpdate:
			if e.UserID == dg.State.User.ID && e.SessionID != "" {
				order = append(order, "state")
			}
		case *discordgo.VoiceServerUpdate:
			order = append(order, "server")
		}
	}
	ev.mu.Unlock()
	if strings.Join(order, ",") != "state,server" {
		t.Fatalf("order %v", order)
	}
	vs, err := dg.State.VoiceState(string(w.guild), string(w.alice))
	if err != nil || vs.ChannelID != string(w.voice) {
		t.Fatalf("state cache voice state %+v %v", vs, err)
	}

	// A moderator moves the bot, then disconnects it.
	other := w.sim.CreateVoiceChannel(w.guild, "Other")
	firstToken := backend.grants()[len(backend.grants())-1].Token
	if err := w.sim.MoveVoice(w.guild, w.sim.BotID(), other); err != nil {
		t.Fatal(err)
	}
	moved := ev.wait(t, ctx, func(v any) bool {
		e, ok := v.(*discordgo.VoiceServerUpdate)
		return ok && e.Token != firstToken
	}).(*discordgo.VoiceServerUpdate)
	if g := backend.grants()[len(backend.grants())-1]; g.Token != moved.Token || g.ChannelID != other {
		t.Fatalf("move grant %+v, server update %+v", g, moved)
	}
	if err := w.sim.MoveVoice(w.guild, w.sim.BotID(), ""); err != nil {
		t.Fatal(err)
	}
	ev.wait(t, ctx, func(v any) bool {
		e, ok := v.(*discordgo.VoiceStateUpdate)
		return ok && e.UserID == dg.State.User.ID && e.ChannelID == ""
	})
	if got := backend.awaitRevoked(t, 1); len(got) != 1 || got[0] != w.sim.BotID() {
		t.Fatalf("revoked %v", got)
	}
	if err := w.sim.MoveVoice(w.guild, w.sim.BotID(), other); err == nil {
		t.Fatal("moving a user who is not in voice must fail")
	}
}

func TestDiscordgoSlashCommand(t *testing.T) {
	w := newWorld(t)
	ctx := testCtx(t)
	dg, ev := openDiscordgo(t, w.sim)
	app := string(w.sim.ApplicationID())
	cmds, err := dg.ApplicationCommandBulkOverwrite(app, string(w.guild), []*discordgo.ApplicationCommand{
		{Name: "ping", Description: "Ping!"}, {Name: "persona", Description: "Switch persona"},
	})
	if err != nil || len(cmds) != 2 || cmds[0].ID == "" || cmds[0].Version == "" || cmds[0].ApplicationID != app {
		t.Fatalf("bulk overwrite %+v %v", cmds, err)
	}
	again, err := dg.ApplicationCommandBulkOverwrite(app, string(w.guild), []*discordgo.ApplicationCommand{{Name: "ping", Description: "Ping!"}})
	if err != nil || len(again) != 1 || again[0].ID != cmds[0].ID {
		t.Fatalf("overwrite keeps ids: %+v %v", again, err)
	}
	if _, err := dg.ApplicationCommandCreate(app, "", &discordgo.ApplicationCommand{Name: "help", Description: "Help"}); err != nil {
		t.Fatal(err)
	}
	list, err := dg.ApplicationCommands(app, string(w.guild))
	if err != nil || len(list) != 1 || len(w.sim.Commands("")) != 1 {
		t.Fatalf("list %+v %v", list, err)
	}
	it, err := w.sim.InvokeCommand(w.alice, w.text, "ping")
	if err != nil {
		t.Fatal(err)
	}
	ic := ev.wait(t, ctx, func(v any) bool { _, ok := v.(*discordgo.InteractionCreate); return ok }).(*discordgo.InteractionCreate)
	if ic.ApplicationCommandData().Name != "ping" || ic.Member.User.ID != string(w.alice) {
		t.Fatalf("interaction %+v", ic.Interaction)
	}
	if err := dg.InteractionRespond(ic.Interaction, &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: "pong"},
	}); err != nil {
		t.Fatal(err)
	}
	resp, err := waitInteractionResponse(ctx, w.sim, it.ID)
	if err != nil || resp.Type != CallbackChannelMessage || resp.Message == "" {
		t.Fatalf("response %+v %v", resp, err)
	}
	m, ok := w.sim.Message(resp.Message)
	if !ok || m.Content != "pong" || m.Origin != OriginInteraction || m.Type != MessageChatInputCommand {
		t.Fatalf("response message %+v", m)
	}
	if err := dg.InteractionRespond(ic.Interaction, &discordgo.InteractionResponse{Type: 4, Data: &discordgo.InteractionResponseData{Content: "x"}}); err == nil {
		t.Fatal("a second response must fail")
	}
	fu, err := dg.FollowupMessageCreate(ic.Interaction, true, &discordgo.WebhookParams{Content: "follow-up"})
	if err != nil || fu.Content != "follow-up" {
		t.Fatalf("follow-up %+v %v", fu, err)
	}
	orig, err := dg.InteractionResponseEdit(ic.Interaction, &discordgo.WebhookEdit{Content: ptr("pong!")})
	if err != nil || orig.ID != string(resp.Message) || orig.Content != "pong!" {
		t.Fatalf("edit original %+v %v", orig, err)
	}

	// Deferred: the original appears when @original is edited.
	it2, _ := w.sim.InvokeCommand(w.alice, w.text, "ping")
	ic2 := ev.wait(t, ctx, func(v any) bool { e, ok := v.(*discordgo.InteractionCreate); return ok && e.ID == string(it2.ID) }).(*discordgo.InteractionCreate)
	if err := dg.InteractionRespond(ic2.Interaction, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredChannelMessageWithSource}); err != nil {
		t.Fatal(err)
	}
	if _, err := dg.InteractionResponseEdit(ic2.Interaction, &discordgo.WebhookEdit{Content: ptr("later")}); err != nil {
		t.Fatal(err)
	}
	r2, _ := waitInteractionResponse(ctx, w.sim, it2.ID)
	if m, ok := w.sim.Message(r2.Message); !ok || m.Content != "later" {
		t.Fatalf("deferred original %+v", m)
	}

	// Ephemeral: only the invoker sees it; not in the channel, no events.
	it3, _ := w.sim.InvokeCommand(w.alice, w.text, "ping")
	ic3 := ev.wait(t, ctx, func(v any) bool { e, ok := v.(*discordgo.InteractionCreate); return ok && e.ID == string(it3.ID) }).(*discordgo.InteractionCreate)
	if err := dg.InteractionRespond(ic3.Interaction, &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: "just for you", Flags: discordgo.MessageFlagsEphemeral},
	}); err != nil {
		t.Fatal(err)
	}
	r3, _ := waitInteractionResponse(ctx, w.sim, it3.ID)
	m3, ok := w.sim.Message(r3.Message)
	if !ok || !m3.Ephemeral() || m3.Content != "just for you" {
		t.Fatalf("ephemeral response %+v", m3)
	}
	if slices.ContainsFunc(w.sim.Messages(w.text), func(m Message) bool { return m.ID == m3.ID }) {
		t.Error("an ephemeral response is in the channel's history")
	}
	if _, err := dg.ChannelMessage(string(w.text), string(m3.ID)); err == nil {
		t.Error("an ephemeral response is fetchable from the channel")
	}
	if got, err := dg.InteractionResponse(ic3.Interaction); err != nil || got.ID != string(m3.ID) {
		t.Errorf("@original of the ephemeral response: %+v %v", got, err)
	}
	// A later ordinary message arrives; the ephemeral one never did.
	if _, err := w.sim.Post(ctx, w.alice, w.text, "marker"); err != nil {
		t.Fatal(err)
	}
	ev.wait(t, ctx, isMessage("marker"))
	if ev.wait(t, ctx, func(v any) bool {
		m, ok := v.(*discordgo.MessageCreate)
		return ok && (m.ID == string(m3.ID) || m.Content == "marker")
	}).(*discordgo.MessageCreate).ID == string(m3.ID) {
		t.Error("the bot got MESSAGE_CREATE for an ephemeral response")
	}
}

func ptr[T any](v T) *T { return &v }

// TestConcurrentPosts: scripted users post from many goroutines while
// discordgo reads; every message arrives once, in id order per channel.
func TestConcurrentPosts(t *testing.T) {
	w := newWorld(t)
	ctx := testCtx(t)
	_, ev := openDiscordgo(t, w.sim)
	const writers, each = 8, 25
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			for j := range each {
				if _, err := w.sim.Post(ctx, w.alice, w.text, fmt.Sprintf("%d-%d", i, j)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	ev.waitList(t, ctx, func(list []any) bool {
		n := 0
		for _, v := range list {
			if _, ok := v.(*discordgo.MessageCreate); ok {
				n++
			}
		}
		return n >= writers*each
	})
	ev.mu.Lock()
	defer ev.mu.Unlock()
	var last string
	seen := map[string]bool{}
	for _, v := range ev.list {
		if m, ok := v.(*discordgo.MessageCreate); ok {
			if seen[m.ID] || (last != "" && !world.SnowflakeLess(last, m.ID)) {
				t.Fatalf("message %s duplicated or out of order after %s", m.ID, last)
			}
			seen[m.ID], last = true, m.ID
		}
	}
	if len(seen) != writers*each {
		t.Fatalf("%d messages, want %d", len(seen), writers*each)
	}
}

// TestDiscordgoAttachmentsAndContentIntent: attachments and embeds reach a
// session with MESSAGE_CONTENT intact and decode in discordgo; a session
// without the intent gets them blanked.
func TestDiscordgoAttachmentsAndContentIntent(t *testing.T) {
	w := newWorld(t)
	ctx := testCtx(t)
	_, ev := openDiscordgo(t, w.sim)
	blind, _ := identify(t, w.sim, w.sim.Token(), IntentGuilds|IntentGuildMessages)
	blind.until("GUILD_CREATE")
	m, err := w.sim.Post(ctx, w.alice, w.text, "look",
		WithFile("cat.png", "image/png", make([]byte, 1234)), WithEmbed(json.RawMessage(`{"title":"A cat"}`)))
	if err != nil {
		t.Fatal(err)
	}
	mc := ev.wait(t, ctx, isMessage("look")).(*discordgo.MessageCreate)
	if len(mc.Attachments) != 1 || mc.Attachments[0].Filename != "cat.png" || mc.Attachments[0].Size != 1234 || mc.Attachments[0].ID != string(m.Attachments[0].ID) {
		t.Errorf("attachments %+v", mc.Attachments)
	}
	if len(mc.Embeds) != 1 || mc.Embeds[0].Title != "A cat" {
		t.Errorf("embeds %+v", mc.Embeds)
	}
	var got wireMessage
	_ = json.Unmarshal(blind.until("MESSAGE_CREATE").D, &got)
	if got.Content != "" || len(got.Attachments) != 0 || len(got.Embeds) != 0 {
		t.Errorf("without MESSAGE_CONTENT: %+v", got)
	}
}

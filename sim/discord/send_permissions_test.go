package discordsim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/banterbot/banter/sim/discord/world"
)

// sendPermsWorld is a guild the bot does not own (alice does), so that its channel overwrites
// bind the bot: a text channel, a thread in it, and a message of alice's to reply to.
type sendPermsWorld struct {
	s              *Server
	alice          UserID
	guild          GuildID
	text, thread   ChannelID
	target         MessageID
	bot, aliceAuth string
}

func newSendPermsWorld(t *testing.T) *sendPermsWorld {
	t.Helper()
	s := serve(t)
	w := &sendPermsWorld{s: s, alice: s.CreateUser("alice")}
	w.guild = s.CreateGuildOwnedBy("Alice's", w.alice)
	w.text = s.CreateTextChannel(w.guild, "general")
	thread, err := s.CreateThread(w.text, w.alice, "a thread")
	if err != nil {
		t.Fatal(err)
	}
	w.thread = thread
	m, err := s.Post(testCtx(t), w.alice, w.text, "hello bot")
	if err != nil {
		t.Fatal(err)
	}
	w.target, w.bot, w.aliceAuth = m.ID, "Bot "+s.Token(), "Bot "+s.UserToken(w.alice)
	return w
}

// overwrite sets the bot's member overwrite on the text channel (a thread takes its parent's).
func (w *sendPermsWorld) overwrite(t *testing.T, allow, deny uint64) {
	t.Helper()
	o := world.Overwrite{ID: string(w.s.BotID()), Type: world.OverwriteMember,
		Allow: strconv.FormatUint(allow, 10), Deny: strconv.FormatUint(deny, 10)}
	if err := w.s.SetChannelOverwrite(w.text, o); err != nil {
		t.Fatal(err)
	}
}

// TestSendPermissions: a message create is refused as Discord refuses it when the bot lacks a
// permission in the channel (an overwrite in a guild it does not own): View Channel 403 50001,
// Send Messages (Send Messages in Threads in a thread), Attach Files for a file 403 50013
// "Missing Permissions"; a reply without Read Message History 403 160009 (a plain message
// still goes through; without Send Messages too, 50013 wins); without Embed Links the embeds are
// dropped (an embed-only message is then empty: 400 50006); without Mention Everyone an
// @everyone does not ping. Nothing refused is stored.
func TestSendPermissions(t *testing.T) {
	embed := json.RawMessage(`{"title":"t","description":"d"}`)
	tests := []struct {
		name         string
		allow, deny  uint64
		inThread     bool
		body         map[string]any
		file         bool
		status, code int
		check        func(wireMessage) string
	}{
		{name: "allowed", body: map[string]any{"content": "hi"}, status: 200},
		{name: "no send messages", deny: world.PermSendMessages, body: map[string]any{"content": "hi"}, status: 403, code: world.CodeMissingPerms},
		{name: "no view channel", deny: world.PermViewChannel, body: map[string]any{"content": "hi"}, status: 403, code: world.CodeMissingAccess},
		{name: "thread without send messages in threads", deny: world.PermSendMessagesInThreads, inThread: true,
			body: map[string]any{"content": "hi"}, status: 403, code: world.CodeMissingPerms},
		{name: "thread needs only send messages in threads", deny: world.PermSendMessages, inThread: true,
			body: map[string]any{"content": "hi"}, status: 200},
		{name: "reply without read message history", deny: world.PermReadMessageHistory,
			body: map[string]any{"content": "hi", "message_reference": map[string]any{"message_id": "TARGET"}}, status: 403, code: world.CodeCannotReference},
		{name: "plain message without read message history", deny: world.PermReadMessageHistory,
			body: map[string]any{"content": "hi"}, status: 200},
		{name: "reply without send messages nor read message history", deny: world.PermReadMessageHistory | world.PermSendMessages,
			body: map[string]any{"content": "hi", "message_reference": map[string]any{"message_id": "TARGET"}}, status: 403, code: world.CodeMissingPerms},
		{name: "file without attach files", deny: world.PermAttachFiles, file: true,
			body: map[string]any{"content": "hi"}, status: 403, code: world.CodeMissingPerms},
		{name: "file with attach files", file: true, body: map[string]any{"content": "hi"}, status: 200,
			check: func(m wireMessage) string { return want(len(m.Attachments) == 1, "one attachment") }},
		{name: "embed without embed links is dropped", deny: world.PermEmbedLinks,
			body: map[string]any{"content": "hi", "embeds": []json.RawMessage{embed}}, status: 200,
			check: func(m wireMessage) string { return want(len(m.Embeds) == 0 && m.Content == "hi", "content, no embed") }},
		{name: "embed alone without embed links is empty", deny: world.PermEmbedLinks,
			body: map[string]any{"embeds": []json.RawMessage{embed}}, status: 400, code: world.CodeEmptyMessage},
		{name: "embed with embed links", body: map[string]any{"content": "hi", "embeds": []json.RawMessage{embed}}, status: 200,
			check: func(m wireMessage) string { return want(len(m.Embeds) == 1, "the embed") }},
		{name: "@everyone without mention everyone", deny: world.PermMentionEveryone,
			body: map[string]any{"content": "@everyone look", "allowed_mentions": map[string]any{"parse": []string{"everyone"}}}, status: 200,
			check: func(m wireMessage) string { return want(!m.MentionEveryone, "mention_everyone false") }},
		{name: "@everyone with mention everyone",
			body: map[string]any{"content": "@everyone look", "allowed_mentions": map[string]any{"parse": []string{"everyone"}}}, status: 200,
			check: func(m wireMessage) string { return want(m.MentionEveryone, "mention_everyone true") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newSendPermsWorld(t)
			w.overwrite(t, tt.allow, tt.deny)
			ch := w.text
			if tt.inThread {
				ch = w.thread
			}
			if ref, ok := tt.body["message_reference"].(map[string]any); ok {
				ref["message_id"] = string(w.target)
			}
			before := len(w.s.Sent())
			status, raw := w.create(t, ch, tt.body, tt.file)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %s", status, tt.status, raw)
			}
			if tt.status != 200 {
				var e wireError
				if err := json.Unmarshal(raw, &e); err != nil || e.Code != tt.code {
					t.Errorf("error body %s, want code %d", raw, tt.code)
				}
				if want := map[int]string{world.CodeMissingPerms: "Missing Permissions", world.CodeCannotReference: "Cannot reference a message without permission to read message history"}[tt.code]; want != "" && e.Message != want {
					t.Errorf("error message %q, want %q", e.Message, want)
				}
				if n := len(w.s.Sent()); n != before {
					t.Errorf("%d messages stored by a refused create", n-before)
				}
				return
			}
			var m wireMessage
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			if tt.check != nil {
				if msg := tt.check(m); msg != "" {
					t.Errorf("message %s: want %s", raw, msg)
				}
			}
		})
	}
}

func want(ok bool, what string) string {
	if ok {
		return ""
	}
	return what
}

// create posts a message as the bot, as JSON or (file) as a multipart upload with one file.
func (w *sendPermsWorld) create(t *testing.T, ch ChannelID, body map[string]any, file bool) (int, []byte) {
	t.Helper()
	payload, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	ct := "application/json"
	if file {
		ct, payload = multipartBody(t, string(payload), map[string][]byte{"files[0]=note.txt": []byte("a note")})
	}
	req, err := http.NewRequestWithContext(t.Context(), "POST", w.s.APIBaseURL()+"/api/v10/channels/"+string(ch)+"/messages", bytes.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ct)
	req.Header.Set("Authorization", w.bot)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, raw
}

// TestEditAndInteractionPermissions: an author who lost Send Messages may still edit their
// message (Discord checks no Send Messages on an edit), not once they lost View Channel (403
// 50001); an interaction response needs none of the bot's permissions (the application's
// webhook posts it), so a command answers where the bot may not send.
func TestEditAndInteractionPermissions(t *testing.T) {
	w := newSendPermsWorld(t)
	status, raw := w.create(t, w.text, map[string]any{"content": "first"}, false)
	var m wireMessage
	if status != 200 || json.Unmarshal(raw, &m) != nil {
		t.Fatalf("create: %d %s", status, raw)
	}
	path := "/api/v10/channels/" + string(w.text) + "/messages/" + string(m.ID)
	tests := []struct {
		name   string
		deny   uint64
		status int
		code   int
	}{
		{name: "send messages denied", deny: world.PermSendMessages, status: 200},
		{name: "view channel denied", deny: world.PermViewChannel, status: 403, code: world.CodeMissingAccess},
	}
	for _, tt := range tests {
		w.overwrite(t, 0, tt.deny)
		var e wireError
		resp := rest(t, w.s, "PATCH", path, w.bot, map[string]any{"content": "edited: " + tt.name}, &e)
		if resp.StatusCode != tt.status || (tt.status != 200 && e.Code != tt.code) {
			t.Errorf("%s: edit %d %+v, want %d (code %d)", tt.name, resp.StatusCode, e, tt.status, tt.code)
		}
	}

	w.overwrite(t, 0, world.PermSendMessages)
	app := "/api/v10/applications/" + string(w.s.BotID())
	if resp := rest(t, w.s, "POST", app+"/guilds/"+string(w.guild)+"/commands", w.bot, map[string]any{"name": "ping", "description": "Ping!"}, nil); resp.StatusCode != 201 {
		t.Fatalf("create command: %d", resp.StatusCode)
	}
	it, err := w.s.InvokeCommand(w.alice, w.text, "ping")
	if err != nil {
		t.Fatal(err)
	}
	cb := "/api/v10/interactions/" + string(it.ID) + "/" + it.Token + "/callback"
	if resp := rest(t, w.s, "POST", cb, "", map[string]any{"type": 4, "data": map[string]any{"content": "pong"}}, nil); resp.StatusCode/100 != 2 {
		t.Errorf("interaction response where the bot may not send: %d, want 2xx", resp.StatusCode)
	}
}

// TestDiscordJSSendRefused: the unmodified discord.js client (interop/discordjs/refused.mjs),
// sending as the bot where an overwrite denies it Send Messages, gets a DiscordAPIError with
// Discord's 403 50013 "Missing Permissions", and nothing is posted.
func TestDiscordJSSendRefused(t *testing.T) {
	w := newSendPermsWorld(t)
	w.overwrite(t, 0, world.PermSendMessages)
	n := startNode(t, "refused.mjs",
		"SIM_API="+w.s.APIBaseURL()+"/api",
		"SIM_TOKEN="+w.s.Token(),
		"SIM_CHANNEL="+string(w.text),
	)
	var l struct {
		Event   string `json:"event"`
		Status  int    `json:"status"`
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	n.wait("refused", func(nl nodeLine) bool { nl.decode(t, &l); return nl.Event == "refused" || nl.Event == "sent" })
	if l.Event != "refused" || l.Status != 403 || l.Code != world.CodeMissingPerms || l.Message != "Missing Permissions" {
		t.Errorf("discord.js saw %+v, want a 403 50013 Missing Permissions refusal", l)
	}
	if sent := w.s.Sent(); len(sent) != 0 {
		t.Errorf("%d messages posted", len(sent))
	}
	n.exit()
}

package discordsim

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/banterbot/banter/sim/discord/world"
)

// FuzzCreateMessage feeds untrusted POST /channels/{id}/messages bodies
// through decoding, mention computation and storage: no panics, and what
// is stored is consistent (mentions unique and real, the reply resolved).
func FuzzCreateMessage(f *testing.F) {
	s := New()
	g := s.CreateGuild("g")
	ch := s.CreateTextChannel(g, "c")
	alice := s.CreateUser("alice")
	_ = s.AddMember(g, alice)
	mod, _ := s.CreateRole(g, "r")
	first, err := s.Post(f.Context(), alice, ch, "first")
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		`{"content":"hi <@` + string(alice) + `> <@!` + string(alice) + `> <@&` + string(mod) + `> @everyone"}`,
		`{"content":"x","allowed_mentions":{"parse":[]},"message_reference":{"message_id":"` + string(first.ID) + `"}}`,
		`{"content":"x","allowed_mentions":{"parse":["users"],"users":["1"],"replied_user":true},"message_reference":{"message_id":"1","fail_if_not_exists":false}}`,
		`{"content":"","embeds":[{"title":"t"}]}`,
		`{"content":null,"embeds":null,"components":null,"sticker_ids":null,"tts":false}`,
		`{"content":"<@99999999999999999999999> <@&> @here"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var b createMessageBody
		if json.Unmarshal(body, &b) != nil {
			return
		}
		m, err := s.CreateMessage(b.toNew(ch, s.BotID(), OriginREST))
		if err != nil {
			var we *world.Error
			if !errors.As(err, &we) || we.Status < 400 || we.Status > 499 {
				t.Fatalf("error without a 4xx: %v", err)
			}
			return
		}
		s.Read(func(v *world.View) {
			seen := map[UserID]bool{}
			for _, u := range m.Mentions {
				if _, ok := v.User(u); seen[u] || !ok {
					t.Fatalf("mention %s duplicated or unknown", u)
				}
				seen[u] = true
			}
			gd, _ := v.Guild(g)
			for _, r := range m.MentionRoles {
				if !slices.ContainsFunc(gd.Roles, func(x world.Role) bool { return x.ID == r }) {
					t.Fatalf("unknown role %s mentioned", r)
				}
			}
			if m.Reference != nil {
				if _, ok := v.Message(m.Reference.MessageID); !ok || m.Type != MessageReply {
					t.Fatalf("reply to %s stored as %v", m.Reference.MessageID, m.Type)
				}
			}
			if _, err := json.Marshal(wireMessageOf(v, m, s.cdn, 0)); err != nil {
				t.Fatal(err)
			}
		})
	})
}

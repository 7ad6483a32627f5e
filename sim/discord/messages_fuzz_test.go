package discordsim

import (
	"encoding/json"
	"slices"
	"testing"
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
		n, err := b.toNew(ch, s.BotID(), OriginREST)
		if err != nil {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		m, err := s.createMessageLocked(n)
		if err != nil {
			var ae *apiError
			if !asAPIError(err, &ae) || ae.status < 400 || ae.status > 499 {
				t.Fatalf("error without a 4xx: %v", err)
			}
			return
		}
		seen := map[UserID]bool{}
		for _, u := range m.Mentions {
			if seen[u] || s.users[u] == nil {
				t.Fatalf("mention %s duplicated or unknown", u)
			}
			seen[u] = true
		}
		for _, r := range m.MentionRoles {
			if !slices.ContainsFunc(s.guilds[g].roles, func(x *role) bool { return x.id == r }) {
				t.Fatalf("unknown role %s mentioned", r)
			}
		}
		if m.Reference != nil {
			rm := s.messages[m.Reference.MessageID]
			if rm == nil || m.Type != MessageReply {
				t.Fatalf("reply to %s stored as %v", m.Reference.MessageID, m.Type)
			}
		}
		if _, err := json.Marshal(s.wireMessageLocked(m, 0)); err != nil {
			t.Fatal(err)
		}
	})
}

func asAPIError(err error, ae **apiError) bool {
	e, ok := err.(*apiError)
	if ok {
		*ae = e
	}
	return ok
}

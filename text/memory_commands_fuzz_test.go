package text

import (
	"encoding/json"
	"testing"

	"github.com/bwmarrin/discordgo"
)

// FuzzMemoryInteraction reads any /memory payload discordgo decodes: options come from Discord
// users, and one of an unexpected type, value or range is ignored, never a panic: a fact
// number is within /memory show's list, a fact id positive and exact, a member an id.
func FuzzMemoryInteraction(f *testing.F) {
	for _, s := range []string{
		`{"type":2,"data":{"name":"memory","options":[{"name":"show","type":1}]}}`,
		`{"type":2,"data":{"name":"memory","options":[{"name":"forget","type":1,"options":[{"name":"number","type":4,"value":3}]}]}}`,
		`{"type":2,"data":{"name":"memory","options":[{"name":"forget","type":1,"options":[{"name":"number","type":4,"value":2.5}]}]}}`,
		`{"type":2,"data":{"name":"memory","options":[{"name":"delete","type":1,"options":[{"name":"id","type":4,"value":42}]}]}}`,
		`{"type":2,"data":{"name":"memory","options":[{"name":"delete","type":1,"options":[{"name":"id","type":4,"value":1e300}]}]}}`,
		`{"type":2,"data":{"name":"memory","options":[{"name":"delete","type":1,"options":[{"name":"id","type":3,"value":"42"}]}]}}`,
		`{"type":2,"data":{"name":"memory","options":[{"name":"list","type":1,"options":[{"name":"member","type":6,"value":"123456789012345678"}]}]}}`,
		`{"type":2,"data":{"name":"memory","options":[{"name":"list","type":1,"options":[{"name":"member","type":6,"value":"<@1>"}]}]}}`,
		`{"type":2,"data":{"name":"memory","options":[{"name":"list","type":1,"options":[{"name":"member","type":6,"value":7}]}]}}`,
		`{"type":2,"data":{"name":"memory","options":[null]}}`,
		`{"type":2,"data":{"name":"memory","options":[{"name":"list","type":2,"options":[]}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		var i discordgo.Interaction
		if json.Unmarshal(payload, &i) != nil || i.Type != discordgo.InteractionApplicationCommand {
			return
		}
		r := memoryInteraction(i.ApplicationCommandData())
		checkMemoryRequest(t, r)
		if r.public || r.admin {
			t.Fatalf("%s: a slash command read as public or admin: %+v", payload, r)
		}
	})
}

// FuzzParseMemoryPrefix reads any prefix topic: the same bounds as the slash form.
func FuzzParseMemoryPrefix(f *testing.F) {
	for _, s := range []string{"memory forget-me", "memory forget 2", "memory forget 99", "memory delete 42",
		"memory delete #42", "memory delete -1", "memory delete 99999999999999999999", "memory list <@!123>",
		"memory list 123", "memory list @everyone", "MEMORY Pause", "memory", "memory a b c", "weather today", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, topic string) {
		r, ok := parseMemoryPrefix(topic)
		if !ok {
			if r != (memoryRequest{}) {
				t.Fatalf("%q: not a memory command, yet %+v", topic, r)
			}
			return
		}
		checkMemoryRequest(t, r)
		if !r.public || r.admin {
			t.Fatalf("%q: a prefix command read as private or admin: %+v", topic, r)
		}
	})
}

func checkMemoryRequest(t *testing.T, r memoryRequest) {
	t.Helper()
	switch {
	case r.n < -1 || r.n > maxShownFacts:
		t.Fatalf("fact number %d out of range", r.n)
	case r.id < -1 || r.id > maxFactID:
		t.Fatalf("fact id %d out of range", r.id)
	case r.member != "" && !isSnowflake(r.member):
		t.Fatalf("member %q is not an id", r.member)
	}
}

// TestParseMemoryPrefix: what the prefix form reads.
func TestParseMemoryPrefix(t *testing.T) {
	for _, tc := range []struct {
		topic string
		want  memoryRequest
		ok    bool
	}{
		{"memory forget 2", memoryRequest{action: memForget, n: 2, public: true}, true},
		{"memory forget 26", memoryRequest{action: memForget, n: -1, public: true}, true},
		{"memory delete 42", memoryRequest{action: memDelete, id: 42, public: true}, true},
		{"memory delete #42", memoryRequest{action: memDelete, id: 42, public: true}, true},
		{"memory delete x", memoryRequest{action: memDelete, id: -1, public: true}, true},
		{"memory delete", memoryRequest{action: memDelete, public: true}, true},
		{"memory list <@!123>", memoryRequest{action: memList, member: "123", public: true}, true},
		{"memory list <@123>", memoryRequest{action: memList, member: "123", public: true}, true},
		{"memory list bob", memoryRequest{action: memList, public: true}, true},
		{"Memory Forget-Me", memoryRequest{action: memForgetMe, public: true}, true},
		{"memories", memoryRequest{}, false},
	} {
		got, ok := parseMemoryPrefix(tc.topic)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseMemoryPrefix(%q) = %+v, %v; want %+v, %v", tc.topic, got, ok, tc.want, tc.ok)
		}
	}
}

package text_test

import (
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/config"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/store"
)

// TestMemoryLookupByMeaning: a message that shares no word with memory_lookup's query ("bob's
// cat" / "my kitten Miso sleeps on the router") is found once embeddings are on, ranked by
// meaning and words, and not with embeddings off (words only, as before) nor when the query's
// embedding fails (the lookup still answers, by words).
func TestMemoryLookupByMeaning(t *testing.T) {
	for _, tc := range []struct {
		name        string
		on, failing bool // failing: the query's embeddings call fails
		found       bool
	}{{"embeddings-on", true, false, true}, {"embeddings-off", false, false, false}, {"query-embedding-fails", true, true, false}} {
		t.Run(tc.name, func(t *testing.T) {
			memRule := openaisim.Rule{Match: openaisim.Match{Model: "memory-model"},
				Reply: openaisim.Reply{ToolCalls: []openaisim.ToolCall{{Name: "record_facts", Arguments: `{"facts":[]}`}}}}
			h := newHarness(t, func(c *config.Config) {
				lookupsOn(c)
				memoryOn(c)
				c.Embeddings.Enabled = tc.on
			}, memRule,
				openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointEmbeddings, InputPattern: map[bool]string{true: "^bob's cat$", false: "^never$"}[tc.failing]},
					Fault: openaisim.Fault{Status: 500}},
				lookupCall(`what pet`, "memory_lookup", `{"query":"bob's cat"}`),
				followupSays(`(?s)Before answering you asked.*router`, "Bob's kitten Miso sleeps on the router."),
				followupSays(`(?s)Before answering you asked`, "I don't know."),
			)
			old := h.post(h.bob, "my kitten Miso sleeps on the router")
			h.waitLog(`"msg":"memory_extracted"`, string(old.ID))
			h.clock.Advance(7 * 24 * time.Hour)
			h.post(h.alice, "banter, what pet does bob have?")
			r := h.waitBot(1)
			want := map[bool]string{true: "Bob's kitten Miso sleeps on the router.", false: "I don't know."}[tc.found]
			if r.Content != want {
				t.Fatalf("reply %q, want %q", r.Content, want)
			}
			fu := h.requestsOf(followupModel)
			if len(fu) != 1 || strings.Contains(fu[0].Prompt, string(old.ID)) != tc.found {
				t.Errorf("follow-up prompt shows bob's message: %v, want %v", !tc.found, tc.found)
			}
			var embedded []string // bob's and alice's messages at extraction, and the query
			for _, r := range h.osim.RequestsFor(openaisim.EndpointEmbeddings) {
				embedded = append(embedded, r.Prompt)
			}
			all := strings.Join(embedded, "\n")
			if tc.on != (strings.Contains(all, "sleeps on the router") && strings.Contains(all, "bob's cat")) || !tc.on && len(embedded) > 0 {
				t.Errorf("embedded with embeddings %v: %q", tc.on, embedded)
			}
			if tc.failing {
				h.waitLog(`"msg":"memory_lookup_words_only"`)
			}
			if tc.on {
				if n, _ := h.st.NearestMessages(h.ctx, store.VectorQuery{GuildID: string(h.guild), Model: "text-embedding-3-small",
					Vector: openaisim.Embed("cat", 1536)}); len(n) == 0 {
					t.Error("bob's message has no stored embedding")
				}
			}
		})
	}
}

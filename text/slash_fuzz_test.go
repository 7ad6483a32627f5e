package text_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	discordsim "github.com/banterbot/banter/sim/discord"
)

// FuzzPersonaInteraction hands the text pipeline's interaction handler any
// INTERACTION_CREATE payload discordgo decodes: the options of /persona
// come from Discord users, and an option of an unexpected type or value
// (discordgo's StringValue panics on one) must be ignored, not crash the
// bot. What a string option says is saved, trimmed; nothing else changes
// the user's persona.
func FuzzPersonaInteraction(f *testing.F) {
	for _, s := range []string{
		`{"id":"1","type":2,"token":"t","member":{"user":{"id":"10"}},"data":{"name":"persona","options":[{"name":"preferred_name","type":3,"value":" Al "},{"name":"pronouns","type":3,"value":"they/them"},{"name":"about","type":3,"value":"likes tea"}]}}`,
		`{"id":"2","type":2,"token":"t","user":{"id":"11"},"data":{"name":"persona","options":[]}}`,
		`{"id":"3","type":2,"token":"t","user":{"id":"12"},"data":{"name":"persona"}}`,
		`{"id":"4","type":2,"token":"t","user":{"id":"13"},"data":{"name":"persona","options":[{"name":"preferred_name","type":4,"value":7}]}}`,
		`{"id":"5","type":2,"token":"t","user":{"id":"14"},"data":{"name":"persona","options":[{"name":"pronouns","type":3,"value":null}]}}`,
		`{"id":"6","type":2,"token":"t","user":{"id":"15"},"data":{"name":"persona","options":[null,{"name":"about","type":3,"value":"x"}]}}`,
		`{"id":"7","type":2,"token":"t","user":{"id":"16"},"data":{"name":"persona","options":[{"name":"set","type":1,"options":[{"name":"about","type":3,"value":"nested"}]}]}}`,
		`{"id":"8","type":2,"token":"t","user":{"id":"17"},"data":{"name":"persona","options":[{"name":"preferred_name","type":3,"value":true}]}}`,
		`{"id":"9","type":2,"token":"t","data":{"name":"persona","options":[{"name":"about","type":3,"value":"no user"}]}}`,
		`{"id":"10","type":4,"token":"t","user":{"id":"18"},"data":{"name":"persona","options":[{"name":"about","type":3,"value":"autocomplete","focused":true}]}}`,
		`{"id":"11","type":3,"token":"t","user":{"id":"19"},"data":{"custom_id":"persona","component_type":2}}`,
		`{"id":"12","type":2,"token":"t","user":{"id":"20"},"data":{"name":"join","options":[{"name":"channel","type":7,"value":"5"}]}}`,
		`{"id":"13","type":2,"token":"t","member":{"user":null},"user":{"id":"21"},"data":{"name":"persona","options":[{"name":"unknown","type":3,"value":"?"}]}}`,
	} {
		f.Add([]byte(s))
	}
	// Every input answers its interaction: the simulator's rate limits would make the fuzzer wait
	// for them (Discord's are not what is tested here).
	h := newHarnessWith(f, false, []discordsim.Option{discordsim.WithGlobalLimit(1<<30, time.Second),
		discordsim.WithDefaultRouteLimit(1<<30, time.Second)}, nil)
	ctx := context.Background() // not the harness's: a fuzz run outlasts it
	f.Fuzz(func(t *testing.T, payload []byte) {
		var i discordgo.Interaction
		if json.Unmarshal(payload, &i) != nil {
			return // discordgo drops an event it cannot decode
		}
		user := i.User
		if i.Member != nil && i.Member.User != nil {
			user = i.Member.User
		}
		isPersona := i.Type == discordgo.InteractionApplicationCommand && i.ApplicationCommandData().Name == "persona"
		var before map[string]string
		if isPersona && user != nil {
			before = personaFields(t, h, ctx, user.ID)
		}
		handled := h.svc.HandleInteraction(ctx, h.sess, &i)
		if handled != (isPersona && user != nil) {
			t.Fatalf("handled = %v for a %v interaction (persona %v, user %v)", handled, i.Type, isPersona, user != nil)
		}
		if !handled {
			return
		}
		want := before
		for _, o := range i.ApplicationCommandData().Options {
			if o == nil || o.Type != discordgo.ApplicationCommandOptionString {
				continue
			}
			if v, ok := o.Value.(string); ok {
				if _, known := want[o.Name]; known {
					want[o.Name] = strings.TrimSpace(v)
				}
			}
		}
		if got := personaFields(t, h, ctx, user.ID); !equalFields(got, want) {
			t.Fatalf("persona of %q after %s: %v, want %v", user.ID, payload, got, want)
		}
	})
}

// personaFields reads the fields /persona sets, by option name.
func personaFields(t *testing.T, h *harness, ctx context.Context, userID string) map[string]string {
	t.Helper()
	ps, err := h.st.Personas(ctx, []string{userID})
	if err != nil {
		t.Fatal(err)
	}
	p := ps[userID]
	return map[string]string{"preferred_name": p.PreferredName, "pronouns": p.Pronouns, "about": p.Description}
}

func equalFields(a, b map[string]string) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return len(a) == len(b)
}

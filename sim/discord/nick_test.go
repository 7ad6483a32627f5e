package discordsim

import (
	"encoding/json"
	"testing"
)

// TestSetNickShowsInMessageCreate: a member's nickname shows where Discord shows it in a
// MESSAGE_CREATE of a guild channel: the author's member object and, for each user the message
// mentions, the mention's partial "member" (the gateway event's extra field).
func TestSetNickShowsInMessageCreate(t *testing.T) {
	w := newWorld(t)
	ctx := testCtx(t)
	bob := w.sim.CreateUser("bob")
	if err := w.sim.AddMember(w.guild, bob); err != nil {
		t.Fatal(err)
	}
	if err := w.sim.SetNick(w.guild, bob, "Bobby"); err != nil {
		t.Fatal(err)
	}
	if err := w.sim.SetNick(w.guild, w.alice, "Al"); err != nil {
		t.Fatal(err)
	}
	if err := w.sim.SetNick(w.guild, w.sim.CreateUser("stranger"), "x"); err == nil {
		t.Error("SetNick of a non-member: no error")
	}
	gw, _ := identify(t, w.sim, w.sim.Token(), IntentGuilds|IntentGuildMessages|IntentMessageContent)
	gw.until("GUILD_CREATE")
	if _, err := w.sim.Post(ctx, w.alice, w.text, "hi "+MentionUser(bob)); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Member   struct{ Nick *string } `json:"member"`
		Mentions []struct {
			ID     UserID
			Member *struct{ Nick *string } `json:"member"`
		} `json:"mentions"`
	}
	if err := json.Unmarshal(gw.until("MESSAGE_CREATE").D, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Mentions) != 1 || got.Mentions[0].ID != bob || got.Mentions[0].Member == nil ||
		got.Mentions[0].Member.Nick == nil || *got.Mentions[0].Member.Nick != "Bobby" {
		t.Errorf("mentions %+v, want bob with member nick Bobby", got.Mentions)
	}
	if got.Member.Nick == nil || *got.Member.Nick != "Al" {
		t.Errorf("author member nick %v, want Al", got.Member.Nick)
	}
}

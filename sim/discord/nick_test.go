package discordsim

import (
	"testing"
)

// TestSetNickShowsInMessages: a member's nickname shows where Discord shows it, in the member
// objects of a message: its author's and, for each user it mentions, the mention's "member".
func TestSetNickShowsInMessages(t *testing.T) {
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
	m, err := w.sim.Post(ctx, w.alice, w.text, "hi "+MentionUser(bob))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Member   struct{ Nick *string } `json:"member"`
		Mentions []struct {
			ID     UserID
			Member *struct{ Nick *string } `json:"member"`
		} `json:"mentions"`
	}
	rest(t, w.sim, "GET", "/api/v10/channels/"+string(w.text)+"/messages/"+string(m.ID), "Bot "+w.sim.Token(), nil, &got)
	if len(got.Mentions) != 1 || got.Mentions[0].ID != bob || got.Mentions[0].Member == nil ||
		got.Mentions[0].Member.Nick == nil || *got.Mentions[0].Member.Nick != "Bobby" {
		t.Errorf("mentions %+v, want bob with member nick Bobby", got.Mentions)
	}
	if got.Member.Nick == nil || *got.Member.Nick != "Al" {
		t.Errorf("author member nick %v, want Al", got.Member.Nick)
	}
}

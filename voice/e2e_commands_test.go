package voice_test

import (
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/config"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/voice"
)

// TestCommandsJoinLeave: "!join" joins the member's voice channel and
// "/leave" leaves, each answered; wired as cmd/banter wires them.
func TestCommandsJoinLeave(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	w.sess.AddHandler(func(s *discordgo.Session, m *discordgo.MessageCreate) { w.svc.HandleMessage(w.ctx, s, m.Message) })
	w.sess.AddHandler(func(s *discordgo.Session, ic *discordgo.InteractionCreate) {
		w.svc.HandleInteraction(w.ctx, s, ic.Interaction)
	})
	if _, err := w.sess.ApplicationCommandBulkOverwrite(w.botID, "", w.svc.Commands()); err != nil {
		t.Fatal(err)
	}
	w.member("alice")
	// The bot learns alice's voice state from the gateway.
	deadline := time.Now().Add(guard)
	for time.Now().Before(deadline) {
		if voice.VoiceChannelOf(w.sess.State, string(w.guild), string(w.users["alice"])) == string(w.vc) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	q, err := w.dsim.Post(w.ctx, w.users["alice"], w.text, "!join")
	if err != nil {
		t.Fatal(err)
	}
	reply, err := simtest.WaitMessage(w.ctx, w.dsim, func(m discordsim.Message) bool {
		return m.Reference != nil && m.Reference.MessageID == q.ID
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(reply.Content, "Joined") || w.svc.Channel(string(w.guild)) != string(w.vc) {
		t.Fatalf("!join: %q, in %q", reply.Content, w.svc.Channel(string(w.guild)))
	}
	ic, err := w.dsim.InvokeCommand(w.users["alice"], w.text, "leave")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := simtest.WaitInteractionResponse(w.ctx, w.dsim, ic.ID)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Type != discordsim.InteractionCallbackType(discordgo.InteractionResponseDeferredChannelMessageWithSource) {
		t.Errorf("/leave answered with %v, want a deferred (ephemeral) answer", resp.Type)
	}
	deadline = time.Now().Add(guard)
	for w.svc.Channel(string(w.guild)) != "" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if w.svc.Channel(string(w.guild)) != "" {
		t.Fatal("still in voice after /leave")
	}
}

// TestLongUtteranceChunksMerged: speech longer than maxUtteranceMs is cut
// into chunks, each transcribed, and the turn carries the merged transcript.
func TestLongUtteranceChunksMerged(t *testing.T) {
	t.Parallel()
	w := newWorld(t, func(c *config.Config) {
		c.Voice.Endpointing.MaxUtteranceMs = 4000
		c.Voice.ReplyEagerness = 0
	})
	alice := w.member("alice")
	w.join()
	w.osim.QueueTranscripts("so yesterday I went to the store", "and they were out of everything", "and then it started raining")
	w.play(alice, "long-story")
	w.waitLog(`"msg":"stt_pipeline_reply_denied"`)
	if w.logs.Count(`"transcript":"so yesterday I went to the store and they were out of everything and then it started raining"`) == 0 {
		t.Errorf("no merged transcript in the logs")
	}
	if n := len(w.osim.RequestsFor(openaisim.EndpointTranscriptions)); n < 3 {
		t.Errorf("%d transcription requests, want one per chunk (3)", n)
	}
}

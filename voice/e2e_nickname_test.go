package voice_test

import (
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	openaisim "github.com/banterbot/banter/sim/openai"
)

// TestNicknameAddressesBotInVoice: with the bot renamed "Jarvis" in the guild (its nickname, set
// as an admin would), "hey jarvis, …" takes the direct-address fast path with the signal
// name_nickname, the reply's instructions say what the server calls it and speech recognition
// is prompted with it; once the nickname
// is cleared the same words are not its name (the classifier, here saying NO, decides).
func TestNicknameAddressesBotInVoice(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil, genRule("Sunny."), classifierRule("NO"))
	renamed := make(chan string, 4)
	remove := w.sess.AddHandler(func(_ *discordgo.Session, u *discordgo.GuildMemberUpdate) {
		if u.Member != nil && u.User != nil && u.User.ID == w.botID {
			renamed <- u.Nick // the state holds it before handlers run
		}
	})
	defer remove()
	setNick := func(nick string) {
		t.Helper()
		if err := w.dsim.SetNick(w.guild, w.dsim.BotID(), nick); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-renamed:
			if got != nick {
				t.Fatalf("GUILD_MEMBER_UPDATE nick %q, want %q", got, nick)
			}
		case <-w.ctx.Done():
			t.Fatalf("no GUILD_MEMBER_UPDATE for nick %q", nick)
		}
	}
	setNick("Jarvis")
	alice, bob := w.member("alice"), w.member("bob")
	w.join()

	w.osim.QueueTranscripts("hey jarvis, what's the weather like today?")
	w.play(alice, "hey-banter-weather")
	w.waitLog(`"msg":"stt_pipeline_reply_spoken"`)
	ev := w.waitEvent("voice_turn_addressing")
	if ev["reason"] != "direct_address_fast_path" || ev["signal"] != "name_nickname" {
		t.Errorf("hey jarvis: %v/%v, want direct_address_fast_path/name_nickname", ev["reason"], ev["signal"])
	}
	gens := w.streamed()
	if len(gens) != 1 || !strings.Contains(gens[0].Instructions, `In this server you are called "Jarvis"`) {
		t.Errorf("%d generations; the instructions do not name the nickname", len(gens))
	}
	stt := w.osim.RequestsFor(openaisim.EndpointTranscriptions)
	if len(stt) == 0 {
		t.Error("no transcription request")
	}
	for _, r := range stt {
		if r.TranscriptionPrompt != "banter, Jarvis" {
			t.Errorf("recognition prompt %q, want the name and the nickname", r.TranscriptionPrompt)
		}
	}

	setNick("")
	w.osim.QueueTranscripts("hey jarvis, is it going to rain tomorrow?")
	w.play(bob, "hey-banter-weather")
	w.waitLog(`"msg":"stt_pipeline_reply_denied"`)
	events := w.logs.Events("voice_turn_addressing")
	if last := events[len(events)-1]; last["signal"] == "name_nickname" || last["reason"] == "direct_address_fast_path" {
		t.Errorf("after the nickname was cleared: %v/%v", last["reason"], last["signal"])
	}
}

package discordsim

import (
	"bytes"
	"encoding/hex"
	"math"
	"testing"

	"github.com/banterbot/banter/sim/discord/voicesim"
	"github.com/banterbot/banter/sim/discord/voicesim/voicetest"
)

func sine(freq float64, frames int) []int16 {
	pcm := make([]int16, frames*960*2)
	for i := 0; i < len(pcm)/2; i++ {
		v := int16(10000 * math.Sin(2*math.Pi*freq*float64(i)/48000))
		pcm[2*i], pcm[2*i+1] = v, v
	}
	return pcm
}

// TestDiscordJSVoiceThroughGateway has discord.js join voice through its
// own guild adapter over the simulated main gateway (op 4 →
// VOICE_STATE_UPDATE → VOICE_SERVER_UPDATE), connect to voicesim and
// exchange audio with a simulated member both ways, then leave.
func TestDiscordJSVoiceThroughGateway(t *testing.T) {
	vs := voicetest.Serve(t)
	w := newWorld(t, WithVoiceSim(vs))
	ctx := testCtx(t)
	member, err := w.sim.JoinVoiceMember(ctx, w.alice, w.voice, voicesim.MemberOptions{})
	if err != nil {
		t.Fatal(err)
	}

	n := startNode(t, "voice.mjs",
		"SIM_API="+w.sim.APIBaseURL()+"/api",
		"SIM_TOKEN="+w.sim.Token(),
		"SIM_GUILD="+string(w.guild),
		"SIM_VOICE_CHANNEL="+string(w.voice),
		"SIM_PEER="+string(w.alice),
		"NODE_EXTRA_CA_CERTS="+vs.CAFile(),
	)
	n.waitContent("ready", "")
	st, ok := w.sim.VoiceStateOf(w.guild, w.sim.BotID())
	if !ok || st.Channel != w.voice || st.SelfDeaf {
		t.Fatalf("bot voice state %+v %v", st, ok)
	}

	frames, err := voicesim.EncodePCM(sine(660, 10))
	if err != nil {
		t.Fatal(err)
	}
	if err := member.PlayOpus(ctx, frames); err != nil {
		t.Fatal(err)
	}
	var got [][]byte
	n.wait("the member's opus", func(l nodeLine) bool {
		if l.Event == "opus" {
			var e struct{ Hex string }
			l.decode(t, &e)
			b, _ := hex.DecodeString(e.Hex)
			got = append(got, b)
		}
		return len(got) >= len(frames)
	})
	for i := range frames {
		if !bytes.Equal(got[i], frames[i]) {
			t.Fatalf("frame %d differs", i)
		}
	}

	n.send("play")
	if err := member.WaitHeard(ctx, string(w.sim.BotID()), 20); err != nil {
		t.Fatal(err)
	}
	n.waitContent("played", "")

	leaves := w.sim.CountGateway(GatewayVoiceState)
	n.send("quit")
	n.waitContent("left", "")
	if _, err := waitGateway(ctx, w.sim, GatewayVoiceState, leaves+1); err != nil {
		t.Fatal(err)
	}
	n.exit()
	if _, ok := w.sim.VoiceStateOf(w.guild, w.sim.BotID()); ok {
		t.Fatal("the bot is still in voice after destroy")
	}
}

package control_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/wav"
	"github.com/banterbot/banter/sim/discord/control"
)

// TestControlBotMember: a script puts a music bot in the voice channel. The member created
// with "bot": true is listed as a bot and delivered with user.bot, as Discord delivers it, in
// REST's member and in VOICE_STATE_UPDATE's member when it joins voice; it plays music
// (music=SECONDS), and a song with a WAV body as its vocals.
func TestControlBotMember(t *testing.T) {
	f := standalone(t, control.Options{})
	ctl := f["control API"]
	g := botGateway(t, f)

	type member struct {
		ID, Name, Token string
		Bot             bool
	}
	var dj member
	if st := call(t, "POST", ctl+"/members", map[string]any{"name": "dj", "bot": true}, &dj); st != 201 || !dj.Bot || dj.ID == "" {
		t.Fatalf("create a bot member: %d %+v", st, dj)
	}
	var members []member
	call(t, "GET", ctl+"/members", nil, &members)
	kinds := map[string]bool{}
	for _, m := range members {
		kinds[m.Name] = m.Bot
	}
	if len(members) != 2 || !kinds["dj"] || kinds["alice"] {
		t.Errorf("members: %+v, want alice (a person) and dj (a bot)", members)
	}

	// REST: GET /guilds/{guild}/members/{user}, as banter looks up a speaker it does not know.
	req, _ := http.NewRequestWithContext(t.Context(), "GET", f["API base URL"]+"/api/v10/guilds/"+f["guild"]+"/members/"+dj.ID, nil)
	req.Header.Set("Authorization", "Bot "+f["bot token"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var got struct {
		User struct {
			ID  string `json:"id"`
			Bot bool   `json:"bot"`
		} `json:"user"`
	}
	if err := json.Unmarshal(raw, &got); err != nil || resp.StatusCode != 200 || got.User.ID != dj.ID || !got.User.Bot {
		t.Errorf("GET member: %d %s", resp.StatusCode, raw)
	}

	// Voice: the bot's gateway sees the music bot join with member.user.bot.
	if st := call(t, "POST", ctl+"/voice/join", map[string]any{"as": "dj", "channel": "Voice"}, nil); st != 200 {
		t.Fatalf("join voice: %d", st)
	}
	vs := g.until("the music bot's VOICE_STATE_UPDATE", func(fr frame) bool {
		return fr.T == "VOICE_STATE_UPDATE" && strings.Contains(string(fr.D), `"user_id":"`+dj.ID+`"`)
	})
	var state struct {
		Member struct {
			User struct {
				Bot bool `json:"bot"`
			} `json:"user"`
		} `json:"member"`
	}
	if err := json.Unmarshal(vs.D, &state); err != nil || !state.Member.User.Bot {
		t.Errorf("VOICE_STATE_UPDATE of a bot: %s", vs.D)
	}

	var played struct {
		PlayedMs int64 `json:"played_ms"`
	}
	if st := call(t, "POST", ctl+"/voice/play?as=dj&music=0.4", nil, &played); st != 200 || played.PlayedMs != 400 {
		t.Errorf("play music: %d %+v", st, played)
	}
	vocals := make([]int16, 48000/5) // 200 ms of mono: shorter than the intro, heard in no song
	if st := call(t, "POST", ctl+"/voice/play?as=dj&music=0.3&seed=7", wav.Encode(pcm.Format{Rate: 48000, Channels: 1}, vocals), &played); st != 200 || played.PlayedMs != 300 {
		t.Errorf("play a song: %d %+v", st, played)
	}
	var stats map[string]uint64
	// (Alone in a DAVE call, the member has no sender key: only its talk spurts' ends reach the
	// server. With someone to hear it, everything does: voice and cmd/banter tests.)
	if call(t, "GET", ctl+"/voice/stats?as=dj", nil, &stats); stats["rtp"] == 0 {
		t.Errorf("the voice server got no RTP packet from the music bot: %v", stats)
	}
	for _, q := range []string{"music=soon", "music=0", "music=601", "music=1&seed=-1"} {
		var e struct{ Error string }
		if st := call(t, "POST", ctl+"/voice/play?as=dj&"+q, nil, &e); st != 400 || !strings.Contains(e.Error, "allowed values") {
			t.Errorf("%s: %d %q, want 400 naming the allowed values", q, st, e.Error)
		}
	}
	if st := call(t, "POST", ctl+"/voice/play?as=dj", nil, nil); st != 400 {
		t.Errorf("play with neither a WAV nor music: %d, want 400", st)
	}
}

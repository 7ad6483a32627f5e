package voicesim_test

import (
	"context"
	"fmt"
	"time"

	"github.com/banterbot/banter/sim/discord/voicesim"
)

// A test scripts a voice channel: the main gateway (or the test) authorizes
// the bot's session, a simulated human joins and talks, and the test
// checks what the human heard back.
func Example() {
	s, err := voicesim.New(voicesim.Options{})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// What VOICE_STATE_UPDATE / VOICE_SERVER_UPDATE hand the bot.
	_ = s.Authorize(voicesim.Session{GuildID: "1", ChannelID: "2", UserID: "10", SessionID: "s", Token: "t"})
	fmt.Println("bot dials wss://" + s.Endpoint() + "/?v=8 trusting " + s.CAFile())

	alice, err := s.JoinMember(ctx, voicesim.MemberOptions{GuildID: "1", ChannelID: "2", UserID: "11"})
	if err != nil {
		panic(err)
	}
	pcm := make([]int16, 48000*2) // one second of 48 kHz stereo
	_ = alice.PlayPCM(ctx, pcm)   // the bot's client receives this over RTP
	if err := alice.WaitHeard(ctx, "10", 25); err == nil {
		fmt.Println("alice heard", len(alice.HeardPCM("10"))/2, "samples from the bot")
	}
}

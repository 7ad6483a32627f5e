package voice

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/discord/voice/gateway"
	"github.com/banterbot/banter/discord/voice/transport"
	"github.com/banterbot/banter/sim/discord/voicesim"
	"github.com/banterbot/banter/sim/discord/voicesim/voicetest"
)

// TestAudioBothWays connects to the simulator in each transport mode and
// exchanges real Opus with a simulated member in both directions.
func TestAudioBothWays(t *testing.T) {
	checkGoroutines(t)
	tests := []struct {
		name  string
		modes []voicesim.Mode
		want  transport.Mode
		rt    int // Config.SendRealtimePriority (falls back without CAP_SYS_NICE)
	}{
		{"aes-gcm-preferred", []voicesim.Mode{voicesim.ModeXChaCha20Poly1305RTPSize, voicesim.ModeAES256GCMRTPSize}, transport.ModeAES256GCM, 0},
		{"xchacha-only-realtime-send", []voicesim.Mode{voicesim.ModeXChaCha20Poly1305RTPSize}, transport.ModeXChaCha20Poly1305, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := voicetest.Serve(t, voicesim.WithModes(tt.modes...))
			m := newMetrics()
			cfg := simConfig(t, s, testBot, m)
			cfg.SendRealtimePriority = tt.rt
			c := dial(t, cfg)
			if c.Mode() != tt.want || c.State() != StateReady {
				t.Fatalf("mode %v state %v, want %v ready", c.Mode(), c.State(), tt.want)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			member, err := s.JoinMember(ctx, voicesim.MemberOptions{GuildID: testGuild, ChannelID: testChannel, UserID: testHuman, FrameInterval: 2 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer member.Leave()

			// Member → bot.
			frames := opusFrames(t, 20)
			st := nextStream(t, c, testHuman)
			if err := member.PlayOpus(ctx, frames); err != nil {
				t.Fatal(err)
			}
			var got [][]byte
			var prev *Frame
			for len(got) < len(frames)+5 {
				select {
				case f := <-st.Frames():
					if f.UserID != testHuman || f.SSRC != member.SSRC() || f.Lost != 0 {
						t.Fatalf("frame %+v", f)
					}
					if prev != nil && (f.Sequence != prev.Sequence+1 || f.Timestamp != prev.Timestamp+960) {
						t.Fatalf("seq/ts %d/%d after %d/%d", f.Sequence, f.Timestamp, prev.Sequence, prev.Timestamp)
					}
					g := f.Clone()
					prev = &g
					got = append(got, g.Opus)
				case <-ctx.Done():
					t.Fatalf("received %d/%d frames", len(got), len(frames)+5)
				}
			}
			for i, f := range frames {
				if !bytes.Equal(got[i], f) {
					t.Fatalf("frame %d differs", i)
				}
			}
			for _, f := range got[len(frames):] {
				if string(f) != silenceFrame {
					t.Fatalf("trailing frame %x, want silence", f)
				}
			}

			// Bot → member, paced at 20 ms, then five silence frames.
			out := opusFrames(t, 10)
			start := time.Now()
			for _, f := range out {
				if err := c.SendOpus(ctx, f); err != nil {
					t.Fatal(err)
				}
			}
			if el := time.Since(start); el < 9*frameDuration {
				t.Errorf("10 frames took %v: not paced", el)
			}
			if err := c.StopSpeaking(ctx); err != nil {
				t.Fatal(err)
			}
			if err := member.WaitHeard(ctx, testBot, len(out)); err != nil {
				t.Fatalf("%v; server stats for the bot: %+v", err, s.UserStats(testBot))
			}
			heard := member.Heard(testBot)
			for i := range out {
				if !bytes.Equal(heard[i], out[i]) {
					t.Fatalf("member heard frame %d differently", i)
				}
			}
			waitFor(t, "silence frames", func() bool { return member.Stats().Silence >= 5 })
			if ms := member.Stats(); ms.DecryptFailures != 0 || ms.Malformed != 0 || ms.DecodeErrors != 0 {
				t.Errorf("member stats %+v", ms)
			}
			if n := value(m.packetsOut); n != float64(len(out)+5) {
				t.Errorf("packets out %v, want %d", n, len(out)+5)
			}
			if n := value(m.lost) + value(m.malformed) + value(m.decryptFailures); n != 0 {
				t.Errorf("lost/malformed/decrypt = %v", n)
			}
			if g := value(m.connections.WithLabelValues("ready")); g != 1 {
				t.Errorf("ready gauge %v", g)
			}
			c.Close()
			if !errors.Is(c.Err(), ErrClosed) {
				t.Errorf("Err after Close = %v", c.Err())
			}
			if g := value(m.connections); g != 0 {
				t.Errorf("connections gauge %v after close", g)
			}
			if err := c.SendOpus(ctx, out[0]); err == nil {
				t.Error("SendOpus after Close succeeded")
			}
		})
	}
}

// TestCloseCodes drives every close-code path through the simulator.
func TestCloseCodes(t *testing.T) {
	checkGoroutines(t)
	tests := []struct {
		name       string
		code       int // 0: drop the TCP connection without a close frame
		wantResume bool
		wantAction gateway.CloseAction
	}{
		{"drop-1006", 0, true, gateway.ActionResume},
		{"normal-1000", 1000, true, gateway.ActionResume},
		{"going-away-1001", 1001, true, gateway.ActionResume},
		{"server-crashed-4015", 4015, true, gateway.ActionResume},
		{"session-invalid-4006", 4006, false, gateway.ActionNewSession},
		{"session-timeout-4009", 4009, false, gateway.ActionNewSession},
		{"auth-failed-4004", 4004, false, gateway.ActionNewSession},
		{"server-not-found-4011", 4011, false, gateway.ActionBackoff},
		{"rate-limited-4021", 4021, false, gateway.ActionBackoff},
		{"disconnected-4014", 4014, false, gateway.ActionStop},
		{"call-terminated-4022", 4022, false, gateway.ActionStop},
		{"unknown-opcode-4001", 4001, false, gateway.ActionClientBug},
		{"decode-4002", 4002, false, gateway.ActionClientBug},
		{"not-authenticated-4003", 4003, false, gateway.ActionClientBug},
		{"already-authenticated-4005", 4005, false, gateway.ActionClientBug},
		{"unknown-protocol-4012", 4012, false, gateway.ActionClientBug},
		{"unknown-encryption-4016", 4016, false, gateway.ActionClientBug},
		{"dave-required-4017", 4017, false, gateway.ActionClientBug},
		{"bad-request-4020", 4020, false, gateway.ActionClientBug},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := voicetest.Serve(t)
			m := newMetrics()
			c := dial(t, simConfig(t, s, testBot, m))
			var err error
			if tt.code == 0 {
				err = s.DropVoice(testBot)
			} else {
				err = s.CloseVoice(testBot, tt.code)
			}
			if err != nil {
				t.Fatal(err)
			}
			code := tt.code
			if code == 0 {
				code = 1006
			}
			if tt.wantResume {
				waitFor(t, "reconnect counted", func() bool { return counterOf(m.reconnects, itoa(code)) == 1 })
				waitFor(t, "ready again", func() bool { return c.State() == StateReady })
				if c.Err() != nil {
					t.Fatalf("Err = %v", c.Err())
				}
				// The resumed socket works: a message sent now arrives.
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				member, err := s.JoinMember(ctx, voicesim.MemberOptions{GuildID: testGuild, ChannelID: testChannel, UserID: testHuman})
				if err != nil {
					t.Fatal(err)
				}
				defer member.Leave()
				nextStream(t, c, testHuman)
				return
			}
			select {
			case <-c.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("connection did not end")
			}
			var ce *CloseError
			if !errors.As(c.Err(), &ce) {
				t.Fatalf("Err = %v, want *CloseError", c.Err())
			}
			if int(ce.Code) != tt.code || ce.Action() != tt.wantAction {
				t.Errorf("CloseError %d %v, want %d %v", ce.Code, ce.Action(), tt.code, tt.wantAction)
			}
			if n := value(m.reconnects); n != 0 {
				t.Errorf("reconnect attempts %v after %d", n, tt.code)
			}
			if bug := strings.Contains(ce.Error(), "client bug"); bug != (tt.wantAction == gateway.ActionClientBug) {
				t.Errorf("error %q: client-bug wording %t for %v", ce.Error(), bug, tt.wantAction)
			}
			if _, ok := <-c.Streams(); ok {
				t.Error("streams channel open after end")
			}
			var sendErr *CloseError
			if err := c.SendOpus(context.Background(), []byte{0xFC, 0}); !errors.As(err, &sendErr) || sendErr.Code != ce.Code {
				t.Errorf("SendOpus after the end = %v, want the close error", err)
			}
		})
	}
}

func itoa(n int) string { return gateway.CloseCode(n).String()[:4] }

// TestDAVERequiredAtIdentify: without E2EE we advertise version 0 and a
// DAVE-only server refuses with 4017, a client bug reported clearly.
func TestDAVERequiredAtIdentify(t *testing.T) {
	checkGoroutines(t)
	s := voicetest.Serve(t, voicesim.WithRequireDAVE())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := Dial(ctx, simConfig(t, s, testBot, nil))
	var ce *CloseError
	if !errors.As(err, &ce) || ce.Code != gateway.CloseDAVERequired || ce.Action() != gateway.ActionClientBug {
		t.Fatalf("Dial err = %v, want 4017 client bug", err)
	}
}

func TestDialErrors(t *testing.T) {
	checkGoroutines(t)
	s := voicetest.Serve(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cfg := simConfig(t, s, testBot, nil)
	bad := cfg
	bad.Token = "not-a-token"
	_, err := Dial(ctx, bad)
	var ce *CloseError
	if !errors.As(err, &ce) || ce.Code != gateway.CloseAuthenticationFailed {
		t.Errorf("bad token: %v, want 4004", err)
	}
	noCA := cfg
	noCA.TLSConfig = nil
	if _, err := Dial(ctx, noCA); err == nil || errors.As(err, &ce) {
		t.Errorf("without the CA: %v, want a TLS error", err)
	}
}

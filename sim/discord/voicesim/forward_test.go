package voicesim

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"testing"
	"time"
)

// packetVariant builds the clear header and the plaintext for an opus
// frame, as different clients do (djs: plain; others: CSRC, header
// extension, RTP padding).
type packetVariant struct {
	name  string
	build func(seq uint16, ts, ssrc uint32, opus []byte) (hdr, plain []byte)
}

func baseHeader(b0 byte, seq uint16, ts, ssrc uint32) []byte {
	h := make([]byte, 12)
	h[0], h[1] = b0, 0x78
	binary.BigEndian.PutUint16(h[2:], seq)
	binary.BigEndian.PutUint32(h[4:], ts)
	binary.BigEndian.PutUint32(h[8:], ssrc)
	return h
}

var packetVariants = []packetVariant{
	{"plain", func(seq uint16, ts, ssrc uint32, opus []byte) ([]byte, []byte) {
		return baseHeader(0x80, seq, ts, ssrc), opus
	}},
	{"csrc", func(seq uint16, ts, ssrc uint32, opus []byte) ([]byte, []byte) {
		return append(baseHeader(0x81, seq, ts, ssrc), 0, 0, 0, 9), opus
	}},
	{"extension", func(seq uint16, ts, ssrc uint32, opus []byte) ([]byte, []byte) {
		// Preamble in the clear (AAD); the 2-word body is encrypted.
		h := append(baseHeader(0x90, seq, ts, ssrc), 0xBE, 0xDE, 0, 2)
		return h, append([]byte{0x10, 0xaa, 0, 0, 0x22, 1, 2, 0}, opus...)
	}},
	{"padding", func(seq uint16, ts, ssrc uint32, opus []byte) ([]byte, []byte) {
		return baseHeader(0xA0, seq, ts, ssrc), append(append([]byte(nil), opus...), 0, 0, 3)
	}},
	{"extension+padding+marker", func(seq uint16, ts, ssrc uint32, opus []byte) ([]byte, []byte) {
		h := append(baseHeader(0xB0, seq, ts, ssrc), 0xBE, 0xDE, 0, 1)
		h[1] |= 0x80
		return h, append(append([]byte{1, 2, 3, 4}, opus...), 2, 2)
	}},
}

func TestForwarding(t *testing.T) {
	modes := []Mode{ModeAES256GCMRTPSize, ModeXChaCha20Poly1305RTPSize}
	for _, sm := range modes {
		for _, rm := range modes {
			t.Run(sm.String()+"→"+rm.String(), func(t *testing.T) {
				s := serve(t)
				a := joinRaw(t, s, testSession("1100000000000000010", "1100000000000000003"), sm)
				b := joinRaw(t, s, testSession("1100000000000000011", "1100000000000000003"), rm)
				a.expect(OpClientsConnect)
				b.expect(OpClientsConnect)
				a.speak(1)
				var sp serverSpeakingPayload
				b.decode(b.expect(OpSpeaking), &sp)
				if sp.UserID != a.sess.UserID || sp.SSRC != a.ssrc || sp.Speaking != 1 {
					t.Fatalf("speaking relay %+v", sp)
				}
				for i, v := range packetVariants {
					opus := []byte{0xfc, byte(i), 0x55, 0x66}
					seq, ts := uint16(65534+i), uint32(0xffffff00+uint32(i)*960)
					hdr, plain := v.build(seq, ts, a.ssrc, opus)
					a.counter++
					if _, err := a.udp.WriteToUDP(clientSeal(t, sm, a.key, hdr, plain, a.counter), a.server); err != nil {
						t.Fatal(err)
					}
					pkt, ok := b.recvRTP(t, time.Minute)
					if !ok {
						t.Fatalf("%s: nothing forwarded", v.name)
					}
					gs, gts, gssrc, counter, payload := clientOpen(t, rm, b.key, pkt)
					if gs != seq || gts != ts || gssrc != a.ssrc || !bytes.Equal(payload, opus) {
						t.Errorf("%s: forwarded seq %d ts %d ssrc %d payload %x; want %d %d %d %x", v.name, gs, gts, gssrc, payload, seq, ts, a.ssrc, opus)
					}
					if counter != uint32(i+1) {
						t.Errorf("%s: receiver nonce counter %d, want %d", v.name, counter, i+1)
					}
				}
				// Nothing comes back to the sender: b received every packet, and
				// the forwarding unit sent one datagram per packet (RTP counts a
				// packet once its forwards are counted).
				waitFor(t, func() bool { return s.Stats().RTP == uint64(len(packetVariants)) })
				if st := s.Stats(); st.Forwarded != uint64(len(packetVariants)) {
					t.Errorf("stats %+v", st)
				}
			})
		}
	}
}

func TestForwardingRules(t *testing.T) {
	s := serve(t)
	a := joinRaw(t, s, testSession("1100000000000000010", "1100000000000000003"), ModeAES256GCMRTPSize)
	deaf := testSession("1100000000000000012", "1100000000000000003")
	deaf.SelfDeaf = true
	joinRaw(t, s, deaf, ModeAES256GCMRTPSize)
	joinRaw(t, s, testSession("1100000000000000013", "1100000000000000099"), ModeAES256GCMRTPSize) // another channel
	r := joinRaw(t, s, testSession("1100000000000000014", "1100000000000000003"), ModeAES256GCMRTPSize)
	a.expect(OpClientsConnect) // the deafened member; the other channel is not announced
	a.expect(OpClientsConnect) // r

	// RTP before op 5 is counted; it goes to nobody who has not been told the SSRC.
	a.sendOpus(t, []byte{0xfc, 1})
	waitFor(t, func() bool { return s.Stats().RTP == 1 }) // its forwarding is done
	if st := s.Stats(); st.Unannounced != 1 || st.Forwarded != 0 {
		t.Fatalf("RTP before op 5: %+v, want it counted as unannounced and forwarded to nobody", st)
	}
	if _, ok := s.Speaking(guild, a.sess.UserID); ok {
		t.Fatal("Speaking reports op 5 before any")
	}
	a.speak(5)
	if f, ok := s.Speaking(guild, a.sess.UserID); !ok || f != 5 {
		t.Fatalf("Speaking = %d, %v", f, ok)
	}
	a.sendOpus(t, []byte{0xfc, 2})
	waitFor(t, func() bool { return s.Stats().RTP == 2 })
	if pkt, ok := r.recvRTP(t, time.Minute); !ok {
		t.Fatal("announced RTP not forwarded")
	} else if _, _, _, _, p := clientOpen(t, r.mode, r.key, pkt); !bytes.Equal(p, []byte{0xfc, 2}) {
		t.Fatalf("forwarded %x", p)
	}
	// r got the packet and the forwarding unit sent one datagram for it: the
	// self-deafened member and the member of another channel got nothing.
	if st := s.Stats(); st.RTP != 2 || st.Forwarded != 1 || st.Unannounced != 1 {
		t.Fatalf("forwarded to a deafened member or another channel: %+v", st)
	}
}

func TestUDPCounters(t *testing.T) {
	s := serve(t)
	a := joinRaw(t, s, testSession("1100000000000000010", "1100000000000000003"), ModeAES256GCMRTPSize)
	a.speak(1)
	send := func(b []byte) {
		if _, err := a.udp.WriteToUDP(b, a.server); err != nil {
			t.Fatal(err)
		}
	}
	send([]byte{1, 0, 0, 0, 0, 0, 0, 0})               // djs keepalive
	send([]byte{0x81, 200, 0, 6, 0, 0, 0, 1, 9, 9, 9}) // RTCP SR
	send(bytes.Repeat([]byte{0x11}, 40))               // not RTP v2
	var wrong [32]byte
	send(clientSeal(t, ModeAES256GCMRTPSize, wrong, baseHeader(0x80, 1, 1, a.ssrc), []byte{0xfc}, 1)) // wrong key
	send(clientSeal(t, ModeAES256GCMRTPSize, a.key, baseHeader(0x80, 1, 1, 424242), []byte{0xfc}, 1)) // unknown SSRC
	send(clientSeal(t, ModeAES256GCMRTPSize, a.key, baseHeader(0xA0, 1, 1, a.ssrc), []byte{0xfc, 9}, 2))
	a.sendOpus(t, []byte{0xfc, 3})
	want := Stats{Packets: 8, IPDiscovery: 1, Keepalives: 1, RTCP: 1, RTP: 1, DecryptFailures: 1, Malformed: 2, UnknownSSRC: 1}
	waitFor(t, func() bool { return s.Stats() == want })
	if us := s.UserStats(a.sess.UserID); us.DecryptFailures != 1 || us.RTP != 1 || us.Malformed != 1 {
		t.Fatalf("user stats %+v", us)
	}
}

func sine(freq float64, frames int) []int16 {
	pcm := make([]int16, frames*frameSamples*channels)
	for i := 0; i < len(pcm)/2; i++ {
		v := int16(12000 * math.Sin(2*math.Pi*freq*float64(i)/sampleRate))
		pcm[2*i], pcm[2*i+1] = v, v
	}
	return pcm
}

// dominantFreq estimates the frequency of the left channel by zero
// crossings.
func dominantFreq(pcm []int16) float64 {
	cross := 0
	for i := 2; i < len(pcm); i += 2 {
		if (pcm[i-2] < 0) != (pcm[i] < 0) {
			cross++
		}
	}
	return float64(cross) / 2 / (float64(len(pcm)/2) / sampleRate)
}

func TestMembers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := serve(t)
	a := joinRaw(t, s, testSession("1100000000000000010", "1100000000000000003"), ModeXChaCha20Poly1305RTPSize)

	m, err := s.JoinMember(ctx, MemberOptions{GuildID: guild, ChannelID: "1100000000000000003", UserID: "1100000000000000011", FrameInterval: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var cc clientsConnectPayload
	a.decode(a.expect(OpClientsConnect), &cc)
	var sp serverSpeakingPayload
	a.decode(a.expect(OpSpeaking), &sp)
	if len(cc.UserIDs) != 1 || cc.UserIDs[0] != m.UserID() || sp.SSRC != m.SSRC() || sp.UserID != m.UserID() || sp.Speaking != 0 {
		t.Fatalf("member announcement %+v %+v", cc, sp)
	}

	t.Run("client hears member", func(t *testing.T) {
		frames := [][]byte{{0xfc, 1, 2}, {0xfc, 3, 4}, {0xfc, 5, 6}}
		if err := m.PlayOpus(ctx, frames); err != nil {
			t.Fatal(err)
		}
		var got [][]byte
		var seqs []uint16
		for len(got) < len(frames)+silenceTrailing {
			pkt, ok := a.recvRTP(t, time.Minute)
			if !ok {
				t.Fatalf("got %d packets", len(got))
			}
			seq, _, ssrc, _, p := clientOpen(t, a.mode, a.key, pkt)
			if ssrc != m.SSRC() {
				t.Fatalf("ssrc %d", ssrc)
			}
			got, seqs = append(got, p), append(seqs, seq)
		}
		for i, f := range frames {
			if !bytes.Equal(got[i], f) {
				t.Errorf("frame %d = %x, want %x", i, got[i], f)
			}
		}
		for i := len(frames); i < len(got); i++ {
			if !isSilence(got[i]) {
				t.Errorf("trailing frame %d = %x, want silence", i, got[i])
			}
		}
		for i := 1; i < len(seqs); i++ {
			if seqs[i] != seqs[i-1]+1 {
				t.Errorf("seq %d after %d", seqs[i], seqs[i-1])
			}
		}
		// op 5 speaking 1 then 0 around the burst.
		var on, off serverSpeakingPayload
		a.decode(a.expect(OpSpeaking), &on)
		a.decode(a.expect(OpSpeaking), &off)
		if on.Speaking != 1 || off.Speaking != 0 {
			t.Errorf("speaking %d then %d", on.Speaking, off.Speaking)
		}
	})

	t.Run("member hears client", func(t *testing.T) {
		a.speak(1)
		frames := [][]byte{{0xfc, 0xa, 1}, {0xfc, 0xb, 2}}
		for _, f := range frames {
			a.sendOpus(t, f)
		}
		a.sendOpus(t, []byte(silence))
		if err := m.WaitHeard(ctx, a.sess.UserID, len(frames)); err != nil {
			t.Fatal(err)
		}
		got := m.Heard(a.sess.UserID)
		if len(got) != 2 || !bytes.Equal(got[0], frames[0]) || !bytes.Equal(got[1], frames[1]) {
			t.Fatalf("heard %x", got)
		}
		waitFor(t, func() bool { return m.Stats().Silence == 1 })
	})

	t.Run("members hear each other as PCM", func(t *testing.T) {
		m2, err := s.JoinMember(ctx, MemberOptions{GuildID: guild, ChannelID: "1100000000000000003", UserID: "1100000000000000012", Mode: ModeXChaCha20Poly1305RTPSize, FrameInterval: 2 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		a.expect(OpClientsConnect)
		a.expect(OpSpeaking)
		if err := m2.PlayPCM(ctx, sine(440, 25)); err != nil {
			t.Fatal(err)
		}
		if err := m.WaitHeard(ctx, m2.UserID(), 25); err != nil {
			t.Fatal(err)
		}
		pcm := m.HeardPCM(m2.UserID())
		if len(pcm) != 25*frameSamples*channels {
			t.Fatalf("pcm len %d", len(pcm))
		}
		if f := dominantFreq(pcm[len(pcm)/2:]); f < 400 || f > 480 {
			t.Fatalf("heard %.0f Hz, want 440", f)
		}
		m2.Leave()
		a.expect(OpSpeaking) // speaking 1
		a.expect(OpSpeaking) // speaking 0
		var dc clientDisconnectPayload
		a.decode(a.expect(OpClientDisconnect), &dc)
		if dc.UserID != m2.UserID() {
			t.Fatalf("op 13 %+v", dc)
		}
	})

	t.Run("wait heard honours ctx", func(t *testing.T) {
		c, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
		defer cancel()
		if err := m.WaitHeard(c, "nobody", 1); err == nil {
			t.Fatal("WaitHeard returned nil for a silent user")
		}
	})

	t.Run("late joiner learns members", func(t *testing.T) {
		b := joinRaw(t, s, testSession("1100000000000000014", "1100000000000000003"), ModeAES256GCMRTPSize)
		// Right after the session description: op 11 listing everyone and op 5 per member.
		var all clientsConnectPayload
		b.decode(b.expect(OpClientsConnect), &all)
		if len(all.UserIDs) != 2 {
			t.Fatalf("clients connect %v", all.UserIDs)
		}
		got := map[uint32]string{}
		for range 2 {
			var msp serverSpeakingPayload
			b.decode(b.expect(OpSpeaking), &msp)
			got[msp.SSRC] = msp.UserID
		}
		if got[m.SSRC()] != m.UserID() || got[a.ssrc] != a.sess.UserID {
			t.Fatalf("op 5 mappings %v", got)
		}
	})
}

func TestJoinMemberErrors(t *testing.T) {
	s := serve(t)
	if _, err := s.JoinMember(context.Background(), MemberOptions{GuildID: guild}); err == nil {
		t.Fatal("JoinMember without ids succeeded")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.JoinMember(ctx, MemberOptions{GuildID: guild, ChannelID: "1", UserID: "2"}); err == nil {
		t.Fatal("JoinMember with a cancelled ctx succeeded")
	}
}

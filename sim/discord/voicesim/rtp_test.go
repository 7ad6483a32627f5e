package voicesim

import (
	"bytes"
	"context"
	"errors"
	"net"
	"testing"
)

func TestTransportOpen(t *testing.T) {
	var key [32]byte
	for i := range key {
		key[i] = byte(i)
	}
	opus := []byte{0xfc, 0xff, 0xfe, 0x01}
	for _, mode := range []Mode{ModeAES256GCMRTPSize, ModeXChaCha20Poly1305RTPSize} {
		tr, err := newTransport(mode, key)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range packetVariants {
			t.Run(mode.String()+"/"+v.name, func(t *testing.T) {
				hdr, plain := v.build(7, 960, 42, opus)
				pkt := clientSeal(t, mode, key, hdr, plain, 0xdeadbeef)
				var h rtpHeader
				if err := parseRTPHeader(&h, pkt); err != nil {
					t.Fatal(err)
				}
				if h.Seq != 7 || h.Timestamp != 960 || h.SSRC != 42 || h.PT != opusPT || h.ClearLen != len(hdr) {
					t.Fatalf("header %+v", h)
				}
				got, err := tr.open(new([24]byte), nil, &h, pkt)
				if err != nil || !bytes.Equal(got, opus) {
					t.Fatalf("open = %x, %v", got, err)
				}
				// Any flipped bit in the authenticated part fails.
				for _, i := range []int{1, len(hdr) - 1, len(hdr), len(pkt) - 5, len(pkt) - 1} {
					bad := append([]byte(nil), pkt...)
					bad[i] ^= 0x01
					var bh rtpHeader
					if parseRTPHeader(&bh, bad) != nil {
						continue
					}
					if _, err := tr.open(new([24]byte), nil, &bh, bad); err == nil {
						t.Errorf("flipped byte %d accepted", i)
					}
				}
			})
		}
		t.Run(mode.String()+"/seal round trip", func(t *testing.T) {
			pkt := tr.appendRTP(new([24]byte), nil, 65535, 1<<31, 9, opus, 1)
			_, _, ssrc, counter, got := clientOpen(t, mode, key, pkt)
			if ssrc != 9 || counter != 1 || !bytes.Equal(got, opus) {
				t.Fatalf("ssrc %d counter %d payload %x", ssrc, counter, got)
			}
		})
	}
	if _, err := newTransport(ModeUnknown, key); !errors.Is(err, errMode) {
		t.Fatalf("unknown mode: %v", err)
	}
}

func TestParseRTPHeaderErrors(t *testing.T) {
	tests := []struct {
		name string
		pkt  []byte
		err  error
	}{
		{"short", []byte{0x80, 0x78, 0, 1}, errShort},
		{"version 1", append([]byte{0x40, 0x78}, make([]byte, 40)...), errRTPVersion},
		{"no room for tag", append([]byte{0x80, 0x78}, make([]byte, 20)...), errShort},
		{"csrc past end", append([]byte{0x8f, 0x78}, make([]byte, 40)...), errShort},
		{"extension past end", append([]byte{0x90, 0x78}, make([]byte, 10)...), errShort},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h rtpHeader
			if err := parseRTPHeader(&h, tt.pkt); !errors.Is(err, tt.err) {
				t.Fatalf("err %v, want %v", err, tt.err)
			}
		})
	}
}

func TestOpenBadPlaintext(t *testing.T) {
	var key [32]byte
	tr, _ := newTransport(ModeAES256GCMRTPSize, key)
	tests := []struct {
		name  string
		hdr   []byte
		plain []byte
		err   error
	}{
		{"padding count zero", baseHeader(0xA0, 1, 1, 1), []byte{1, 2, 0}, errPadding},
		{"padding longer than payload", baseHeader(0xA0, 1, 1, 1), []byte{1, 9}, errPadding},
		{"padding on empty", baseHeader(0xA0, 1, 1, 1), nil, errPadding},
		{"extension body too long", append(baseHeader(0x90, 1, 1, 1), 0xBE, 0xDE, 0, 9), []byte{1, 2}, errShort},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pkt := clientSeal(t, ModeAES256GCMRTPSize, key, tt.hdr, tt.plain, 1)
			var h rtpHeader
			if err := parseRTPHeader(&h, pkt); err != nil {
				t.Fatal(err)
			}
			if _, err := tr.open(new([24]byte), nil, &h, pkt); !errors.Is(err, tt.err) {
				t.Fatalf("err %v, want %v", err, tt.err)
			}
		})
	}
}

func TestIPDiscovery(t *testing.T) {
	resp := appendIPDiscoveryResponse(nil, 0x01020304, "127.0.0.1", 50000)
	want := make([]byte, 74)
	copy(want, []byte{0, 2, 0, 70, 1, 2, 3, 4})
	copy(want[8:], "127.0.0.1")
	want[72], want[73] = 0xc3, 0x50
	if !bytes.Equal(resp, want) {
		t.Fatalf("response\n%x\nwant\n%x", resp, want)
	}
	req := make([]byte, 74)
	copy(req, []byte{0, 1, 0, 70, 0, 0, 0, 9})
	if ssrc, ok := isIPDiscoveryRequest(req); !ok || ssrc != 9 {
		t.Fatal("request not recognised")
	}
	for _, bad := range [][]byte{req[:73], append([]byte{0, 2}, req[2:]...), append([]byte{0, 1, 0, 71}, req[4:]...)} {
		if _, ok := isIPDiscoveryRequest(bad); ok {
			t.Fatalf("accepted %x", bad[:4])
		}
	}
}

// FuzzServerUDP feeds arbitrary datagrams into the server's UDP input path
// (faults, classification, decryption, forwarding) with a live session
// that has a key, a peer to forward to and ToServer faults. The server must
// neither panic nor lose count: every datagram lands in exactly one
// counter.
func FuzzServerUDP(f *testing.F) {
	s := serve(f)
	ctx := context.Background()
	tx, err := s.JoinMember(ctx, MemberOptions{GuildID: guild, ChannelID: "c", UserID: "tx"})
	if err != nil {
		f.Fatal(err)
	}
	if _, err := s.JoinMember(ctx, MemberOptions{GuildID: guild, ChannelID: "c", UserID: "rx"}); err != nil {
		f.Fatal(err)
	}
	sink, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { sink.Close() })
	from := sink.LocalAddr().(*net.UDPAddr)

	valid := tx.tr.appendRTP(new([24]byte), nil, 1, 960, tx.SSRC(), []byte{0xfc, 1}, 1)
	hdr, plain := packetVariants[4].build(2, 1920, tx.SSRC(), []byte{0xfc, 2})
	ext := clientSeal(f, ModeAES256GCMRTPSize, tx.tr.key, hdr, plain, 2)
	disc := make([]byte, 74)
	copy(disc, []byte{0, 1, 0, 70})
	for _, seed := range [][]byte{valid, ext, disc, {1, 0, 0, 0, 0, 0, 0, 0}, {0x81, 200, 0, 6, 0, 0, 0, 1, 9}, valid[:20], nil} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	sc := &udpScratch{}
	f.Fuzz(func(t *testing.T, pkt []byte, faulty bool) {
		if faulty {
			s.SetFaults("tx", ToServer, Faults{ReorderPercent: 50, DuplicatePercent: 20, GarbagePercent: 20, LossPercent: 10, Seed: 1})
		} else {
			s.SetFaults("tx", ToServer, Faults{})
		}
		before := s.Stats()
		s.handleDatagram(sc, pkt, from)
		after := s.Stats()
		if after.Packets <= before.Packets && len(pkt) > 0 && !faulty {
			t.Fatalf("datagram not counted: %+v", after)
		}
		classified := func(st Stats) uint64 {
			return st.IPDiscovery + st.Keepalives + st.RTCP + st.RTP + st.DecryptFailures + st.Malformed + st.UnknownSSRC + st.FaultDropped
		}
		if classified(after) != after.Packets {
			t.Fatalf("counters do not add up: %+v", after)
		}
	})
}

package voicesim

import (
	"strconv"
	"testing"
)

// BenchmarkForward measures the forwarding unit per incoming packet (parse,
// decrypt, re-encrypt and send to each receiver over loopback UDP), against
// a baseline of the same cryptography alone (one open plus one seal per
// receiver) measured in the same run.
func BenchmarkForward(b *testing.B) {
	opus := make([]byte, 120)
	for _, n := range []int{1, 3} {
		s := serve(b)
		a := joinRaw(b, s, testSession("1100000000000000010", "c"), ModeAES256GCMRTPSize)
		for i := range n {
			r := joinRaw(b, s, testSession("12000000000000000"+strconv.Itoa(10+i), "c"), ModeAES256GCMRTPSize)
			r.ws.SetReadLimit(1 << 20)
			a.expect(OpClientsConnect)
		}
		a.speak(1)
		hdr := baseHeader(0x80, 1, 960, a.ssrc)
		pkt := clientSeal(b, ModeAES256GCMRTPSize, a.key, hdr, opus, 1)
		from := a.udp.LocalAddr().(*netUDPAddr)
		sc := &udpScratch{plain: make([]byte, 0, 2048), out: make([]byte, 0, 2048)}

		b.Run("forward/receivers="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s.processDatagram(sc, pkt, from)
			}
		})
		b.Run("baseline-crypto/receivers="+strconv.Itoa(n), func(b *testing.B) {
			tr, _ := newTransport(ModeAES256GCMRTPSize, a.key)
			var h rtpHeader
			plain := make([]byte, 0, 2048)
			nb := new([24]byte)
			out := make([]byte, 0, 2048)
			b.ReportAllocs()
			for b.Loop() {
				parseRTPHeader(&h, pkt)
				p, err := tr.open(nb, plain[:0], &h, pkt)
				if err != nil {
					b.Fatal(err)
				}
				for i := range n {
					out = tr.appendRTP(nb, out[:0], h.Seq, h.Timestamp, h.SSRC, p, uint32(i))
				}
			}
		})
	}
}

// TestForwardAllocs locks in the zero-allocation forwarding path: parse,
// decrypt, re-encrypt for each receiver and send, with the UDP loop's
// reused scratch.
func TestForwardAllocs(t *testing.T) {
	s := serve(t)
	a := joinRaw(t, s, testSession("1100000000000000010", "c"), ModeAES256GCMRTPSize)
	joinRaw(t, s, testSession("1100000000000000011", "c"), ModeXChaCha20Poly1305RTPSize)
	a.expect(OpClientsConnect)
	a.speak(1)
	pkt := clientSeal(t, ModeAES256GCMRTPSize, a.key, baseHeader(0x80, 1, 960, a.ssrc), make([]byte, 120), 1)
	from := a.udp.LocalAddr().(*netUDPAddr)
	sc := &udpScratch{plain: make([]byte, 0, 2048), out: make([]byte, 0, 2048)}
	s.processDatagram(sc, pkt, from) // warm up (per-user stats entry, target slice)
	if n := testing.AllocsPerRun(200, func() { s.processDatagram(sc, pkt, from) }); n != 0 {
		t.Fatalf("forwarding allocates %.1f times per packet", n)
	}
	if st := s.Stats(); st.Forwarded < 200 {
		t.Fatalf("stats %+v", st)
	}
}

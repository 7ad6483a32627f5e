package voice

import (
	"bytes"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/banterbot/banter/discord/voice/rtp"
	"github.com/banterbot/banter/discord/voice/transport"
	"github.com/prometheus/client_golang/prometheus"
)

// offlineConn is a Conn with keys and one known speaker but no sockets, to
// drive the receive path (Conn.receive) directly in benchmarks and fuzzing.
func offlineConn(tb testing.TB, mode transport.Mode, m *Metrics, e E2EE) (*Conn, *Stream, *transport.Cipher) {
	tb.Helper()
	key := bytes.Repeat([]byte{7}, transport.KeySize)
	recv, err := transport.NewCipher(mode, key)
	if err != nil {
		tb.Fatal(err)
	}
	send, _ := transport.NewCipher(mode, key)
	c := &Conn{
		m:       m,
		e2ee:    e,
		bySSRC:  map[uint32]*Stream{},
		streams: make(chan *Stream, 4),
		recvBuf: make([]byte, 0, 2048),
	}
	c.recvCipher = recv
	c.cfg.StreamDepth = 50
	c.mapSSRC(testHuman, 4242)
	return c, <-c.streams, send
}

func packet(tb testing.TB, c *transport.Cipher, seq uint16, frame []byte) []byte {
	h := rtp.Header{PayloadType: rtp.PayloadTypeOpus, SequenceNumber: seq, Timestamp: uint32(seq) * 960, SSRC: 4242}
	hdr, err := h.AppendMarshal(nil)
	if err != nil {
		tb.Fatal(err)
	}
	return c.Seal(nil, hdr, frame, uint32(seq)+1)
}

// TestReceiveZeroAllocs locks in that the steady-state receive path
// (filter, parse, lookup, decrypt, track, deliver) does not allocate.
func TestReceiveZeroAllocs(t *testing.T) {
	for _, mode := range []transport.Mode{transport.ModeAES256GCM, transport.ModeXChaCha20Poly1305} {
		c, st, send := offlineConn(t, mode, NewMetrics(prometheus.NewRegistry()), nil)
		pkts := make([][]byte, 1100)
		for i := range pkts {
			pkts[i] = packet(t, send, uint16(i), bytes.Repeat([]byte{0xFC}, 120))
		}
		i := 0
		allocs := testing.AllocsPerRun(1000, func() {
			c.receive(pkts[i])
			i++
			select {
			case <-st.Frames():
			default:
				t.Fatalf("packet %d not delivered", i-1)
			}
		})
		if allocs != 0 {
			t.Errorf("%v: receive allocates %v per packet", mode, allocs)
		}
	}
}

// naiveReceive is the allocating baseline a straightforward port would
// write: fresh header, fresh cipher state per packet, a copied frame.
func naiveReceive(key, pkt []byte, mode transport.Mode) (Frame, error) {
	if rtp.IsRTCP(pkt) {
		return Frame{}, errors.New("rtcp")
	}
	c, err := transport.NewCipher(mode, key)
	if err != nil {
		return Frame{}, err
	}
	h := new(rtp.Header)
	plain, err := c.Open(nil, h, pkt)
	if err != nil {
		return Frame{}, err
	}
	return Frame{SSRC: h.SSRC, Sequence: h.SequenceNumber, Timestamp: h.Timestamp, Opus: append([]byte(nil), plain...)}, nil
}

// BenchmarkReceivePath measures one datagram through Conn.receive, against
// the naive allocating baseline in the same run.
func BenchmarkReceivePath(b *testing.B) {
	for _, mode := range []transport.Mode{transport.ModeAES256GCM, transport.ModeXChaCha20Poly1305} {
		c, st, send := offlineConn(b, mode, NewMetrics(prometheus.NewRegistry()), nil)
		pkts := make([][]byte, 4096) // cache-resident; the jump back at the wrap is a restart, not loss
		for i := range pkts {
			pkts[i] = packet(b, send, uint16(i), bytes.Repeat([]byte{0xFC}, 120))
		}
		i := 0 // continues across runs (-count): the sequence must keep moving
		b.Run(mode.String()+"/conn", func(b *testing.B) {
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				c.receive(pkts[i%len(pkts)])
				i++
				select {
				case <-st.Frames():
				default:
					b.Fatalf("packet %d not delivered", i-1)
				}
			}
		})
		key := bytes.Repeat([]byte{7}, transport.KeySize)
		b.Run(mode.String()+"/naive", func(b *testing.B) {
			b.ReportAllocs()
			defer reportCPU(b)()
			i := 0
			for b.Loop() {
				if _, err := naiveReceive(key, pkts[i%len(pkts)], mode); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// reportCPU adds cpu-ns/op (process user+system CPU time per iteration) to
// a benchmark, a figure that stays meaningful when other processes compete
// for the cores and inflate the wall-clock ns/op.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// FuzzReceive feeds arbitrary datagrams to the whole receive path: no panic,
// and each datagram lands in exactly one outcome.
func FuzzReceive(f *testing.F) {
	_, _, send := offlineConn(f, transport.ModeAES256GCM, nil, nil)
	f.Add(packet(f, send, 1, []byte{0xF8, 0xFF, 0xFE}))
	f.Add([]byte{0x80, 0xC8, 0, 6, 0, 0, 0, 1, 0, 0, 0, 0})
	f.Add(transport.AppendKeepalive(nil, 1))
	f.Add([]byte{0x90, 0x78, 0, 1, 0, 0, 0, 2, 0, 0, 0x10, 0x92, 0xBE, 0xDE, 0xFF, 0xFF, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
	f.Fuzz(func(t *testing.T, pkt []byte) {
		m := NewMetrics(prometheus.NewRegistry())
		c, st, _ := offlineConn(t, transport.ModeAES256GCM, m, nil)
		c.receive(pkt)
		outcomes := value(m.dropped) + value(m.malformed) + value(m.decryptFailures) + float64(len(st.Frames()))
		if outcomes != 1 || value(m.packetsIn) != 1 {
			t.Fatalf("in %v, outcomes %v for %x", value(m.packetsIn), outcomes, pkt)
		}
	})
}

// TestReceiveVariants runs header variants other clients send through the
// whole receive path: CSRCs and the extension preamble in the AAD, the
// encrypted extension body skipped, padding stripped, marker ignored, and
// RTCP or other payload types dropped before decryption.
func TestReceiveVariants(t *testing.T) {
	opus := []byte{0xFC, 0x01, 0x02, 0x03}
	tests := []struct {
		name   string
		header rtp.Header
		plain  []byte // after the header: extension body || opus || padding
		want   []byte // delivered frame, nil if dropped
		reason string // drop reason when dropped
	}{
		{"plain", rtp.Header{}, opus, opus, ""},
		{"csrc", rtp.Header{CSRC: []uint32{9, 10}}, opus, opus, ""},
		{"extension", rtp.Header{Extension: true, ExtensionProfile: 0xBEDE, ExtensionLength: 2},
			append([]byte{0x10, 0xAA, 0, 0, 0x22, 1, 2, 0}, opus...), opus, ""},
		{"padding", rtp.Header{Padding: true}, append(append([]byte(nil), opus...), 0, 0, 3), opus, ""},
		{"all-and-marker", rtp.Header{Marker: true, Padding: true, Extension: true, ExtensionProfile: 0xBEDE, ExtensionLength: 1, CSRC: []uint32{7}},
			append(append([]byte{1, 2, 3, 4}, opus...), 2, 2), opus, ""},
		{"other-payload-type", rtp.Header{PayloadType: 96}, opus, nil, dropNotOpus},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMetrics(prometheus.NewRegistry())
			c, st, send := offlineConn(t, transport.ModeAES256GCM, m, nil)
			h := tt.header
			if h.PayloadType == 0 {
				h.PayloadType = rtp.PayloadTypeOpus
			}
			h.SequenceNumber, h.Timestamp, h.SSRC = uint16(i), 960, 4242
			hdr, err := h.AppendMarshal(nil)
			if err != nil {
				t.Fatal(err)
			}
			c.receive(send.Seal(nil, hdr, tt.plain, 1))
			if tt.want == nil {
				if len(st.Frames()) != 0 || counterOf(m.dropped, tt.reason) != 1 {
					t.Fatalf("not dropped as %s", tt.reason)
				}
				return
			}
			select {
			case f := <-st.Frames():
				if !bytes.Equal(f.Opus, tt.want) || f.Sequence != uint16(i) || f.UserID != testHuman {
					t.Fatalf("frame %+v", f)
				}
			default:
				t.Fatalf("not delivered (malformed %v, decrypt %v)", value(m.malformed), value(m.decryptFailures))
			}
		})
	}
	t.Run("rtcp", func(t *testing.T) {
		m := NewMetrics(prometheus.NewRegistry())
		c, st, send := offlineConn(t, transport.ModeAES256GCM, m, nil)
		sr := send.Seal(nil, []byte{0x80, 0xC8, 0, 6, 0, 0, 0x10, 0x92}, make([]byte, 20), 1)
		c.receive(sr)
		if len(st.Frames()) != 0 || counterOf(m.dropped, dropRTCP) != 1 || value(m.decryptFailures) != 0 {
			t.Fatal("RTCP not dropped before decryption")
		}
	})
}

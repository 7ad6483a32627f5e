package jitter

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
)

// pkt builds a packet whose payload encodes its sequence number, so tests
// can check that payloads come out with the right packet.
func pkt(ssrc uint32, seq uint16) Packet {
	return Packet{SSRC: ssrc, Seq: seq, Timestamp: uint32(seq) * 960, Payload: binary.BigEndian.AppendUint16([]byte{0xF8}, seq)}
}

// render formats an output: P<seq>, L<seq>x<n>, with R for a restart and
// +<seq> when a loss carries the following packet for FEC.
func render(t *testing.T, o Output) string {
	t.Helper()
	var s string
	switch o.Kind {
	case KindPacket:
		if got := binary.BigEndian.Uint16(o.Payload[1:]); got != o.Seq {
			t.Fatalf("packet %d carries payload of %d", o.Seq, got)
		}
		if o.Timestamp != uint32(o.Seq)*960 {
			t.Fatalf("packet %d has timestamp %d", o.Seq, o.Timestamp)
		}
		s = fmt.Sprintf("P%d", o.Seq)
	case KindLost:
		s = fmt.Sprintf("L%dx%d", o.Seq, o.Lost)
		if o.Payload != nil {
			s += fmt.Sprintf("+%d", binary.BigEndian.Uint16(o.Payload[1:]))
		}
	default:
		t.Fatalf("output kind %v", o.Kind)
	}
	if o.Restart {
		s += "R"
	}
	return s
}

func TestBuffer(t *testing.T) {
	const a, b = 1111, 2222
	type push struct {
		ssrc uint32
		seq  uint16
	}
	seqs := func(ssrc uint32, s ...uint16) []push {
		p := make([]push, len(s))
		for i, v := range s {
			p[i] = push{ssrc, v}
		}
		return p
	}
	tests := []struct {
		name    string
		pushes  []push
		drain   bool
		want    string // outputs of Pop after every push, then of Drain
		results string // non-accepted push results, by index
	}{
		{name: "in order", pushes: seqs(a, 1, 2, 3), want: "P1R P2 P3"},
		{name: "swap within window", pushes: seqs(a, 1, 3, 2, 4), want: "P1R P2 P3 P4"},
		{name: "reorder of three", pushes: seqs(a, 1, 4, 3, 2, 5), want: "P1R P2 P3 P4 P5"},
		{name: "single loss after window with FEC packet", pushes: seqs(a, 1, 3, 4, 5), want: "P1R L2x1+3 P3 P4 P5"},
		{name: "loss of two", pushes: seqs(a, 1, 4, 5, 6, 7), want: "P1R L2x2+4 P4 P5 P6 P7"},
		{name: "gap waits inside window", pushes: seqs(a, 1, 3, 4), want: "P1R"},
		{name: "drain releases held packets", pushes: seqs(a, 1, 3, 4), drain: true, want: "P1R L2x1+3 P3 P4"},
		{name: "duplicate held", pushes: seqs(a, 1, 3, 3, 2), want: "P1R P2 P3", results: "2:duplicate"},
		{name: "duplicate of output is late", pushes: seqs(a, 1, 2, 2, 3), want: "P1R P2 P3", results: "2:late"},
		{name: "late after loss", pushes: seqs(a, 1, 3, 4, 5, 2, 6), want: "P1R L2x1+3 P3 P4 P5 P6", results: "4:late"},
		{name: "wraparound", pushes: seqs(a, 65534, 65535, 1, 0, 2), want: "P65534R P65535 P0 P1 P2"},
		{name: "loss across wrap", pushes: seqs(a, 65535, 1, 2, 3), want: "P65535R L0x1+1 P1 P2 P3"},
		{name: "new ssrc restarts", pushes: append(seqs(a, 10, 11), seqs(b, 500, 501)...), want: "P10R P11 P500R P501", results: "2:restarted"},
		{name: "jump longer than capacity", pushes: seqs(a, 1, 2, 40), want: "P1R P2 L3x22 L25x15+40 P40"},
		{name: "huge jump restarts", pushes: seqs(a, 1, 2, 5000, 5001), want: "P1R P2 P5000R P5001", results: "2:restarted"},
		{name: "one far straggler is late", pushes: seqs(a, 1000, 1001, 10, 1002), want: "P1000R P1001 P1002", results: "2:late"},
		{name: "three far behind restart", pushes: seqs(a, 1000, 1001, 10, 11, 12, 13), want: "P1000R P1001 P12R P13", results: "2:late 3:late 4:restarted"},
		{name: "far-behind run broken by a straggler", pushes: seqs(a, 1000, 1001, 1002, 10, 11, 1001, 12, 1003), want: "P1000R P1001 P1002 P1003", results: "3:late 4:late 5:late 6:late"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf, err := New(Config{})
			if err != nil {
				t.Fatal(err)
			}
			var outs, results []string
			for i, p := range tt.pushes {
				if r := buf.Push(pkt(p.ssrc, p.seq)); r != PushAccepted && i > 0 {
					results = append(results, fmt.Sprintf("%d:%v", i, r))
				}
				for o, ok := buf.Pop(); ok; o, ok = buf.Pop() {
					outs = append(outs, render(t, o))
				}
				if buf.Len() > 16 {
					t.Fatalf("holds %d packets", buf.Len())
				}
			}
			if tt.drain {
				for o, ok := buf.Drain(); ok; o, ok = buf.Drain() {
					outs = append(outs, render(t, o))
				}
			}
			if got := strings.Join(outs, " "); got != tt.want {
				t.Errorf("outputs\n got %s\nwant %s", got, tt.want)
			}
			if got := strings.Join(results, " "); got != tt.results {
				t.Errorf("push results %q, want %q", got, tt.results)
			}
		})
	}
}

func TestInvalidAndStats(t *testing.T) {
	buf, _ := New(Config{MaxPayload: 10})
	if r := buf.Push(Packet{Seq: 1}); r != PushInvalid {
		t.Errorf("empty payload: %v", r)
	}
	if r := buf.Push(Packet{Seq: 1, Payload: make([]byte, 11)}); r != PushInvalid {
		t.Errorf("oversized payload: %v", r)
	}
	for _, s := range []uint16{1, 3, 4, 5, 3} {
		buf.Push(pkt(7, s))
		for _, ok := buf.Pop(); ok; _, ok = buf.Pop() {
		}
	}
	want := Stats{Accepted: 3, Late: 1, Invalid: 2, Lost: 1, Restarts: 1}
	if got := buf.Stats(); got != want {
		t.Errorf("stats %+v, want %+v", got, want)
	}
}

func TestConfig(t *testing.T) {
	for _, c := range []Config{
		{Capacity: 12},
		{Capacity: 2, Window: 60e6},
		{MaxJump: 4},
		{Window: -1},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	buf, err := New(Config{Window: 100e6, Capacity: 8})
	if err != nil {
		t.Fatal(err)
	}
	if buf.window != 5 {
		t.Errorf("100 ms window is %d packets, want 5", buf.window)
	}
}

func TestPushPopDoNotAllocate(t *testing.T) {
	buf, _ := New(Config{})
	var seq uint16
	p := pkt(1, 0)
	if n := testing.AllocsPerRun(1000, func() {
		seq += 2 // every other packet lost: exercises loss and packet paths
		p.Seq = seq
		buf.Push(p)
		for _, ok := buf.Pop(); ok; _, ok = buf.Pop() {
		}
	}); n != 0 {
		t.Errorf("%v allocs per packet, want 0", n)
	}
}

// FuzzBuffer drives the buffer with arbitrary packet streams. Each 3-byte
// record is (ssrc selector, sequence delta): whatever arrives, the output
// must be a gap-free sequence with payloads matching their packets, no
// packet output twice per stream, and bounded memory.
func FuzzBuffer(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0, 0, 2, 0, 0, 1, 0, 255, 255, 1, 0, 3})
	f.Add([]byte{0, 0x7f, 0xff, 0, 0x80, 0, 1, 0, 5, 0, 0, 0})
	f.Add([]byte{0, 0, 40, 0, 0, 1, 2, 200, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		buf, err := New(Config{Capacity: 8})
		if err != nil {
			t.Fatal(err)
		}
		var seq uint16
		var expect uint16
		data = data[:min(len(data), 30000)] // bound the cost of one input
		started := false
		// Every pushed packet carries its push index after the sequence
		// number: no pushed packet may come out twice, even when a stream
		// runs through all 2^16 sequence numbers and they repeat.
		delivered := map[uint32]bool{}
		check := func(o Output) {
			if o.Restart {
				started = true
			} else if !started {
				t.Fatalf("first output without Restart: %+v", o)
			} else if o.Seq != expect {
				t.Fatalf("output seq %d, want %d", o.Seq, expect)
			}
			switch o.Kind {
			case KindPacket:
				if binary.BigEndian.Uint16(o.Payload[1:]) != o.Seq {
					t.Fatalf("payload of packet %d is wrong", o.Seq)
				}
				idx := binary.BigEndian.Uint32(o.Payload[3:])
				if delivered[idx] {
					t.Fatalf("push %d (seq %d) output twice", idx, o.Seq)
				}
				delivered[idx] = true
				expect = o.Seq + 1
			case KindLost:
				if o.Lost <= 0 {
					t.Fatalf("loss of %d", o.Lost)
				}
				expect = o.Seq + uint16(o.Lost)
			default:
				t.Fatalf("kind %v", o.Kind)
			}
		}
		var idx uint32
		for len(data) >= 3 {
			ssrc := uint32(data[0] & 3)
			seq += binary.BigEndian.Uint16(data[1:3])
			data = data[3:]
			p := pkt(ssrc, seq)
			p.Payload = binary.BigEndian.AppendUint32(p.Payload, idx)
			idx++
			buf.Push(p)
			for o, ok := buf.Pop(); ok; o, ok = buf.Pop() {
				check(o)
			}
			if buf.Len() > 8 {
				t.Fatalf("holds %d packets", buf.Len())
			}
		}
		for o, ok := buf.Drain(); ok; o, ok = buf.Drain() {
			check(o)
		}
		if buf.Len() != 0 {
			t.Fatalf("%d packets left after Drain", buf.Len())
		}
	})
}

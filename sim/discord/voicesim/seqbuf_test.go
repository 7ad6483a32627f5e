package voicesim

import (
	"errors"
	"strconv"
	"testing"
)

func fill(b *seqBuffer, n int) {
	for range n {
		b.add(func(seq uint16) outFrame { return outFrame{data: []byte(strconv.Itoa(int(seq)))} })
	}
}

func frameSeqs(fs []outFrame) []string {
	var out []string
	for _, f := range fs {
		out = append(out, string(f.data))
	}
	return out
}

func TestSeqBuffer(t *testing.T) {
	tests := []struct {
		name    string
		cap     int
		sent    int
		ack     int // heartbeat seq_ack before the resume; -2 for none
		resume  int
		want    []string
		wantGap bool
	}{
		{"nothing sent", 8, 0, -2, -1, nil, false},
		{"replay all", 8, 3, -2, -1, []string{"1", "2", "3"}, false},
		{"replay after ack", 8, 5, -2, 3, []string{"4", "5"}, false},
		{"up to date", 8, 5, 5, 5, nil, false},
		{"acked then resume older ack still buffered", 8, 5, 2, 3, []string{"4", "5"}, false},
		{"acked entries dropped", 8, 5, 4, 2, nil, true},
		{"overflow loses old", 3, 6, -2, 1, nil, true},
		{"overflow keeps recent", 3, 6, -2, 3, []string{"4", "5", "6"}, false},
		{"ack from the future", 8, 3, -2, 9, nil, true},
		{"wrap around u16", 4, 65538, -2, 65535, []string{"0", "1", "2"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newSeqBuffer(tt.cap)
			fill(&b, tt.sent)
			if tt.ack != -2 {
				b.ack(tt.ack)
			}
			got, err := b.since(tt.resume)
			if errors.Is(err, errResumeGap) != tt.wantGap {
				t.Fatalf("err %v, wantGap %v", err, tt.wantGap)
			}
			if err == nil && strconv.Quote(join(frameSeqs(got))) != strconv.Quote(join(tt.want)) {
				t.Fatalf("replayed %v, want %v", frameSeqs(got), tt.want)
			}
		})
	}
}

func join(s []string) string {
	out := ""
	for _, x := range s {
		out += x + ","
	}
	return out
}

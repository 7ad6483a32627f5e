package post_test

import (
	"testing"

	"github.com/banterbot/banter/discord/post"
)

// TestCreateWithNonce: a message given a nonce is sent with it, and a second create with the
// same nonce (another process answering the same turn, within Discord's nonce window) returns
// the first message instead of posting again; a create without one gets a fresh nonce.
func TestCreateWithNonce(t *testing.T) {
	tests := []struct {
		name          string
		nonces        [2]string
		wantSameFirst bool
	}{
		{"same nonce: posted once", [2]string{"t1234.r0", "t1234.r0"}, true},
		{"different nonces: posted twice", [2]string{"t1234.r0", "t1234.r1"}, false},
		{"no nonce: posted twice", [2]string{"", ""}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			var ids [2]string
			for i, n := range tt.nonces {
				m, err := f.sender.Create(ctx(t), post.Message{ChannelID: string(f.channel), Content: "hello", TurnID: "t1", Nonce: n})
				if err != nil {
					t.Fatalf("create %d: %v", i, err)
				}
				ids[i] = m.ID
			}
			sent := f.sim.Sent()
			if same := ids[0] == ids[1]; same != tt.wantSameFirst {
				t.Errorf("second create returned %s, first %s; want same=%v", ids[1], ids[0], tt.wantSameFirst)
			}
			want := 2
			if tt.wantSameFirst {
				want = 1
			}
			if len(sent) != want {
				t.Errorf("simulator holds %d messages, want %d", len(sent), want)
			}
			if tt.nonces[0] != "" && string(sent[0].Nonce) != `"`+tt.nonces[0]+`"` {
				t.Errorf("nonce sent = %s, want %q", sent[0].Nonce, tt.nonces[0])
			}
		})
	}
}

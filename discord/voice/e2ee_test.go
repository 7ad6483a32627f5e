package voice

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/banterbot/banter/discord/voice/gateway"
	"github.com/banterbot/banter/sim/discord/voicesim"
	"github.com/banterbot/banter/sim/discord/voicesim/voicetest"
)

// recordingE2EE stands in for discord/dave (its own issue) to check the
// hand-off: it records the ops it is given, answers op 4 with a key package
// (op 26, binary), and marks frames so the test can see that E2EE runs
// before transport encryption and is skipped for silence.
type recordingE2EE struct {
	mu  sync.Mutex
	ops []gateway.Opcode
	bin []bool
	in  []string // users DecryptOpus was called for
}

var keyPackage = []byte{0x00, 0x01, 0x00, 0x02, 0x40, 0x41, 0x04}

func (r *recordingE2EE) MaxProtocolVersion() int { return 1 }

func (r *recordingE2EE) HandleGateway(op gateway.Opcode, payload []byte, binary bool) ([]gateway.OutboundMessage, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = append(r.ops, op)
	r.bin = append(r.bin, binary)
	switch op {
	case gateway.OpSessionDescription:
		return []gateway.OutboundMessage{{Op: gateway.OpMLSKeyPackage, Binary: true, Payload: keyPackage}}, nil
	case gateway.OpDAVEPrepareTransition:
		return []gateway.OutboundMessage{{Op: gateway.OpDAVETransitionReady, Data: []byte(`{"transition_id":7}`)}}, nil
	case gateway.OpMLSProposals:
		return nil, errors.New("cannot process proposals") // must be logged, not fatal
	}
	return nil, nil
}

func (r *recordingE2EE) EncryptOpus(dst, opus []byte) ([]byte, error) {
	return append(append(dst, 0xDA, 0x7E), opus...), nil
}

func (r *recordingE2EE) DecryptOpus(userID string, dst, frame []byte) ([]byte, error) {
	r.mu.Lock()
	r.in = append(r.in, userID)
	r.mu.Unlock()
	return append(dst, frame...), nil
}

func (r *recordingE2EE) seen() []gateway.Opcode {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ops)
}

// TestResumeReplaysBufferedMessages cuts the WebSocket, lets the server
// send (and buffer) JSON and binary messages while the client cannot
// reconnect, then lets the resume through: Op 7 carries seq_ack, the
// server replays exactly what was missed, and the connection processes it
// (a new speaker's stream, DAVE ops to E2EE and its answers back).
func TestResumeReplaysBufferedMessages(t *testing.T) {
	var binMu sync.Mutex
	var fromClient []voicesim.BinaryMessage
	s := voicetest.Serve(t, voicesim.WithOnBinary(func(b voicesim.BinaryMessage) {
		binMu.Lock()
		fromClient = append(fromClient, b)
		binMu.Unlock()
	}))
	proxy := newTCPProxy(t, s.Endpoint())
	m := newMetrics()
	e := &recordingE2EE{}
	cfg := simConfig(t, s, testBot, m)
	cfg.Endpoint = proxy.addr()
	cfg.E2EE = e
	c := dial(t, cfg)

	waitFor(t, "key package after op 4", func() bool {
		binMu.Lock()
		defer binMu.Unlock()
		return len(fromClient) == 1 && fromClient[0].Op == voicesim.Op(gateway.OpMLSKeyPackage) && bytes.Equal(fromClient[0].Payload, keyPackage)
	})

	// A binary message before the drop: its seq must count toward seq_ack,
	// or the resume would replay it a second time.
	if err := s.SendBinary(testGuild, testBot, voicesim.Op(gateway.OpMLSExternalSender), []byte{0x40, 0x41, 0x01}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "binary op before the drop", func() bool { return len(e.seen()) == 2 })

	proxy.cutAndHold()
	waitFor(t, "resuming", func() bool { return c.State() == StateResuming })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	member, err := s.JoinMember(ctx, voicesim.MemberOptions{GuildID: testGuild, ChannelID: testChannel, UserID: testHuman, FrameInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer member.Leave()
	if err := s.SendJSON(testGuild, testBot, voicesim.Op(gateway.OpDAVEPrepareTransition), map[string]int{"transition_id": 7, "protocol_version": 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.SendBinary(testGuild, testBot, voicesim.Op(gateway.OpMLSExternalSender), []byte{0x40, 0x41, 0x04}); err != nil {
		t.Fatal(err)
	}
	if err := s.SendBinary(testGuild, testBot, voicesim.Op(gateway.OpMLSProposals), []byte{0x00, 0x00}); err != nil {
		t.Fatal(err)
	}
	// The messages are buffered (SendJSON and SendBinary return once they
	// are): the client, whose socket the proxy holds, has none of them.
	if got := e.seen(); slices.Contains(got, gateway.OpDAVEPrepareTransition) {
		t.Fatalf("DAVE op delivered while disconnected: %v", got)
	}
	proxy.release()

	st := nextStream(t, c, testHuman) // from the replayed op 5
	waitFor(t, "replayed DAVE ops", func() bool { return len(e.seen()) >= 6 })
	// A fence: a message sent after the replay arrives after it, on the same
	// socket, so once the fence is seen anything replayed twice is too.
	waitFor(t, "ready after resume", func() bool { return c.State() == StateReady })
	if err := s.SendBinary(testGuild, testBot, voicesim.Op(gateway.OpMLSExternalSender), []byte{0x40, 0x41, 0x05}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the fence after the replay", func() bool { return len(e.seen()) >= 7 })
	want := []gateway.Opcode{gateway.OpSessionDescription, gateway.OpMLSExternalSender, gateway.OpClientsConnect, gateway.OpDAVEPrepareTransition, gateway.OpMLSExternalSender, gateway.OpMLSProposals,
		gateway.OpMLSExternalSender}
	if got := e.seen(); !slices.Equal(got, want) {
		t.Fatalf("E2EE saw %v, want %v (each once, in order, then the fence)", got, want)
	}
	waitFor(t, "ready after resume", func() bool { return c.State() == StateReady })
	if n := counterOf(m.reconnects, "1006"); n != 1 {
		t.Errorf("reconnects{1006} = %v", n)
	}

	// Audio flows both ways after the resume, through E2EE.
	frames := opusFrames(t, 5)
	if err := member.PlayOpus(ctx, frames); err != nil {
		t.Fatal(err)
	}
	for i := range frames {
		f := <-st.Frames()
		if !bytes.Equal(f.Opus, frames[i]) {
			t.Fatalf("frame %d differs", i)
		}
	}
	e.mu.Lock()
	if len(e.in) < len(frames) || e.in[0] != testHuman {
		t.Errorf("DecryptOpus calls %v, want %d for %s", e.in, len(frames), testHuman)
	}
	e.mu.Unlock()
	for _, f := range frames {
		if err := c.SendOpus(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.StopSpeaking(ctx); err != nil {
		t.Fatal(err)
	}
	if err := member.WaitHeard(ctx, testBot, len(frames)); err != nil {
		t.Fatal(err)
	}
	for i, h := range member.Heard(testBot)[:len(frames)] {
		if !bytes.Equal(h, append([]byte{0xDA, 0x7E}, frames[i]...)) {
			t.Fatalf("frame %d not E2EE-wrapped: %x", i, h[:4])
		}
	}
	waitFor(t, "unencrypted silence", func() bool { return member.Stats().Silence == 5 })
	binMu.Lock()
	defer binMu.Unlock()
	if len(fromClient) != 1 {
		t.Errorf("client sent %d binary frames, want the one key package", len(fromClient))
	}
}

// TestUnknownOpsIgnored: undocumented opcodes, JSON and binary, neither end
// the connection nor reach E2EE, and later messages are still processed.
func TestUnknownOpsIgnored(t *testing.T) {
	s := voicetest.Serve(t)
	e := &recordingE2EE{}
	cfg := simConfig(t, s, testBot, nil)
	cfg.E2EE = e
	c := dial(t, cfg)
	waitFor(t, "op 4 to E2EE", func() bool { return len(e.seen()) == 1 })
	for _, op := range []int{10, 12, 14, 15, 16, 18, 20, 99} {
		if err := s.SendJSON(testGuild, testBot, voicesim.Op(op), map[string]any{"any": op}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SendBinary(testGuild, testBot, voicesim.Op(200), []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	member, err := s.JoinMember(ctx, voicesim.MemberOptions{GuildID: testGuild, ChannelID: testChannel, UserID: testHuman})
	if err != nil {
		t.Fatal(err)
	}
	defer member.Leave()
	nextStream(t, c, testHuman)
	if got := e.seen(); !slices.Equal(got, []gateway.Opcode{gateway.OpSessionDescription, gateway.OpClientsConnect}) {
		t.Errorf("E2EE saw %v", got)
	}
	if c.Err() != nil || c.State() != StateReady {
		t.Errorf("err %v state %v", c.Err(), c.State())
	}
}

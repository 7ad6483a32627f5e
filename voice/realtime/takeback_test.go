package realtime

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/internal/logbuf"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
)

// cutCtx is a reply's context that the member cuts just before the bridge sends the reply's
// sends-th message: the bridge checks a send's context before writing it (llm/realtime
// Conn.Send), so the cut lands between two messages, deterministically.
type cutCtx struct {
	context.Context
	cancel context.CancelFunc
	left   atomic.Int32
}

func newCutCtx(parent context.Context, sends int) *cutCtx {
	ctx, cancel := context.WithCancel(parent)
	c := &cutCtx{Context: ctx, cancel: cancel}
	c.left.Store(int32(sends))
	return c
}

func (c *cutCtx) Err() error {
	if c.left.Add(-1) == 0 {
		c.cancel()
	}
	return c.Context.Err()
}

// discardOut is an audioOut that takes the reply's audio at once.
func discardOut() audioOut {
	return audioOut{write: func(ctx context.Context, _ []byte) error { return ctx.Err() },
		played: func() time.Duration { return 0 }}
}

// takeBackBridge starts a native Bridge on oa (edit adjusts its Config) and returns it with its
// log; it is closed when the test ends.
func takeBackBridge(t *testing.T, oa *openaisim.Server, edit func(*Config)) (*Bridge, *logbuf.Buffer) {
	t.Helper()
	logs := newTestLog()
	cfg := simConfig(oa, StrategyNative, logs)
	edit(&cfg)
	b, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b, logs
}

// ask has b answer alice's turn id, its audio forwarded, under ctx.
func ask(ctx context.Context, b *Bridge, id string, audio []int16) error {
	_, err := b.answer(ctx, &Turn{ID: id, SpeakerID: testHuman, SpeakerName: "alice"}, audio, "", "Answer.", discardOut())
	return err
}

// falseEnd has b answer alice's earlier turn t0 (audio earlier), cut her reply t1 (audio cut)
// before its cutAt-th message, take it back, and answer the whole t2 (audio whole), as the
// session does after a false end.
func falseEnd(t *testing.T, b *Bridge, earlier, cut, whole []int16, cutAt int) {
	t.Helper()
	if err := ask(t.Context(), b, "t0", earlier); err != nil {
		t.Fatalf("the earlier turn: %v", err)
	}
	if err := ask(newCutCtx(t.Context(), cutAt), b, "t1", cut); err == nil {
		t.Fatal("the cut reply returned no error")
	}
	b.takeBack("t1")
	if err := ask(t.Context(), b, "t2", whole); err != nil {
		t.Fatalf("the whole: %v", err)
	}
}

// wantWholeWithoutCut checks the two responses asked for, the earlier turn's and the whole's:
// the answer to the whole sees the earlier turn's items, its answer, and as many items again
// (the whole's, the same audio), none of the cut turn's.
func wantWholeWithoutCut(t *testing.T, oa *openaisim.Server) {
	t.Helper()
	rec := oa.RequestsFor(openaisim.EndpointRealtimeResponse)
	if len(rec) != 2 {
		t.Fatalf("%d responses, want 2", len(rec))
	}
	earlier := len(conversationLines(rec[0].Prompt, "user"))
	before, after, _ := strings.Cut(rec[1].Prompt, "assistant: Sunny.")
	if u, w := len(conversationLines(before, "user")), len(conversationLines(after, "user")); earlier == 0 || u != earlier || w != earlier {
		t.Errorf("the answer to the whole saw %d user items, its answer and %d more; want %d and %d (none of the cut turn's):\n%s",
			u, w, earlier, earlier, rec[1].Prompt)
	}
	if n := strings.Count(rec[1].Prompt, "assistant:"); n != 1 {
		t.Errorf("%d answers in the conversation, want 1:\n%s", n, rec[1].Prompt)
	}
}

// TestTakeBackWithoutResponse: a false end cuts a native reply before its response.create, so
// the turn's audio went to the input buffer for no response: cut after the commit (the item
// exists, and its committed event may come after the take-back), cut between two appends
// (nothing committed, audio left in the buffer), and, with the server's turn detection, cut
// before the commit after the server committed the first phrase at its pause. The take-back
// leaves none of it in the conversation: the answer to the whole sees the earlier turn and the
// whole, one user item each.
func TestTakeBackWithoutResponse(t *testing.T) {
	t.Parallel()
	half := loadSpeechAs(t, "hey-banter-weather.wav", pcm.Mono24k())
	chunks := (len(half) + appendChunk - 1) / appendChunk
	paused := append(append(append([]int16(nil), half...), make([]int16, 24000*8/10)...), half...)
	// The earlier turn and the whole end in a second of silence: with the server's turn
	// detection each leaves its detector where it found it, so both make the same items.
	ended := append(append([]int16(nil), half...), make([]int16, 24000)...)
	for _, tc := range []struct {
		name    string
		audio   []int16
		vad     bool
		cutAt   int // the message the reply is cut before
		commits int // the items the cut turn's audio made (-1: one or more, the server's detector decides)
		// cutBefore: a turn before the cut one was cut between two appends and not taken back,
		// so the cut turn's forward starts with a clear of its own, whose cleared must not be
		// taken for the answer to the take-back's
		cutBefore bool
		// queued: then a reply was cut before its first message (while it waited its turn), so
		// the forward's clear was never written, and must not be counted as sent
		queued bool
	}{
		{"after the commit", half, false, chunks + 2, 1, false, false},
		{"between appends", half, false, 2, 0, false, false},
		{"server turn detection", paused, true, (len(paused)+appendChunk-1)/appendChunk + 1, -1, false, false},
		{"after the commit, after a cut forward", half, false, chunks + 3, 1, true, false},
		{"after the commit, after a cut forward and a reply cut queued", half, false, chunks + 3, 1, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			oa := openaitest.Serve(t, openaisim.WithRules(openaisim.Rule{
				Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeResponse}, Reply: openaisim.Reply{Text: "Sunny."}}))
			b, logs := takeBackBridge(t, oa, func(c *Config) { c.ServerTurnDetection = tc.vad })
			if err := ask(t.Context(), b, "t0", ended); err != nil {
				t.Fatalf("the earlier turn: %v", err)
			}
			if tc.cutBefore {
				if err := ask(newCutCtx(t.Context(), 2), b, "tx", half); err == nil {
					t.Fatal("the reply cut between appends returned no error")
				}
			}
			if tc.queued {
				if err := ask(newCutCtx(t.Context(), 1), b, "ty", half); err == nil {
					t.Fatal("the reply cut before its first message returned no error")
				}
			}
			if err := ask(newCutCtx(t.Context(), tc.cutAt), b, "t1", tc.audio); err == nil {
				t.Fatal("the cut reply returned no error")
			}
			// At once, as the session does: the server may not have read the cut turn's messages
			// yet, nor answered them.
			b.takeBack("t1")
			if err := ask(t.Context(), b, "t2", ended); err != nil {
				t.Fatalf("the whole: %v", err)
			}
			// The earlier turn, the cut one (when cut after its commit) and the whole committed;
			// the cut one asked for no response.
			commits, creates := 0, 0
			for _, e := range oa.RealtimeEvents() {
				switch e.Type {
				case "input_audio_buffer.commit":
					commits++
				case "response.create":
					creates++
				}
			}
			if want := 2 + boolInt(tc.cutAt > chunks+1 && !tc.vad); commits != want || creates != 2 {
				t.Fatalf("%d commits, %d response.create; want %d and 2 (the cut is not where the test puts it)", commits, creates, want)
			}
			wantWholeWithoutCut(t, oa)
			deletes, clears, wantClears := 0, 0, 1+boolInt(tc.cutBefore)
			for _, e := range oa.RealtimeEvents() {
				switch e.Type {
				case "conversation.item.delete":
					deletes++
				case "input_audio_buffer.clear":
					clears++
				}
			}
			if (tc.commits >= 0 && deletes != tc.commits) || (tc.commits < 0 && deletes == 0) || clears != wantClears {
				t.Errorf("%d deletes, %d clears; want %d (-1: one or more) and %d", deletes, clears, tc.commits, wantClears)
			}
			if deletes > 0 {
				if d := logs.Events("realtime_items_deleted"); len(d) != 1 || d[0]["sent"] != float64(deletes) {
					t.Errorf("realtime_items_deleted %v, want %d sent", d, deletes)
				}
			}
			if w := logs.Events("realtime_orphans_unconfirmed"); len(w) != 0 {
				t.Errorf("realtime_orphans_unconfirmed %v: the clear went unanswered", w)
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestTakeBackDropDuringOrphanWait: the session drops when the reply after a take-back sends its
// clear (the simulator's DropOnClientEvent), while it waits for the cleared. The wait ends with
// the session, not at CancelTimeout; the cut turn's items are gone with it, and the whole is
// asked again on the new session, once, which holds none of them.
func TestTakeBackDropDuringOrphanWait(t *testing.T) {
	t.Parallel()
	half := loadSpeechAs(t, "hey-banter-weather.wav", pcm.Mono24k())
	chunks := (len(half) + appendChunk - 1) / appendChunk
	oa := openaitest.Serve(t, openaisim.WithRules(
		openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointRealtime},
			Fault: openaisim.Fault{DropOnClientEvent: "input_audio_buffer.clear"}, Times: 1},
		openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeResponse}, Reply: openaisim.Reply{Text: "Sunny."}}))
	// a wait that ended only at the timeout logs realtime_orphans_unconfirmed
	b, logs := takeBackBridge(t, oa, func(c *Config) { c.CancelTimeout = 20 * time.Second })
	falseEnd(t, b, half, half, half, chunks+2)
	if n := len(logs.Events("realtime_socket_dropped")); n != 1 {
		t.Errorf("%d realtime_socket_dropped, want 1", n)
	}
	if r := logs.Events("realtime_reply_retry"); len(r) != 1 || r[0]["turn_id"] != "t2" {
		t.Errorf("realtime_reply_retry %v, want the whole asked again once", r)
	}
	if w := logs.Events("realtime_orphans_unconfirmed"); len(w) != 0 {
		t.Errorf("realtime_orphans_unconfirmed %v: want the wait ended by the drop", w)
	}
	rec := oa.RequestsFor(openaisim.EndpointRealtimeResponse)
	if len(rec) != 2 {
		t.Fatalf("%d responses, want 2 (the earlier turn's and the whole's)", len(rec))
	}
	// The new session's conversation: the whole's audio alone.
	if u, a := conversationLines(rec[1].Prompt, "user"), conversationLines(rec[1].Prompt, "assistant"); len(u) != 1 || len(a) != 0 {
		t.Errorf("the answer to the whole saw %d user and %d assistant items, want 1 and 0:\n%s", len(u), len(a), rec[1].Prompt)
	}
}

// TestTakeBackUnansweredClear: the server never answers the clear the reply after a take-back
// sends (the simulator's IgnoreClientEvent: the event is lost). The wait ends at CancelTimeout;
// the items announced by then (the cut turn's commit, announced long before) are deleted all the
// same, on a context of their own, and the whole is answered from a conversation without the
// cut turn.
func TestTakeBackUnansweredClear(t *testing.T) {
	t.Parallel()
	half := loadSpeechAs(t, "hey-banter-weather.wav", pcm.Mono24k())
	chunks := (len(half) + appendChunk - 1) / appendChunk
	ended := append(append([]int16(nil), half...), make([]int16, 24000)...)
	oa := openaitest.Serve(t, openaisim.WithRules(
		openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointRealtime},
			Fault: openaisim.Fault{IgnoreClientEvent: "input_audio_buffer.clear"}},
		openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeResponse}, Reply: openaisim.Reply{Text: "Sunny."}}))
	b, logs := takeBackBridge(t, oa, func(*Config) {}) // the default CancelTimeout, 2 s
	falseEnd(t, b, ended, half, ended, chunks+2)
	if w := logs.Events("realtime_orphans_unconfirmed"); len(w) != 1 {
		t.Errorf("realtime_orphans_unconfirmed %v, want the wait ended once by its timeout", w)
	}
	commits, deletes := 0, 0
	for _, e := range oa.RealtimeEvents() {
		switch e.Type {
		case "input_audio_buffer.commit":
			commits++
		case "conversation.item.delete":
			deletes++
		}
	}
	if commits != 3 {
		t.Fatalf("%d commits, want 3: the earlier turn, the cut one and the whole (the cut is not where the test puts it)", commits)
	}
	if d := logs.Events("realtime_items_deleted"); deletes != 1 || len(d) != 1 || d[0]["sent"] != float64(1) {
		t.Errorf("%d deletes, realtime_items_deleted %v; want the cut turn's item deleted", deletes, d)
	}
	wantWholeWithoutCut(t, oa)
}

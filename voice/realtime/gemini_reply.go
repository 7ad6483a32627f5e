package realtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/llm/gemini"
)

// readLoop reads server messages until the connection fails. A malformed message is counted
// and skipped.
func (g *geminiBridge) readLoop(c *gemini.Conn) error {
	for {
		ev, err := c.Next()
		if gemini.IsMalformed(err) {
			g.m.serverErr()
			g.log.Warn("realtime_server_error", "err", err)
			continue
		}
		if err != nil {
			return err
		}
		g.handleEvent(c, &ev)
	}
}

// handleEvent runs one server message on the read loop.
func (g *geminiBridge) handleEvent(c *gemini.Conn, ev *gemini.Event) {
	g.mu.Lock()
	if ev.Handle != "" {
		g.handle = ev.Handle
	}
	r := g.resp
	var out chan []byte
	if r != nil {
		for _, a := range ev.Audio {
			r.audioBytes += len(a)
		}
		r.transcript.WriteString(ev.OutputTranscript)
		r.heard.WriteString(ev.InputTranscript)
		r.interrupted = r.interrupted || ev.Interrupted
		if ev.Usage != nil {
			r.usage = ev.Usage
		}
		if !r.muted {
			out = r.out
		}
	}
	g.mu.Unlock()
	for _, a := range ev.Audio { // the SDK decodes every message afresh: a is ours to hand on
		select {
		case out <- a:
		default: // no reply of ours, muted, or the writer is 1024 parts behind
			g.m.audioDropped(len(a))
		}
	}
	if len(ev.Calls) > 0 {
		g.answerCalls(c, ev.Calls)
	}
	if ev.Kind == gemini.EventGoAway {
		g.log.Info("realtime_go_away", "time_left", ev.TimeLeft)
		select {
		case g.away <- struct{}{}:
		default:
		}
	}
	if ev.TurnComplete {
		g.finish()
	}
}

// answerCalls answers function calls: banter declares no functions to the Live model, so a
// call names a tool it does not have; it is answered with an error at once, because the API
// closes the connection (1008) on audio sent while a blocking call is pending.
func (g *geminiBridge) answerCalls(c *gemini.Conn, calls []gemini.Call) {
	res := make([]gemini.ToolResult, 0, len(calls))
	for _, call := range calls {
		g.log.Warn("realtime_tool_call_unknown", "name", call.Name, "call_id", call.ID)
		res = append(res, gemini.ToolResult{ID: call.ID, Name: call.Name,
			Response: map[string]any{"error": "no tool named " + call.Name + " is available"}})
	}
	if err := c.SendToolResponse(res...); err != nil {
		g.log.Warn("realtime_tool_response_failed", "err", err)
	}
}

// finish ends the reply in progress on turnComplete; the history gets what was played (unless
// a false end took the turn back).
func (g *geminiBridge) finish() {
	g.mu.Lock()
	r := g.resp
	g.resp = nil
	if r == nil {
		g.mu.Unlock()
		return
	}
	text, heard := r.transcript.String(), r.heard.String()
	cut := r.interrupted
	if r.muted {
		text, cut = cutText(text, r.playedBytes, r.audioBytes), true
	}
	if !r.dropped { // under g.mu, as takeBack forgets the turn's lines
		g.hist.add(r.turnID, "", text, cut)
	}
	g.mu.Unlock()
	if r.usage != nil {
		g.cfg.Meter.Record(context.Background(), r.account, g.cfg.Gemini.Model, meteredUsage(*r.usage))
	}
	g.log.Info("realtime_transcripts", "turn_id", r.turnID, "heard", heard, "said", text, "cut", cut)
	close(r.done)
}

// greetPrompt asks for the join greeting when the reply carries no instructions.
const greetPrompt = "You just joined the voice channel. Greet everyone in one short sentence."

// answer implements provider.
func (g *geminiBridge) answer(ctx context.Context, t *Turn, audio []int16, say, instructions string, out audioOut) (replyResult, error) {
	r, err := g.start(ctx, t, audio, say, instructions)
	if err != nil {
		return replyResult{}, err
	}
	defer func() { g.m.framesSent(int(out.played() / (20 * time.Millisecond))) }()
	if err := playOut(ctx, r.out, r.done, r.requestedAt, out, g.now, g.m, func([]byte) {}); err != nil {
		return g.cut(ctx, r, out.played(), err)
	}
	g.mu.Lock()
	text, lost, interrupted := r.transcript.String(), r.lost, r.interrupted
	g.mu.Unlock()
	if lost {
		return replyResult{transcript: text, spoken: text}, errReplyLost
	}
	return replyResult{transcript: text, spoken: text, interrupted: interrupted}, nil
}

// start sends the turn (audio between activity marks, or the text to voice) and makes it the
// reply in progress.
func (g *geminiBridge) start(ctx context.Context, t *Turn, audio []int16, say, instructions string) (*gReply, error) {
	if err := admit(ctx, g.cfg.Gate, g.guild, SlotGeminiRealtime, g.cfg.Gemini.Model); err != nil {
		return nil, err
	}
	g.turnMu.Lock()
	defer g.turnMu.Unlock()
	conn, err := g.ready(ctx)
	if err != nil {
		return nil, fmt.Errorf("realtime: reply: %w", err)
	}
	r := &gReply{turnID: turnID(t), requestedAt: g.now(), out: make(chan []byte, 1024), done: make(chan struct{}),
		account: llm.Account{Guild: g.guild, Slot: SlotGeminiRealtime, Tally: llm.AccountFrom(ctx).Tally}}
	g.mu.Lock()
	g.resp, g.last = r, r
	g.mu.Unlock()
	switch {
	case say != "":
		err = conn.SendText(speakPrompt + say)
	case len(audio) > 0:
		if err = g.sendContext(conn, instructions); err == nil {
			err = g.forward(conn, audio)
		}
	default: // the native greeting: no turn, the reply's instructions say what to do
		if instructions == "" {
			instructions = greetPrompt // an empty text turn is not a valid request
		}
		err = conn.SendText(instructions)
	}
	if err != nil {
		g.mu.Lock()
		if g.resp == r {
			g.resp = nil
		}
		g.mu.Unlock()
		if ctx.Err() == nil {
			return nil, fmt.Errorf("%w: %w", errReplyLost, err)
		}
		return nil, err
	}
	logRequested(ctx, g.log, g.m, g.cfg.Strategy, t, r.requestedAt)
	return r, nil
}

// contextPrefix introduces a native turn's own instructions in the conversation.
const contextPrefix = "[Context for your next reply, from the system, not said by anyone in the call]\n"

// sendContext puts a native turn's instructions (participants, the decision's context; the
// persona, which the setup's system instruction already holds, removed) into the conversation
// as a text turn without turnComplete, before the turn's audio: the Live API has neither
// per-response instructions nor a way to change the system instruction on an open connection
// (only a reconnection with a new setup, a handshake per turn). It is sent only when it
// differs from the last one this session holds, so an unchanged context costs nothing; each
// one sent stays in the history (until the sliding window drops it). Call with turnMu.
func (g *geminiBridge) sendContext(conn *gemini.Conn, instructions string) error {
	if p := strings.TrimSpace(g.cfg.Instructions); p != "" {
		instructions = strings.ReplaceAll(instructions, p, "")
	}
	instructions = strings.TrimSpace(instructions)
	g.mu.Lock()
	same := instructions == g.context
	g.mu.Unlock()
	if instructions == "" || same {
		return nil
	}
	if err := conn.SendContext(contextPrefix + instructions); err != nil {
		return err
	}
	g.mu.Lock()
	g.context = instructions
	g.mu.Unlock()
	return nil
}

// forward sends a turn's audio (16 kHz mono) in 100 ms chunks, between activityStart and
// activityEnd when banter's endpointing leads, else followed by audioStreamEnd. Call with turnMu.
func (g *geminiBridge) forward(conn *gemini.Conn, audio []int16) error {
	manual := g.cfg.Gemini.ManualActivity
	if manual {
		if err := conn.ActivityStart(); err != nil {
			return err
		}
	}
	for a := audio; len(a) > 0; {
		n := min(len(a), geminiChunk)
		g.pcmBuf = pcm.AppendBytes(g.pcmBuf[:0], a[:n])
		if err := conn.SendAudio(g.pcmBuf, gemini16k.Rate); err != nil {
			return err
		}
		a = a[n:]
	}
	if manual {
		return conn.ActivityEnd()
	}
	return conn.AudioStreamEnd()
}

// ready waits until a connection is up, no reply is in progress and no take-back waits for a
// fresh session.
func (g *geminiBridge) ready(ctx context.Context) (*gemini.Conn, error) {
	for {
		g.mu.Lock()
		conn, connCh, r := g.conn, g.connCh, g.resp
		fresh, freshDone := g.freshPending, g.freshDone
		g.mu.Unlock()
		var wait <-chan struct{}
		switch {
		case fresh: // a take-back: not on the conversation that holds the turn
			wait = freshDone
		case r != nil:
			wait = r.done
		case conn == nil:
			wait = connCh
		default:
			return conn, nil
		}
		select {
		case <-wait:
		case <-g.done:
			return nil, ErrClosed
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for the connection: %w", ctx.Err())
		}
	}
}

// cut ends a reply early: further audio is dropped and, when banter marks activity, an empty
// activity interrupts the model (its interrupted and turnComplete are awaited, at most
// CancelTimeout). The Live API keeps in its history only the audio it has sent, so there is
// nothing to truncate; banter's own history gets the played part.
func (g *geminiBridge) cut(ctx context.Context, r *gReply, played time.Duration, cause error) (replyResult, error) {
	playedBytes := int(played/(20*time.Millisecond)) * frameBytes
	g.mu.Lock()
	r.muted, r.playedBytes = true, playedBytes
	active, conn := g.resp == r, g.conn
	g.mu.Unlock()
	g.m.interrupted()
	interrupted := false
	if active && conn != nil && g.cfg.Gemini.ManualActivity {
		if conn.ActivityStart() == nil && conn.ActivityEnd() == nil {
			interrupted = true
			t := time.NewTimer(g.cfg.CancelTimeout)
			select {
			case <-r.done:
			case <-t.C:
			}
			t.Stop()
		}
	}
	g.mu.Lock()
	transcript, received := r.transcript.String(), r.audioBytes
	g.mu.Unlock()
	spoken := cutText(transcript, playedBytes, received)
	if !active {
		g.hist.amendLast(spoken)
	}
	g.log.Info("realtime_interrupted", "turn_id", r.turnID, "played_ms", playedBytes/(frameBytes/20),
		"received_ms", received/(frameBytes/20), "cancelled", interrupted)
	res := replyResult{transcript: transcript, spoken: spoken, interrupted: true}
	if errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded) {
		return res, fmt.Errorf("realtime: reply interrupted: %w", cause)
	}
	return res, fmt.Errorf("realtime: play: %w", cause)
}

// meteredUsage is a Live API message's usage in the meter's terms.
func meteredUsage(u gemini.Usage) llm.Usage {
	return llm.Usage{InputTokens: u.Prompt, CachedTokens: u.Cached, AudioInputTokens: u.AudioIn,
		OutputTokens: u.Response + u.Thoughts, ReasoningTokens: u.Thoughts, AudioOutputTokens: u.AudioOut}
}

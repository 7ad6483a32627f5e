package realtime

import (
	"context"
	"fmt"
	"time"

	"github.com/banterbot/banter/llm"
	llmrt "github.com/banterbot/banter/llm/realtime"
)

// serve runs one realtime session until it drops, rolls over or ctx ends,
// and returns the next connection (nil: stop).
func (b *Bridge) serve(ctx context.Context, conn *llmrt.Conn, gen uint64) *llmrt.Conn {
	b.setConn(conn, gen)
	readErr := make(chan error, 1)
	go func() { readErr <- b.readLoop(ctx, conn, gen) }() // waited for on every return path below
	timer := time.NewTimer(b.cfg.SessionMax)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			conn.Close()
			<-readErr
			return nil
		case err := <-readErr:
			conn.Close()
			if ctx.Err() != nil {
				return nil
			}
			b.log.Warn("realtime_socket_dropped", "err", err, "session_gen", gen)
			next := b.reconnect(ctx)
			if next != nil {
				b.m.reconnect("drop")
				b.log.Info("realtime_reconnected", "cause", "drop", "session_gen", gen+1)
			}
			return next
		case <-timer.C:
			next, err := b.rollover(ctx, conn, gen, readErr)
			if err != nil {
				if ctx.Err() != nil {
					conn.Close()
					<-readErr
					return nil
				}
				b.log.Warn("realtime_rollover_failed", "err", err, "session_gen", gen)
				timer.Reset(min(b.cfg.SessionMax/10+time.Second, time.Minute))
				continue
			}
			b.m.reconnect("rollover")
			b.log.Info("realtime_reconnected", "cause", "rollover", "session_gen", gen+1)
			return next
		}
	}
}

// rollover replaces conn by a fresh session once no response is in
// progress. New turns wait (turnMu) until the new session is in place.
func (b *Bridge) rollover(ctx context.Context, conn *llmrt.Conn, gen uint64, readErr <-chan error) (*llmrt.Conn, error) {
	b.turnMu.Lock()
	defer b.turnMu.Unlock()
	for {
		b.mu.Lock()
		r := b.resp
		b.mu.Unlock()
		if r == nil {
			break
		}
		select {
		case <-r.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	next, err := llmrt.Open(ctx, b.cfg.Realtime, b.session(), b.cfg.ConnectAttempts)
	if err != nil {
		return nil, fmt.Errorf("realtime: rollover: %w", err)
	}
	conn.Close()
	<-readErr
	b.setConn(next, gen+1)
	return next, nil
}

// reconnect opens a new session with back-off until it succeeds or ctx ends.
func (b *Bridge) reconnect(ctx context.Context) *llmrt.Conn {
	delay := b.cfg.ReconnectBackoff
	for {
		c, err := llmrt.Open(ctx, b.cfg.Realtime, b.session(), b.cfg.ConnectAttempts)
		if err == nil {
			return c
		}
		if ctx.Err() != nil {
			return nil
		}
		b.log.Warn("realtime_reconnect_failed", "err", err, "retry_in", delay)
		if !backoff(ctx, &delay, b.cfg.MaxReconnectBackoff) {
			return nil
		}
	}
}

// backoff waits *delay with jitter (false when ctx ends first) and doubles it up to max.
func backoff(ctx context.Context, delay *time.Duration, max time.Duration) bool {
	t := time.NewTimer(withJitter(*delay))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return false
	}
	*delay = min(*delay*2, max)
	return true
}

func (b *Bridge) setConn(c *llmrt.Conn, gen uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conn == nil {
		close(b.connCh)
	}
	b.conn, b.connGen, b.committed = c, gen, nil
	b.clears, b.clearsSeen = 0, 0
}

// dropConn forgets the session gen (its socket is gone): the response in
// progress is lost.
func (b *Bridge) dropConn(gen uint64) {
	b.mu.Lock()
	if b.conn == nil || b.connGen != gen {
		b.mu.Unlock()
		return
	}
	b.conn = nil
	b.connCh = make(chan struct{})
	r := b.resp
	b.resp = nil
	if b.cleared != nil { // collectOrphans waits on this session: its items are gone with it
		b.endOrphanWaitLocked(false)
	}
	b.mu.Unlock()
	if r != nil {
		r.status = "lost"
		b.m.responseFailed()
		b.log.Warn("realtime_reply_lost", "turn_id", r.turnID, "response_id", r.id)
		close(r.done)
	}
}

// readLoop reads server events until the socket fails.
func (b *Bridge) readLoop(ctx context.Context, c *llmrt.Conn, gen uint64) error {
	defer b.dropConn(gen)
	var ev llmrt.Event
	for {
		if err := c.ReadEvent(ctx, &ev); err != nil {
			return err
		}
		b.handle(&ev)
	}
}

// handle runs one server event on the read loop.
func (b *Bridge) handle(ev *llmrt.Event) {
	switch ev.Type {
	case llmrt.EventOutputAudioDelta:
		b.mu.Lock()
		r := b.resp
		muted := false
		var out chan []byte
		if r != nil {
			if r.item == "" {
				r.item = ev.ItemID
			}
			r.audioBytes += len(ev.Audio)
			muted, out = r.muted, r.out
		}
		b.mu.Unlock()
		switch {
		case muted:
		case out != nil:
			select {
			case out <- append(b.getBuf(len(ev.Audio))[:0], ev.Audio...):
			default: // the writer is more than 1024 deltas behind
				b.m.audioDropped(len(ev.Audio))
			}
		default: // audio of no response of ours
			b.m.audioDropped(len(ev.Audio))
		}
	case llmrt.EventInputAudioCommitted:
		b.mu.Lock()
		b.committed = append(b.committed, ev.ItemID)
		b.mu.Unlock()
	case llmrt.EventInputAudioCleared:
		b.mu.Lock()
		b.clearsSeen++
		if b.cleared != nil && b.clearsSeen >= b.clearWant {
			b.endOrphanWaitLocked(true) // the answer to its clear: every earlier commit is announced
		}
		b.mu.Unlock()
	case llmrt.EventItemAdded, llmrt.EventItemCreated:
		b.mu.Lock()
		if r := b.resp; r != nil && r.item == "" && r.id != "" && ev.ItemRole == "assistant" {
			r.item = ev.ItemID // before its first audio delta: a cut before any audio still knows it
		}
		b.mu.Unlock()
	case llmrt.EventResponseCreated:
		b.mu.Lock()
		if r := b.resp; r != nil && r.id == "" {
			r.id = ev.Response.ID
			if r.forwarded { // the server runs client events in order: the commit came first
				r.userItems, b.committed = b.committed, nil
			}
		}
		b.mu.Unlock()
	case llmrt.EventOutputAudioTranscriptDelta:
		b.mu.Lock()
		if b.resp != nil {
			b.resp.deltas.WriteString(ev.Delta)
		}
		b.mu.Unlock()
	case llmrt.EventOutputAudioTranscriptDone:
		b.mu.Lock()
		if b.resp != nil {
			b.resp.transcript = ev.Transcript
		}
		b.mu.Unlock()
	case llmrt.EventResponseDone:
		b.finish(ev)
	case llmrt.EventError:
		b.m.serverErr()
		b.log.Warn("realtime_server_error", "code", ev.Error.Code, "type", ev.Error.Type,
			"message", ev.Error.Message, "event_id", ev.Error.EventID)
	}
}

// SlotRealtime is the model slot realtime responses are charged to (llm.Account).
const SlotRealtime = "voice.openaiRealtime"

// SlotGeminiRealtime is the model slot Gemini Live replies are charged to.
const SlotGeminiRealtime = "voice.geminiRealtime"

// admit asks the Gate (nil: none) whether a reply of model may be asked for; the realtime
// model is fixed for the session, so a fallback model the Gate names does not apply.
func admit(ctx context.Context, gate llm.Gate, guild, slot, model string) error {
	if gate == nil {
		return nil
	}
	if _, err := gate.Admit(ctx, llm.Account{Guild: guild, Slot: slot}, model); err != nil {
		return fmt.Errorf("realtime: reply: %w", err)
	}
	return nil
}

// usage is response.done's usage as the llm Meter counts it.
func usage(u llmrt.Usage) llm.Usage {
	return llm.Usage{InputTokens: u.InputTokens, CachedTokens: u.InputTokenDetails.CachedTokens,
		AudioInputTokens: u.InputTokenDetails.AudioTokens, OutputTokens: u.OutputTokens,
		AudioOutputTokens: u.OutputTokenDetails.AudioTokens}
}

// finish ends the response in progress on response.done.
func (b *Bridge) finish(ev *llmrt.Event) {
	b.mu.Lock()
	r := b.resp
	b.resp = nil
	// A cut (Bridge.cut, on the reply's goroutine) sets interrupted and played under b.mu:
	// read them under it too. A cut that comes after this sees the response no longer
	// active and amends the history itself.
	if r == nil {
		b.mu.Unlock()
		return
	}
	r.status = ev.Response.Status
	if r.transcript == "" {
		r.transcript = r.deltas.String()
	}
	text := r.transcript
	if r.interrupted {
		text = cutText(text, int(r.played)*frameBytes, r.audioBytes)
	}
	if !r.dropped { // under b.mu, as takeBack forgets the turn's lines
		b.hist.add(r.turnID, "", text, r.interrupted)
	}
	b.mu.Unlock()
	b.cfg.Meter.Record(context.Background(), r.account, b.cfg.Realtime.Model, usage(ev.Response.Usage))
	switch st := ev.Response.Status; st {
	case "completed", "cancelled":
	default:
		b.m.responseFailed()
		b.log.Warn("realtime_reply_failed", "turn_id", r.turnID, "response_id", ev.Response.ID, "status", st,
			"reason", ev.Response.StatusDetails.Reason, "code", ev.Response.StatusDetails.Error.Code)
	}
	close(r.done)
}

package realtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/banterbot/banter/llm"
	llmrt "github.com/banterbot/banter/llm/realtime"
)

// errReplyLost is returned when the socket dropped during a reply.
var errReplyLost = errors.New("realtime: reply lost: the realtime socket dropped")

// errSessionGone is a reply's send after its session dropped.
var errSessionGone = errors.New("the realtime session dropped")

// audioOut is the reply's player (the voice session's voice.Playback):
// write plays pcm16 24 kHz mono at the real-time pace and returns ctx's
// error once ctx ends; played reports how much of the reply has gone out.
// All are called on the replying goroutine.
type audioOut struct {
	write  func(ctx context.Context, pcm []byte) error
	played func() time.Duration
	// firstPacket, if set, returns when the reply's first frame went out
	// (zero before).
	firstPacket func() time.Time
	// first, if set, is called with the arrival of the first audio delta.
	first func(time.Time)
}

// replyResult is how a reply played through an audioOut ended.
type replyResult struct {
	// transcript is the model's transcript of everything it said; spoken
	// the part played (cut at the interruption).
	transcript, spoken string
	interrupted        bool
}

// replyTo runs one reply whose audio out plays: forward (24 kHz
// mono, may be nil) is appended and committed, cmd is sent, and the audio
// deltas are written to out until response.done. When ctx ends (barge-in,
// leave) or out fails, the response is cancelled and its item truncated
// to what out played. Turns are served one at a time.
//
// A reply lost with a dropped socket before any of it was played is asked
// again (once) on the new session, with the turn's audio forwarded again.
func (b *Bridge) replyTo(ctx context.Context, t *Turn, forward []int16, cmd llmrt.ResponseCreateCommand, out audioOut) (replyResult, error) {
	res, err := b.replyOnce(ctx, t, forward, cmd, out)
	if errors.Is(err, errReplyLost) && out.played() == 0 && ctx.Err() == nil {
		b.log.Info("realtime_reply_retry", "turn_id", turnID(t), "cause", "socket_dropped")
		res, err = b.replyOnce(ctx, t, forward, cmd, out)
	}
	return res, err
}

func turnID(t *Turn) string {
	if t == nil {
		return ""
	}
	return t.ID
}

// replyOnce is one attempt of replyTo.
func (b *Bridge) replyOnce(ctx context.Context, t *Turn, forward []int16, cmd llmrt.ResponseCreateCommand, out audioOut) (replyResult, error) {
	r, err := b.startReply(ctx, t, forward, cmd)
	if err != nil {
		return replyResult{}, err
	}
	defer func() { b.m.framesSent(int(out.played() / (20 * time.Millisecond))) }()
	if err := b.play(ctx, r, out); err != nil {
		return b.cut(ctx, r, out.played(), err)
	}
	res := replyResult{transcript: r.transcript, spoken: r.transcript}
	switch r.status {
	case "completed":
		return res, nil
	case "lost":
		return res, errReplyLost
	}
	return res, fmt.Errorf("realtime: response %s ended %s", r.id, r.status)
}

// play writes r's audio deltas to out, in order, until the response is done
// and all of its audio is written. It returns the first write error (ctx's
// own when the reply is cut). It measures the first frame's latencies.
func (b *Bridge) play(ctx context.Context, r *response, out audioOut) error {
	return playOut(ctx, r.out, r.done, r.requestedAt, out, b.now, b.m, b.putBuf)
}

// playOut writes the audio chunks of in to out until done is closed and in is drained (both
// providers' replies). put takes each chunk back once written. It returns the first write
// error, and observes the first frame's latencies (from the first chunk and from requestedAt).
func playOut(ctx context.Context, in <-chan []byte, done <-chan struct{}, requestedAt time.Time, out audioOut,
	now func() time.Time, m *Metrics, put func([]byte)) error {
	var firstDelta time.Time
	observed := false
	write := func(p []byte) error {
		defer put(p)
		if firstDelta.IsZero() {
			firstDelta = now()
			if out.first != nil {
				out.first(firstDelta)
			}
		}
		err := out.write(ctx, p)
		if !observed && out.firstPacket != nil {
			if at := out.firstPacket(); !at.IsZero() {
				observed = true
				m.firstFrameLatency(at.Sub(firstDelta).Seconds())
				m.firstAudioLatency(at.Sub(requestedAt).Seconds())
			}
		}
		return err
	}
	for {
		select {
		case p := <-in:
			if err := write(p); err != nil {
				return err
			}
		case <-done:
			for {
				select {
				case p := <-in:
					if err := write(p); err != nil {
						return err
					}
				default:
					return nil
				}
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// getBuf returns a buffer of n bytes for an audio delta, reusing one that
// play is done with: the output path does not allocate per delta.
func (b *Bridge) getBuf(n int) []byte {
	select {
	case buf := <-b.free:
		if cap(buf) >= n {
			return buf[:n]
		}
	default:
	}
	return make([]byte, n, max(n, 9600))
}

// putBuf gives a delta's buffer back once written.
func (b *Bridge) putBuf(buf []byte) {
	select {
	case b.free <- buf[:0]:
	default:
	}
}

// startReply forwards the turn's audio (if any) and requests a response
// whose audio goes to the returned response's out channel.
func (b *Bridge) startReply(ctx context.Context, t *Turn, forward []int16, cmd llmrt.ResponseCreateCommand) (*response, error) {
	if err := admit(ctx, b.cfg.Gate, b.guild, SlotRealtime, b.cfg.Realtime.Model); err != nil {
		return nil, err
	}
	b.turnMu.Lock()
	defer b.turnMu.Unlock()
	conn, gen, err := b.ready(ctx)
	if err != nil {
		return nil, fmt.Errorf("realtime: reply: %w", err)
	}
	// A write that fails with ctx alive means the socket just died (the read
	// loop may not have noticed yet): the reply is lost, replyTo asks again
	// on the next session.
	lost := func(err error) error {
		if ctx.Err() == nil {
			return fmt.Errorf("%w: %w", errReplyLost, err)
		}
		return err
	}
	b.flushDeletes(ctx, conn, gen)
	if !b.current(conn) { // dropped while the deletes waited or went out
		return nil, lost(errSessionGone)
	}
	if len(forward) > 0 {
		b.mu.Lock()
		b.forwarding = turnID(t)
		b.mu.Unlock()
		if err := b.forward(ctx, conn, forward); err != nil {
			return nil, lost(err)
		}
	}
	r := b.newResponse(t, gen)
	r.forwarded = len(forward) > 0
	r.account = llm.Account{Guild: b.guild, Slot: SlotRealtime, Tally: llm.AccountFrom(ctx).Tally}
	r.out = make(chan []byte, 1024)
	if err := b.send(ctx, conn, r, t, cmd); err != nil {
		return nil, lost(err)
	}
	return r, nil
}

// cut ends a reply early: further audio is dropped, the response (if still
// streaming) is cancelled and awaited, and the item is truncated to played.
// cause is returned wrapped unless it is ctx's own end.
func (b *Bridge) cut(ctx context.Context, r *response, played time.Duration, cause error) (replyResult, error) {
	b.mu.Lock()
	r.muted, r.interrupted = true, true
	r.played = uint64(played / (20 * time.Millisecond))
	active := b.resp == r
	conn, gen := b.conn, b.connGen
	b.mu.Unlock()
	b.m.interrupted()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.cfg.CancelTimeout)
	defer cancel()
	cancelled := false
	if active && conn != nil && r.gen == gen {
		if err := conn.Send(cctx, llmrt.ResponseCancelCommand{}); err == nil {
			cancelled = true
			select {
			case <-r.done:
			case <-cctx.Done():
			}
		}
	}
	b.mu.Lock()
	ref := itemRef{id: r.item, gen: r.gen, audioBytes: r.audioBytes, transcript: r.transcript}
	if ref.transcript == "" {
		ref.transcript = r.deltas.String()
	}
	conn, gen = b.conn, b.connGen
	b.mu.Unlock()
	endMs, receivedMs, truncated := b.truncate(cctx, conn, gen, ref, int(played/time.Millisecond))
	if !active {
		b.hist.amendLast(cutText(ref.transcript, endMs, receivedMs))
	}
	b.log.Info("realtime_interrupted", "turn_id", r.turnID, "item_id", ref.id, "played_ms", endMs,
		"received_ms", receivedMs, "cancelled", cancelled, "truncated", truncated)
	res := replyResult{transcript: ref.transcript, spoken: cutText(ref.transcript, endMs, receivedMs), interrupted: true}
	if errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded) {
		return res, fmt.Errorf("realtime: reply interrupted: %w", cause)
	}
	return res, fmt.Errorf("realtime: play: %w", cause)
}

// truncate sends conversation.item.truncate for ref at playedMs (clamped
// to the audio received) when the item is in the current session and was
// not played in full. It returns the end and received milliseconds.
func (b *Bridge) truncate(ctx context.Context, conn *llmrt.Conn, gen uint64, ref itemRef, playedMs int) (endMs, receivedMs int, ok bool) {
	receivedMs = ref.audioBytes / (frameBytes / 20)
	endMs = min(playedMs, receivedMs)
	if ref.id == "" || ref.gen != gen || conn == nil || endMs >= receivedMs {
		return endMs, receivedMs, false
	}
	cmd := llmrt.ItemTruncateCommand{ItemID: ref.id, AudioEnd: time.Duration(endMs) * time.Millisecond}
	if err := conn.Send(ctx, cmd); err != nil {
		b.log.Warn("realtime_truncate_failed", "item_id", ref.id, "err", err)
		return endMs, receivedMs, false
	}
	b.m.truncated()
	return endMs, receivedMs, true
}

// takeBack implements provider: after a false end the turn and the answer to it leave the
// summary at once (and a response.done still to come adds no line), and the conversation loses
// their items: the answer's assistant item and, native, the user items of the turn's audio. A
// reply cut while its audio was forwarded, or between the commit and response.create, asked
// for no response: what its audio committed is collected by the next reply (orphaned). The
// deletes wait for the next reply, which sends them before it forwards anything
// (flushDeletes): by then the response has ended and its items are known, and the whole is
// answered from a conversation that holds it once. Items of an earlier session (a reconnect or
// rollover since) are gone with it; that session's summary was built before the take-back.
func (b *Bridge) takeBack(turnID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.hist.forget(turnID) // under b.mu: finish adds the answer's line under it
	if b.conn == nil {
		return // no session: the next one starts from the summary
	}
	if b.deletesGen != b.connGen {
		b.takenBack, b.orphans, b.orphaned, b.deletesGen = nil, nil, false, b.connGen
	}
	if r := b.last; r != nil && r.turnID == turnID {
		r.dropped = true
		if r.gen == b.connGen {
			b.takenBack = append(b.takenBack, r)
		}
	}
	if b.forwarding == turnID {
		b.forwarding, b.orphaned = "", true
	}
	b.log.Info("realtime_taken_back", "turn_id", turnID)
}

// flushDeletes sends the deletes take-backs left for session gen (conversation.item.delete).
// Call with turnMu, after ready (the taken-back responses have ended), before anything of the
// next reply is sent. The sends are not cut by the next reply's end: the deletes are owed.
func (b *Bridge) flushDeletes(ctx context.Context, conn *llmrt.Conn, gen uint64) {
	b.mu.Lock()
	orphaned := b.orphaned && b.deletesGen == gen
	b.orphaned = false
	b.mu.Unlock()
	if orphaned {
		b.collectOrphans(ctx, conn, gen)
	}
	b.mu.Lock()
	var ids []string
	if b.deletesGen == gen && b.conn == conn { // not dropped while collectOrphans waited
		for _, r := range b.takenBack {
			if r.item != "" {
				ids = append(ids, r.item)
			}
			ids = append(ids, r.userItems...)
		}
		ids = append(ids, b.orphans...)
	}
	b.takenBack, b.orphans = nil, nil
	b.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.cfg.CancelTimeout)
	defer cancel()
	sent := 0
	for _, id := range ids {
		if err := conn.Send(sctx, llmrt.ItemDeleteCommand{ItemID: id}); err != nil {
			b.log.Warn("realtime_delete_failed", "item_id", id, "err", err)
			continue
		}
		sent++
	}
	b.log.Info("realtime_items_deleted", "sent", sent, "of", len(ids))
}

// collectOrphans clears the input buffer (the audio a cut forward appended and did not
// commit) and waits for the input_audio_buffer.cleared that answers this clear: the server
// answers client events in order, so every item committed before it has been announced by
// then, and none was taken by a response (the last response has ended). Those items are the
// orphans. The wait ends early when session gen drops (its items are gone with it). Call with
// turnMu.
func (b *Bridge) collectOrphans(ctx context.Context, conn *llmrt.Conn, gen uint64) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.cfg.CancelTimeout)
	defer cancel()
	cleared := make(chan struct{})
	b.mu.Lock()
	b.cleared, b.clearWant = cleared, b.clears+1
	b.mu.Unlock()
	err := b.clear(wctx, conn)
	if err == nil {
		select {
		case <-cleared:
			return // handle took the committed items as orphans, or the session dropped
		case <-wctx.Done():
			err = wctx.Err()
		case <-b.done:
			err = ErrClosed
		}
	}
	b.log.Warn("realtime_orphans_unconfirmed", "err", err, "session_gen", gen)
	b.mu.Lock()
	if b.cleared == cleared { // not answered: delete what has been announced
		b.endOrphanWaitLocked(true)
	}
	b.mu.Unlock()
}

// endOrphanWaitLocked ends collectOrphans's wait (b.cleared set); with take, the items committed
// and not taken by a response are the orphans. Call with b.mu.
func (b *Bridge) endOrphanWaitLocked(take bool) {
	if take {
		b.orphans, b.committed = append(b.orphans, b.committed...), nil
	}
	close(b.cleared)
	b.cleared = nil
}

package voice

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/banterbot/banter/discord/voice/gateway"
	"github.com/banterbot/banter/discord/voice/pace"
	"github.com/banterbot/banter/discord/voice/rtp"
)

const (
	frameDuration   = 20 * time.Millisecond
	samplesPerFrame = 960 // 20 ms at 48 kHz
	silenceFrames   = 5
)

// silenceFrame is the Opus silence frame sent five times after speaking.
const silenceFrame = "\xF8\xFF\xFE"

// SendOpus sends one 20 ms Opus frame. Without a Config.Clock it blocks
// until the frame's slot: the first frame of a talk spurt goes out at once
// after Op 5 Speaking (one slot later on a connection's very first spurt, so
// the server has mapped the SSRC), each next one 20 ms after the previous
// slot on a monotonic grid without drift. If the caller falls behind by a
// whole frame or more, the missed slots are skipped (the RTP timestamp
// advances over them) instead of sending a burst. opus is not retained. An
// E2EE error (dave.ErrNotReady before DAVE's first transition) drops the
// frame and is returned wrapped; the pacing slot and the RTP clock still
// advance.
//
// With a Clock, SendOpus end-to-end encrypts the frame and queues it, and
// returns at once while fewer than ClockOptions.Lookahead frames wait
// (else when the queue is half empty; ctx bounds that wait); the clock
// sends it in its slot, on the same grid, and a slot with no frame queued
// is skipped as above. Queued frames are sent even if ctx ends: a reply's
// last frames play out after its producer returns; Interrupt drops them.
//
// SendOpus and StopSpeaking may not be called concurrently (an error says
// so); callers feed one goroutine.
func (c *Conn) SendOpus(ctx context.Context, opus []byte) error {
	if !c.sending.CompareAndSwap(false, true) {
		return errConcurrentSend
	}
	defer c.sending.Store(false)
	if err := c.startSpeaking(ctx); err != nil {
		return err
	}
	if c.clock != nil {
		return c.queueFrame(ctx, opus, true)
	}
	return c.sendFrame(ctx, opus, true)
}

// Interrupt drops the frames queued on the send clock and not yet sent (a
// barge-in: nothing more of the reply may be heard) and returns how many of
// them were audio (SendOpus's; not StopSpeaking's silence).
// It may be called from any goroutine, also while SendOpus blocks; without
// a Clock it does nothing (SendOpus sends each frame in its call).
func (c *Conn) Interrupt() int {
	if c.clock == nil {
		return 0
	}
	return c.q.discard()
}

// Queued returns how many audio frames wait on the send clock for their
// slot (queued by SendOpus, not yet sent nor dropped; StopSpeaking's closing
// silence is not counted); 0 without a Clock. Frames handed to SendOpus minus
// Queued minus what Interrupt dropped is what has gone out, whenever it is
// read. Safe from any goroutine.
func (c *Conn) Queued() int {
	if c.clock == nil {
		return 0
	}
	return c.q.audio()
}

// queueFrame end-to-end encrypts opus (e2ee) and queues it for the clock.
func (c *Conn) queueFrame(ctx context.Context, opus []byte, e2ee bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.ctx.Err() != nil {
		return c.endErr()
	}
	payload := opus
	if c.e2ee != nil && e2ee && string(opus) != silenceFrame {
		var err error
		if payload, err = c.e2ee.EncryptOpus(c.e2eeBuf[:0], opus); err != nil {
			// Dropped: its slot passes empty on the clock.
			return fmt.Errorf("voice: e2ee encrypt: %w", err)
		}
		c.e2eeBuf = payload[:0]
	}
	kick, err := c.q.push(ctx, c.ctx.Done(), payload, !e2ee)
	if err != nil {
		if errors.Is(err, ErrClosed) {
			return c.endErr()
		}
		return err
	}
	if kick {
		c.clock.kick(c, c.firstSpurt)
		c.firstSpurt = false
	}
	return nil
}

// stopClock ends a talk spurt on the clock: the silence frames are queued
// behind the reply's and it returns once they have been sent.
func (c *Conn) stopClock(ctx context.Context) error {
	for range silenceFrames {
		if err := c.queueFrame(ctx, c.silence[:], false); err != nil {
			return err
		}
	}
	if c.q.stop() {
		c.clock.kick(c, c.firstSpurt)
		c.firstSpurt = false
	}
	select {
	case <-c.q.drained:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.ctx.Done():
		return c.endErr()
	}
}

// StopSpeaking ends a talk spurt: five silence frames F8 FF FE on the same
// pacing grid (unencrypted by E2EE, as DAVE specifies), then Op 5 with
// speaking 0. It does nothing if the connection is not speaking.
func (c *Conn) StopSpeaking(ctx context.Context) error {
	if !c.sending.CompareAndSwap(false, true) {
		return errConcurrentSend
	}
	defer c.sending.Store(false)
	if !c.speaking {
		return nil
	}
	if c.clock != nil {
		if err := c.stopClock(ctx); err != nil {
			return err
		}
	}
	for range silenceFrames {
		if c.clock != nil {
			break
		}
		if err := c.sendFrame(ctx, c.silence[:], false); err != nil {
			return err
		}
	}
	c.speaking = false
	if err := c.writeJSON(gateway.OpSpeaking, gateway.SpeakingCommand{SSRC: c.ssrc}); err != nil {
		return fmt.Errorf("voice: speaking off: %w", err)
	}
	return nil
}

func (c *Conn) startSpeaking(ctx context.Context) error {
	if c.speaking {
		return nil
	}
	if c.ctx.Err() != nil {
		return c.endErr()
	}
	if err := c.writeJSON(gateway.OpSpeaking, gateway.SpeakingCommand{Speaking: gateway.SpeakingMicrophone, SSRC: c.ssrc}); err != nil {
		return fmt.Errorf("voice: speaking: %w", err)
	}
	c.speaking = true
	if c.clock != nil {
		c.firstSpurt = !c.announced
		c.announced = true
		return nil
	}
	if !c.lastSend.IsZero() {
		// Keep the RTP clock running across the pause.
		c.rtpTS += uint32(time.Since(c.lastSend)/frameDuration) * samplesPerFrame
	}
	c.pacer.Reset()
	if !c.announced {
		// The very first Speaking maps our SSRC on the server; give it one
		// frame slot on the WebSocket before the first RTP packet races it
		// over UDP (later talk spurts start at once).
		c.announced = true
		if _, err := c.pacer.Wait(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (c *Conn) sendFrame(ctx context.Context, opus []byte, e2ee bool) error {
	if prio := c.cfg.SendRealtimePriority; prio > 0 && !c.rtFailed {
		leave, err := pace.EnterRealtime(prio)
		if err != nil {
			c.rtFailed, c.pacer.ThreadSleep = true, false
			c.log.Warn("voice: real-time send thread refused; pacing normally", "err", err)
		} else {
			defer leave()
			c.pacer.ThreadSleep = true
		}
	}
	slot, err := c.pacer.Wait(ctx)
	if err != nil {
		return err
	}
	if c.ctx.Err() != nil {
		return c.endErr()
	}
	c.rtpTS += uint32(slot.Skipped) * samplesPerFrame
	payload := opus
	if c.e2ee != nil && e2ee && string(opus) != silenceFrame {
		if payload, err = c.e2ee.EncryptOpus(c.e2eeBuf[:0], opus); err != nil {
			// The frame is dropped (e.g. dave.ErrNotReady before the first
			// transition); its slot still passes on the RTP clock.
			c.rtpTS += samplesPerFrame
			return fmt.Errorf("voice: e2ee encrypt: %w", err)
		}
		c.e2eeBuf = payload[:0]
	}
	pkt, err := c.seal(payload)
	if err != nil {
		return err
	}
	c.lastSend = time.Now()
	if _, err := c.udp.Write(pkt); err != nil {
		if c.ctx.Err() != nil {
			return c.endErr()
		}
		return fmt.Errorf("voice: send rtp: %w", err)
	}
	c.m.sent(slot.Skipped, slot.Lateness)
	return nil
}

// seal builds the next RTP packet around payload: header, transport
// encryption, sequence number and timestamp advanced.
func (c *Conn) seal(payload []byte) ([]byte, error) {
	c.hdr = rtp.Header{PayloadType: rtp.PayloadTypeOpus, SequenceNumber: c.rtpSeq, Timestamp: c.rtpTS, SSRC: c.ssrc}
	n, err := c.hdr.MarshalTo(c.hdrBuf[:])
	if err != nil {
		return nil, fmt.Errorf("voice: rtp header: %w", err)
	}
	c.counter++
	pkt := c.sendCipher.Seal(c.sendBuf[:0], c.hdrBuf[:n], payload, c.counter)
	c.sendBuf = pkt[:0]
	c.rtpSeq++
	c.rtpTS += samplesPerFrame
	return pkt, nil
}

// endErr is what sending returns once the connection has ended: why it ended
// (a *CloseError, a resume failure) or ErrClosed. c.ctx must be done (end
// records the reason before cancelling).
func (c *Conn) endErr() error {
	if c.err != nil {
		return c.err
	}
	return ErrClosed
}

package voicesim

import (
	"context"
	"fmt"
)

// SendOpus sends one Opus frame as RTP now, without pacing, for a member
// whose audio comes from a live source (a microphone streamed by the
// control API) that paces itself at one frame per 20 ms. With DAVE the
// frame is encrypted end to end first; before the member has a sender key
// nothing is sent, DAVENotReady is counted and the error wraps
// dave.ErrNotReady, so the caller can keep the audio for later. It is
// serialised with PlayOpus.
func (m *Member) SendOpus(frame []byte) error {
	m.playMu.Lock()
	defer m.playMu.Unlock()
	if m.dave != nil {
		enc, err := m.dave.EncryptOpus(m.encBuf[:0], frame)
		if err != nil {
			m.count(func(st *MemberStats) { st.DAVENotReady++ })
			return fmt.Errorf("voicesim: member %s send: %w", m.opts.UserID, err)
		}
		m.encBuf, frame = enc, enc
	}
	m.seq++
	m.ts += frameSamples
	m.counter++
	m.sendBuf = m.tr.appendRTP(&m.nonce, m.sendBuf[:0], m.seq, m.ts, m.p.ssrc, frame, m.counter)
	if _, err := m.conn.WriteToUDP(m.sendBuf, m.s.UDPAddr()); err != nil {
		return fmt.Errorf("voicesim: member %s send: %w", m.opts.UserID, err)
	}
	return nil
}

// SetSpeaking announces the member's speaking state (op 5, flag 1 or 0) to
// the channel, as a client does at the start and end of a talk spurt.
func (m *Member) SetSpeaking(on bool) {
	if on {
		m.setSpeaking(1)
	} else {
		m.setSpeaking(0)
	}
}

// E2EE names the member's end-to-end encryption state: "off" without DAVE,
// else its DAVE session's status ("inactive", "pending", "active": it can
// hear and be heard).
func (m *Member) E2EE() string {
	if m.dave == nil {
		return "off"
	}
	return m.dave.Status().String()
}

// SilenceFrame is the Opus frame clients send (five times) to end a talk spurt.
func SilenceFrame() []byte { return []byte(silence) }

// TakeHeardPCM returns, per speaker, the decoded 48 kHz stereo PCM the
// member heard since the last call, and removes it from the member (a live
// listener streams it on, so a long session does not accumulate it; the Opus
// frames stay for Heard and WaitHeard, HeardPCM returns only what was not
// taken). It waits until there is something or ctx ends (then it returns
// ctx's error).
func (m *Member) TakeHeardPCM(ctx context.Context) (map[string][]int16, error) {
	for {
		m.mu.Lock()
		var out map[string][]int16
		for user, tr := range m.heard {
			if len(tr.pcm) > 0 {
				if out == nil {
					out = map[string][]int16{}
				}
				out[user] = tr.pcm
				tr.pcm = nil
			}
		}
		ch := m.changed
		m.mu.Unlock()
		if out != nil {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("voicesim: member %s: %w", m.opts.UserID, ctx.Err())
		case <-ch:
		}
	}
}

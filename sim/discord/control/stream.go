package control

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/banterbot/banter/audio/opus"
	"github.com/banterbot/banter/discord/dave"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/voicesim"
)

// Voice stream framing and pacing.
const (
	streamRate     = 48000
	frameMono      = streamRate / 50 // samples per 20 ms frame, one channel
	frameTime      = 20 * time.Millisecond
	startCushion   = 3 * frameMono          // buffered before a talk spurt starts (jitter)
	spurtEndsAfter = 10                     // empty frame slots (200 ms) that end a talk spurt
	maxBuffered    = 60 * streamRate        // one minute of audio waiting to be sent
	maxWaiting     = 5 * streamRate         // kept while end-to-end encryption is being set up
	speakingHold   = 300 * time.Millisecond // no frame from a speaker this long: not speaking
	streamIdle     = 100 * time.Millisecond // how often speaking states are re-checked
	writeWait      = 10 * time.Second       // one WebSocket write
	maxStreamMsg   = 1 << 20                // one binary message from the client
	silenceFrames  = 5                      // sent to end a talk spurt, as clients do
	upgradeBufSize = 16 << 10
)

// streamMsg is a JSON (text) message of the voice stream.
type streamMsg struct {
	Type     string `json:"type"`
	UserID   string `json:"user_id,omitempty"`
	Speaking bool   `json:"speaking"`
	SSRC     uint32 `json:"ssrc,omitempty"`
	E2EE     string `json:"e2ee,omitempty"` // ready, e2ee: off, inactive, pending, active
}

// voiceStream is GET /voice/stream?as=NAME[&leave_on_close=1], a WebSocket
// that makes a member who joined with POST /voice/join a live participant:
//
//   - binary messages from the client are 16-bit little-endian mono PCM at
//     48 kHz, of any length, sent as they are captured (a microphone) or all
//     at once (a recording): the member speaks them into the channel, paced
//     at 20 ms per Opus frame, announcing speaking at the start of each talk
//     spurt and ending it (five silence frames, speaking 0) after 200 ms
//     without audio;
//   - binary messages to the client carry what the member hears: one byte n,
//     n bytes of the speaker's user id, then 16-bit little-endian stereo PCM
//     at 48 kHz, decoded from the speaker's Opus;
//   - text messages to the client are JSON: {"type":"ready","ssrc","e2ee"}
//     first, {"type":"e2ee","e2ee"} when the member's end-to-end encryption
//     changes state (with DAVE, audio flows both ways once it is "active";
//     audio sent before waits), and {"type":"speaking","user_id","speaking"}
//     whenever someone in the channel (the member included) starts or
//     stops being heard.
//
// With leave_on_close=1 the member leaves voice when the socket closes.
func (c *Controller) voiceStream(w http.ResponseWriter, r *http.Request) {
	as := r.URL.Query().Get("as")
	u, m, err := c.member(as)
	if err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	up := websocket.Upgrader{ReadBufferSize: upgradeBufSize, WriteBufferSize: upgradeBufSize, CheckOrigin: sameOrigin}
	ws, err := up.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader answered
	}
	defer ws.Close()
	ws.SetReadLimit(maxStreamMsg)
	enc, err := opus.NewEncoder(opus.EncoderConfig{Application: opus.ApplicationVoIP, Bitrate: 64000})
	if err != nil {
		_ = ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseInternalServerErr, err.Error()))
		return
	}
	ls := &liveStream{ws: ws, m: m, self: string(u), enc: enc, wake: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	if ls.writeJSON(streamMsg{Type: "ready", SSRC: m.SSRC(), E2EE: m.E2EE()}) != nil {
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() { ls.send(ctx) })
	wg.Go(func() { ls.listen(ctx) })
	ls.read() // until the client closes or an error
	cancel()
	wg.Wait()
	if r.URL.Query().Get("leave_on_close") == "1" {
		c.leaveMember(u, m)
	}
}

// leaveMember takes a member the API put in voice out again: off the voice
// server and out of the channel's voice state (VOICE_STATE_UPDATE with no
// channel reaches the bot).
func (c *Controller) leaveMember(u discordsim.UserID, m *voicesim.Member) {
	c.mu.Lock()
	if c.voice[u] == m {
		delete(c.voice, u)
	}
	c.mu.Unlock()
	m.Leave()
	if vs, ok := c.sim.VoiceStateOf(c.guild, u); ok {
		_ = c.sim.LeaveVoice(u, vs.Channel)
	}
}

// sameOrigin accepts WebSocket clients that are not browsers (no Origin)
// and pages served from the control API's own origin (or proxied to it
// with the Origin removed): a page on another site must not drive the
// simulator through the user's browser.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host
}

// liveStream is one voice stream: the member, the socket and the audio
// waiting to be sent.
type liveStream struct {
	ws   *websocket.Conn
	m    *voicesim.Member
	self string
	enc  *opus.Encoder

	wmu sync.Mutex // serialises writes to ws

	mu   sync.Mutex // guards pcm
	pcm  []int16    // mono samples waiting to be sent
	wake chan struct{}
}

func (ls *liveStream) write(typ int, data []byte) error {
	ls.wmu.Lock()
	defer ls.wmu.Unlock()
	_ = ls.ws.SetWriteDeadline(time.Now().Add(writeWait))
	return ls.ws.WriteMessage(typ, data)
}

func (ls *liveStream) writeJSON(v streamMsg) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return ls.write(websocket.TextMessage, b)
}

// read queues the client's PCM until the socket closes.
func (ls *liveStream) read() {
	for {
		typ, data, err := ls.ws.ReadMessage()
		if err != nil {
			return
		}
		if typ != websocket.BinaryMessage || len(data) < 2 {
			continue
		}
		ls.mu.Lock()
		room := maxBuffered - len(ls.pcm)
		for i := 0; i+1 < len(data) && room > 0; i, room = i+2, room-1 {
			ls.pcm = append(ls.pcm, int16(binary.LittleEndian.Uint16(data[i:])))
		}
		ls.mu.Unlock()
		select {
		case ls.wake <- struct{}{}:
		default:
		}
	}
}

// next takes one frame of mono PCM when one is buffered (need: how many
// samples must be waiting).
func (ls *liveStream) next(need int) ([]int16, bool) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if len(ls.pcm) < need {
		return nil, false
	}
	f := append([]int16(nil), ls.pcm[:frameMono]...)
	ls.pcm = ls.pcm[frameMono:]
	if len(ls.pcm) == 0 {
		ls.pcm = nil // let the buffer go
	}
	return f, true
}

// send plays the queued PCM into the channel, one Opus frame per 20 ms, in
// talk spurts.
func (ls *liveStream) send(ctx context.Context) {
	stereo := make([]int16, 2*frameMono)
	pkt := make([]byte, opus.MaxPacketSize)
	talking, empty := false, 0
	var tick *time.Ticker
	defer func() {
		if tick != nil {
			tick.Stop()
		}
		if talking {
			ls.endSpurt()
		}
	}()
	for {
		if !talking {
			// Idle: wait for enough audio to start a spurt.
			select {
			case <-ctx.Done():
				return
			case <-ls.wake:
			}
			if _, ok := ls.peek(startCushion); !ok {
				continue
			}
			talking, empty = true, 0
			ls.m.SetSpeaking(true)
			_ = ls.writeJSON(streamMsg{Type: "speaking", UserID: ls.self, Speaking: true})
			tick = time.NewTicker(frameTime)
		}
		f, ok := ls.next(frameMono)
		switch {
		case ok:
			empty = 0
			for i, s := range f {
				stereo[2*i], stereo[2*i+1] = s, s
			}
			n, err := ls.enc.Encode(stereo, pkt)
			if err == nil {
				err = ls.m.SendOpus(pkt[:n])
			}
			if errors.Is(err, dave.ErrNotReady) {
				ls.unread(f) // end-to-end encryption not set up yet: keep the audio for later
				err = nil
			}
			if err != nil {
				_ = ls.write(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseInternalServerErr, err.Error()))
				return
			}
		case empty+1 >= spurtEndsAfter:
			ls.endSpurt()
			talking = false
			tick.Stop()
			tick = nil
			continue
		default:
			empty++
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// unread puts a frame back at the front of the queue, which then keeps
// only its last maxWaiting samples: what is said while nobody can hear it
// yet is not played long after.
func (ls *liveStream) unread(f []int16) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.pcm = append(f, ls.pcm...)
	if over := len(ls.pcm) - maxWaiting; over > 0 {
		ls.pcm = append(ls.pcm[:0:0], ls.pcm[over:]...)
	}
}

// peek reports whether need samples are buffered.
func (ls *liveStream) peek(need int) (int, bool) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return len(ls.pcm), len(ls.pcm) >= need
}

// endSpurt sends the silence frames that end a talk spurt and announces
// speaking 0.
func (ls *liveStream) endSpurt() {
	for range silenceFrames {
		if err := ls.m.SendOpus(voicesim.SilenceFrame()); err != nil {
			break
		}
	}
	ls.m.SetSpeaking(false)
	_ = ls.writeJSON(streamMsg{Type: "speaking", UserID: ls.self, Speaking: false})
}

// listen forwards what the member hears to the client and reports who is
// speaking.
func (ls *liveStream) listen(ctx context.Context) {
	heard := make(chan map[string][]int16)
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		defer close(heard)
		for {
			got, err := ls.m.TakeHeardPCM(ctx)
			if err != nil {
				return
			}
			select {
			case heard <- got:
			case <-ctx.Done():
				return
			}
		}
	})
	last := map[string]time.Time{}
	e2ee := ls.m.E2EE()
	idle := time.NewTicker(streamIdle)
	defer idle.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case got, ok := <-heard:
			if !ok {
				return
			}
			now := time.Now()
			for user, pcm := range got {
				if _, on := last[user]; !on {
					if ls.writeJSON(streamMsg{Type: "speaking", UserID: user, Speaking: true}) != nil {
						return
					}
				}
				last[user] = now
				if ls.write(websocket.BinaryMessage, audioMessage(user, pcm)) != nil {
					return
				}
			}
		case now := <-idle.C:
			if st := ls.m.E2EE(); st != e2ee {
				e2ee = st
				if ls.writeJSON(streamMsg{Type: "e2ee", E2EE: st}) != nil {
					return
				}
			}
			for user, at := range last {
				if now.Sub(at) > speakingHold {
					delete(last, user)
					if ls.writeJSON(streamMsg{Type: "speaking", UserID: user, Speaking: false}) != nil {
						return
					}
				}
			}
		}
	}
}

// audioMessage frames heard PCM for the client: [n][user id][s16le stereo].
func audioMessage(user string, pcm []int16) []byte {
	if len(user) > 255 {
		user = user[:255]
	}
	b := make([]byte, 0, 1+len(user)+2*len(pcm))
	b = append(b, byte(len(user)))
	b = append(b, user...)
	for _, s := range pcm {
		b = binary.LittleEndian.AppendUint16(b, uint16(s))
	}
	return b
}

package audio

import (
	"bytes"
	"fmt"
	"time"

	"github.com/banterbot/banter/audio/jitter"
	"github.com/banterbot/banter/audio/opus"
	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/resample"
	"github.com/banterbot/banter/audio/vad"
)

// ListenerConfig configures one speaker's receive pipeline. Zero fields
// take defaults.
type ListenerConfig struct {
	// Format is the mono format utterances are delivered in: 16 kHz for
	// speech-to-text (default), 24 kHz for the realtime API.
	Format pcm.Format
	// Jitter sizes the reorder buffer (default 60 ms window).
	Jitter jitter.Config
	// VAD tunes endpointing; its SampleRate is set from Format.
	VAD vad.Config
	// MaxConceal is how much of a loss Opus concealment fills [60 ms]; the
	// rest of a longer loss is silence. Negative disables concealment.
	MaxConceal time.Duration
	// DirectDecode makes libopus decode straight to Format (8, 12, 16 or
	// 24 kHz mono) instead of to 48 kHz stereo followed by the resampler:
	// about half the decode cost and no resampling (see docs/audio.md).
	// libopus band-limits in the codec domain, so no aliasing is added.
	DirectDecode bool
	// MaxJitterHold caps the jitter hold [200 ms]: on a stream whose packets have come late,
	// silence counts toward the end of an utterance only once it has lasted as long as the
	// packets were late (the longest stall seen lately, less a tick), so a pause whose next
	// packet is late is not heard as longer than it was. Negative disables it.
	MaxJitterHold time.Duration
}

// stallDecay is how many packets a stall is remembered for before the jitter hold comes down
// a tick (150: 3 s of audio).
const stallDecay = 150

// stallReset is how many ticks without packets are a pause or an outage, not a late packet
// (25: 500 ms).
const stallReset = 25

// catchUpWithin is how many packets the ones behind a late packet have to catch up (arrive
// faster than they were sent) for its lateness to count as the path's (25: 500 ms).
const catchUpWithin = 25

// Listener is one speaker's receive pipeline: jitter buffer → Opus decode
// (with loss concealment and FEC) → downmix and resample → VAD and
// endpointing. Events go to the handler given to NewListener.
//
// Time: the owner calls Tick once per 20 ms of wall time. Packets that stop
// (the speaker released push-to-talk, Discord stops sending in silence)
// then become silence for the endpointer, so utterances end on time (after
// a talk spurt closed with silence frames, the jitter window's ticks count
// as silence too, once it has passed); gaps in
// the RTP timestamps (resumed speech) become silence too. Long silences are
// compressed: at most as much as the endpointer needs to end an utterance
// and refill its pre-roll is fed, so Event positions are audio time.
//
// Push, Tick and Flush do not allocate (AllocsPerRun test). They run the
// handler synchronously on the caller's goroutine. A Listener is not safe
// for concurrent use: one goroutine owns a speaker.
type Listener struct {
	jb      *jitter.Buffer
	dec     *opus.Decoder
	rs      *resample.Resampler // nil with DirectDecode
	ep      *vad.Endpointer
	handle  func(vad.Event)
	metrics *Metrics

	pcm48 []int16 // decoded audio (48 kHz stereo, or Format with DirectDecode)
	lost  int     // values in one 20 ms frame of decoded audio
	tick  uint32  // RTP ticks (48 kHz) per decoded sample
	rsOut []int16 // resampled
	acc   []int16 // resampled samples waiting for a whole frame
	fl    int     // mono samples per 20 ms frame
	zero  []int16 // one silent frame

	windowTicks int
	concealN    int // frames of loss concealment at most
	gapN        int // silence frames fed for one gap at most
	preN        int // pre-roll frames

	// The jitter hold. ticks counts Ticks (the arrival clock); late is how much later than the
	// fastest packet of the stream lately (by arrival tick against RTP timestamp) the last one
	// came, in RTP units, measured against the one before it (lastArr, lastTS; RFC 3550's
	// transit time, relative). spike is the most ticks late since late was last taken as on
	// time, waiting for the packets behind it to catch up (caught, in RTP units, within
	// spikeAge packets). stall is the most ticks late seen lately, at most stallMax; it comes
	// down a tick every stallDecay packets (stallAge).
	ticks, lastArr            int64
	lastTS                    uint32
	haveArr                   bool
	late, caught              int64
	spike, spikeAge           int
	stall, stallMax, stallAge int
	tickFed                   int // silence frames Tick fed since the last packet arrived

	stale  bool // silence frames were skipped: reset the decoder before the next
	haveTS bool
	nextTS uint32 // expected timestamp of the next packet
	pushed bool   // a packet arrived since the last Tick
	quiet  bool   // the last packet was the Opus silence frame clients send before they stop
	idle   int    // Ticks without packets
	filled int    // silence frames fed since the last packet
}

// NewListener builds a Listener. handle receives every endpointer event;
// an EventEnd's Audio is only valid during the call (copy it, e.g. with
// wav.Append, to keep it). m may be nil.
func NewListener(cfg ListenerConfig, handle func(vad.Event), m *Metrics) (*Listener, error) {
	if handle == nil {
		return nil, fmt.Errorf("audio: new listener: nil event handler")
	}
	if cfg.Format == (pcm.Format{}) {
		cfg.Format = pcm.Speech16k()
	}
	if cfg.Format.Channels != 1 {
		return nil, fmt.Errorf("audio: new listener: format %v is not mono", cfg.Format)
	}
	if cfg.MaxConceal == 0 {
		cfg.MaxConceal = 60 * time.Millisecond
	}
	cfg.VAD.SampleRate = cfg.Format.Rate
	jb, err := jitter.New(cfg.Jitter)
	if err != nil {
		return nil, fmt.Errorf("audio: new listener: %w", err)
	}
	var dec *opus.Decoder
	var rs *resample.Resampler
	if cfg.DirectDecode {
		dec, err = opus.NewDecoderFormat(cfg.Format.Rate, 1)
	} else {
		dec, err = opus.NewDecoder()
		if err == nil {
			rs, err = resample.New(pcm.Discord(), cfg.Format)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("audio: new listener: %w", err)
	}
	ep, err := vad.New(cfg.VAD)
	if err != nil {
		return nil, fmt.Errorf("audio: new listener: %w", err)
	}
	vc := ep.Config()
	window := cfg.Jitter.Window
	if window == 0 {
		window = 60 * time.Millisecond
	}
	l := &Listener{
		jb: jb, dec: dec, rs: rs, ep: ep, handle: handle, metrics: m,
		pcm48:       make([]int16, opus.MaxFrameSamples*opus.Channels),
		fl:          ep.FrameLen(),
		windowTicks: int((window + pcm.FrameDuration - 1) / pcm.FrameDuration),
		concealN:    max(0, int(cfg.MaxConceal/pcm.FrameDuration)),
		preN:        int(vc.PreRoll / pcm.FrameDuration),
	}
	if cfg.MaxJitterHold == 0 {
		cfg.MaxJitterHold = 200 * time.Millisecond
	}
	if cfg.MaxJitterHold > 0 { // the hold is the stall less a tick
		l.stallMax = int(cfg.MaxJitterHold/pcm.FrameDuration) + 1
	}
	l.gapN = int((vc.EndSilence+vc.PreRoll)/pcm.FrameDuration) + 1
	l.lost = dec.Rate() / 50 * dec.Channels()
	l.tick = uint32(opus.SampleRate / dec.Rate())
	accCap := len(l.pcm48)
	if rs != nil {
		l.rsOut = make([]int16, rs.MaxOut(len(l.pcm48)))
		accCap = len(l.rsOut)
	}
	l.acc = make([]int16, 0, accCap+l.fl)
	l.zero = make([]int16, l.fl)
	return l, nil
}

// Active reports whether the speaker is mid-utterance (for room-aware
// coalescing: hold other turns while someone is still talking).
func (l *Listener) Active() bool { return l.ep.Active() }

// Speaking reports whether the utterance in progress has at least the
// configured SpeakingMin of speech (the barge-in signal).
func (l *Listener) Speaking() bool { return l.ep.Speaking() }

// Speech returns the speech in the utterance in progress so far (0 between
// utterances); see vad.Endpointer.Speech for measuring talk over the bot.
func (l *Listener) Speech() time.Duration { return l.ep.Speech() }

// Position returns the endpointer's stream position (audio time).
func (l *Listener) Position() time.Duration { return l.ep.Position() }

// Format returns the format of utterance audio.
func (l *Listener) Format() pcm.Format {
	return pcm.Format{Rate: l.ep.Config().SampleRate, Channels: 1}
}

// Stats returns the jitter buffer's counters.
func (l *Listener) Stats() jitter.Stats { return l.jb.Stats() }

// JitterHold returns how much later than EndSilence after the last packet an utterance ends
// now: the longest stall of the stream's packets seen lately, less a tick (0 on a steady
// stream), at most ListenerConfig.MaxJitterHold.
func (l *Listener) JitterHold() time.Duration {
	return time.Duration(l.hold()) * pcm.FrameDuration
}

func (l *Listener) hold() int { return max(0, l.stall-1) }

// Push takes one received packet (the payload is copied) and runs every
// frame it makes ready through the pipeline.
func (l *Listener) Push(p jitter.Packet) {
	dtx := isDTX(p.Payload)
	l.pushed = l.pushed || !dtx // a DTX packet marks a pause: wall time runs on
	r := l.jb.Push(p)
	l.metrics.pushed(r)
	if !dtx {
		// a DTX packet in a pause does not reopen the talk spurt the silence frames closed
		sf := opus.SilenceFrame()
		quiet := bytes.Equal(p.Payload, sf[:])
		// Measured: what the jitter buffer takes (not a duplicate, nor too late to play).
		if r == jitter.PushAccepted || r == jitter.PushRestarted {
			l.measureStall(&p, r == jitter.PushRestarted, quiet)
		}
		l.quiet = quiet
	}
	for o, ok := l.jb.Pop(); ok; o, ok = l.jb.Pop() {
		l.process(&o)
	}
}

// measureStall notes how late a packet came: the time since the last packet's arrival (in
// Ticks) less the time between their timestamps, added to how late the last one came, and no
// less than 0 (a packet faster than every one lately is the new measure of on time). A leak of
// one RTP unit a packet (1 ms a second) keeps a sender's clock that runs slow (up to 0.1 %)
// from adding up over a long stream.
//
// Lateness counts toward the hold once the packets behind the late one catch up with it (come
// in faster than they were sent, by half its lateness, within catchUpWithin packets): that is
// what a path that held a packet looks like, the ones sent meanwhile queued behind it. A packet
// that comes after a gap with its timestamp where the last one left it, the ones after it on
// time, is a sender that sent nothing for a while without advancing its timestamp (discord.js
// does, and so does the playground's page): the measure starts again from it.
//
// The silence frames that close a talk spurt (closing) are measured, since the packets behind
// a late one at the end of a spurt are those, but they raise no lateness of their own: when a
// client sends them is its choice (the playground's page waits 200 ms after the last word,
// with the timestamp where it was). The measure starts again at a new stream (restart), at the
// first packet after them or after stallReset ticks without packets, and where the timestamp
// steps back further than that (the sender re-based it: no packet is that late without that
// many ticks).
func (l *Listener) measureStall(p *jitter.Packet, restart, closing bool) {
	if restart || l.quiet && !closing || l.idle >= stallReset {
		l.haveArr = false
	}
	if !l.haveArr {
		l.late, l.spike, l.caught, l.spikeAge = 0, 0, 0, 0
	} else {
		d := (l.ticks-l.lastArr)*opus.FrameSamples - int64(int32(p.Timestamp-l.lastTS))
		if d > stallReset*opus.FrameSamples {
			l.late, l.spike, l.caught, l.spikeAge = 0, 0, 0, 0
		} else {
			l.late = max(0, l.late+d-1)
			l.caught -= d // net: a packet a tick late then one on time is no catching up
		}
	}
	l.lastArr, l.lastTS, l.haveArr = l.ticks, p.Timestamp, true
	if l.stallAge++; l.stallAge >= stallDecay {
		l.stall, l.stallAge = max(0, l.stall-1), 0
	}
	if t := int((l.late + opus.FrameSamples/2) / opus.FrameSamples); !closing && t >= 2 && t > l.spike { // to the nearest tick
		l.spike, l.caught, l.spikeAge = t, 0, 0
		return
	}
	if l.spike == 0 {
		return
	}
	l.spikeAge++
	switch {
	case 2*l.caught >= int64(l.spike)*opus.FrameSamples: // the packets behind it caught up: the path held it
		if l.spike > l.stall {
			l.stall, l.stallAge = min(l.spike, l.stallMax), 0
		}
		l.spike, l.caught, l.spikeAge = 0, 0, 0
	case l.spikeAge >= catchUpWithin: // they never did: the sender's timeline moved, not the path's
		l.late, l.spike, l.caught, l.spikeAge = 0, 0, 0, 0
	}
}

// Tick advances wall time by one 20 ms frame. Call it every 20 ms.
func (l *Listener) Tick() {
	l.ticks++
	if l.pushed {
		l.pushed, l.idle, l.tickFed = false, 0, 0
		return
	}
	l.idle++
	if l.idle <= l.windowTicks {
		return
	}
	if l.idle == l.windowTicks+1 { // the stream paused: release what is held
		for o, ok := l.jb.Drain(); ok; o, ok = l.jb.Drain() {
			l.process(&o)
		}
	}
	// The silence owed by now. When the client closed its talk spurt with silence frames and
	// stopped, the window's ticks were silence too: they count once the window has passed, so
	// that the pause (and the end of the utterance) is as long in audio time as on the wall
	// clock. Packets that merely stall mid-speech are not made into a longer pause: their
	// silence starts after the window. Either way the jitter hold's ticks come off, as the
	// next packet may be as late as packets of this stream have been.
	owed := l.idle - l.hold()
	if !l.quiet {
		owed -= l.windowTicks
	}
	for ; l.tickFed < owed; l.tickFed++ {
		if !l.ep.Active() && l.ep.Idle() && l.filled >= l.preN {
			continue // nothing to end and the pre-roll is full: the rest is compressed
		}
		l.silence(1)
	}
}

// Flush ends the speaker's stream (they left, or the session ends): held
// packets are processed and an utterance in progress ends now. The
// Listener can then take a new stream.
func (l *Listener) Flush() {
	for o, ok := l.jb.Drain(); ok; o, ok = l.jb.Drain() {
		l.process(&o)
	}
	for _, ev := range l.ep.Flush() {
		l.emit(&ev)
	}
	l.jb.Reset()
	l.dec.Reset()
	if l.rs != nil {
		l.rs.Reset()
	}
	l.haveTS, l.acc = false, l.acc[:0]
	l.pushed, l.idle, l.filled, l.tickFed = false, 0, 0, 0
	l.haveArr, l.late, l.stall, l.stallAge = false, 0, 0, 0
}

func (l *Listener) process(o *jitter.Output) {
	if o.Restart {
		l.dec.Reset()
		l.haveTS = false
	}
	switch o.Kind {
	case jitter.KindPacket:
		if isDTX(o.Payload) {
			// A client in discontinuous transmission sends one of these
			// every 400 ms or so while quiet; decoding it would only make
			// the decoder conceal or make comfort noise. It is taken as
			// the pause it marks, as if nothing had been sent: not
			// decoded, no time fed (Tick and the next packet's timestamp
			// gap feed the silence), the decoder reset before the next
			// real packet. Only its sequence number counted (jitter
			// buffer: no loss).
			l.stale = true
			return
		}
		if l.haveTS {
			// A timestamp jump with contiguous sequence numbers is a pause
			// in transmission: feed what Tick has not already fed.
			if gap := int32(o.Timestamp - l.nextTS); gap >= opus.FrameSamples {
				if n := int(gap/opus.FrameSamples) - l.filled; n > 0 {
					l.silence(n)
				}
			}
		}
		l.filled = 0
		if isSilenceFrame(o.Payload) {
			// Discord's end-of-spurt silence frame (F8 FF FE) decodes to
			// digital silence: feed zeros without the decoder, which is
			// reset before the next real packet (the same clean start a
			// decoded run of silence frames leaves, give or take the
			// first few milliseconds).
			l.nextTS, l.haveTS = o.Timestamp+opus.FrameSamples, true
			l.stale = true
			l.silentFrame()
			return
		}
		if l.stale {
			l.dec.Reset()
			l.stale = false
		}
		n, err := l.dec.Decode(o.Payload, l.pcm48)
		if err != nil { // corrupt packet: counted, concealed
			l.metrics.malformedPacket()
			n, err = l.dec.Conceal(l.pcm48[:l.lost])
			if err != nil {
				return
			}
		}
		l.nextTS, l.haveTS = o.Timestamp+uint32(n)*l.tick, true
		l.feed(l.pcm48[:n*l.dec.Channels()])
	case jitter.KindLost:
		l.metrics.addLost(o.Lost)
		for i := range o.Lost {
			if i >= l.concealN {
				l.silence(min(o.Lost-i, l.gapN))
				break
			}
			frame := l.pcm48[:l.lost]
			var err error
			if i == o.Lost-1 && o.Payload != nil {
				_, err = l.dec.DecodeFEC(o.Payload, frame)
			} else {
				_, err = l.dec.Conceal(frame)
			}
			if err != nil {
				clear(frame)
			}
			l.metrics.conceal()
			l.feed(frame)
		}
		l.nextTS += uint32(o.Lost) * opus.FrameSamples
	}
}

// isSilenceFrame reports Discord's silence frame: a 20 ms CELT frame with
// the silence flag, what clients send five of after each talk spurt.
func isSilenceFrame(p []byte) bool {
	return len(p) == 3 && p[0] == 0xF8 && p[1] == 0xFF && p[2] == 0xFE
}

// isDTX reports an Opus DTX packet: the TOC byte alone (libopus's encoder
// sends one while in discontinuous transmission; its decoder treats a frame of
// at most one byte as lost and conceals).
func isDTX(p []byte) bool { return len(p) == 1 }

// silentFrame feeds 20 ms of zeros in place of a decoded silence frame.
func (l *Listener) silentFrame() {
	frame := l.pcm48[:l.lost]
	clear(frame)
	l.feed(frame)
}

// feed resamples decoded audio and pushes every whole frame to the VAD.
func (l *Listener) feed(s []int16) {
	if l.rs == nil {
		l.acc = append(l.acc, s...)
	} else {
		n, err := l.rs.Process(l.rsOut, s)
		if err != nil { // unreachable: buffers are sized for the largest packet
			return
		}
		l.acc = append(l.acc, l.rsOut[:n]...)
	}
	off := 0
	for ; off+l.fl <= len(l.acc); off += l.fl {
		l.push(l.acc[off : off+l.fl])
	}
	l.acc = l.acc[:copy(l.acc, l.acc[off:])]
}

// silence feeds n silent frames (at most one gap's worth), after any
// partial frame, and restarts the resampler so speech resumes cleanly.
func (l *Listener) silence(n int) {
	n = min(n, l.gapN)
	for range n {
		if len(l.acc) > 0 { // complete the partial frame with zeros
			k := len(l.acc)
			l.acc = l.acc[:l.fl]
			clear(l.acc[k:])
			l.push(l.acc)
			l.acc = l.acc[:0]
		} else {
			l.push(l.zero)
		}
		l.filled++
	}
	if l.rs != nil {
		l.rs.Reset()
	}
}

func (l *Listener) push(frame []int16) {
	evs, err := l.ep.Push(frame)
	if err != nil { // unreachable: frames are always FrameLen
		return
	}
	for i := range evs {
		l.emit(&evs[i])
	}
}

func (l *Listener) emit(ev *vad.Event) {
	l.metrics.event(ev)
	l.handle(*ev)
}

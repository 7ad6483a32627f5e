package control

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/wav"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/voicesim"
)

func (c *Controller) joinVoice(w http.ResponseWriter, r *http.Request) {
	var in asIn
	if !decode(w, r, &in) {
		return
	}
	u, ch, ok := c.resolve(w, in)
	if !ok {
		return
	}
	c.mu.Lock()
	_, already := c.voice[u]
	c.mu.Unlock()
	if already {
		fail(w, http.StatusConflict, fmt.Errorf("%s is already in voice (POST /voice/leave first)", in.As))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), opTimeout)
	defer cancel()
	m, err := c.sim.JoinVoiceMember(ctx, u, ch, voicesim.MemberOptions{})
	if err != nil {
		fail(w, http.StatusBadGateway, err)
		return
	}
	c.mu.Lock()
	c.voice[u] = m
	c.mu.Unlock()
	reply(w, http.StatusOK, struct {
		User    discordsim.UserID    `json:"user_id"`
		Channel discordsim.ChannelID `json:"channel_id"`
		SSRC    uint32               `json:"ssrc"`
	}{u, ch, m.SSRC()})
}

func (c *Controller) member(as string) (discordsim.UserID, *voicesim.Member, error) {
	u, err := c.user(as)
	if err != nil {
		return "", nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.voice[u]
	if m == nil {
		return "", nil, fmt.Errorf("%s is not in voice (POST /voice/join first)", as)
	}
	return u, m, nil
}

func (c *Controller) leaveVoice(w http.ResponseWriter, r *http.Request) {
	var in struct {
		As string `json:"as"`
	}
	if !decode(w, r, &in) {
		return
	}
	u, m, err := c.member(in.As)
	if err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	c.leaveMember(u, m)
	w.WriteHeader(http.StatusNoContent)
}

// playVoice is POST /voice/play?as=NAME with a WAV file as the body (16-bit
// PCM, 48 kHz, mono or stereo). With music=SECONDS (and seed=N, default 1)
// the member plays that much of voicesim.Music instead, as a music bot does:
// an instrumental, or a song when a WAV body gives its vocals. It answers
// once the audio has been sent, with how many frames of the bot's voice the
// member has heard so far.
func (c *Controller) playVoice(w http.ResponseWriter, r *http.Request) {
	_, m, err := c.member(r.URL.Query().Get("as"))
	if err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, maxWAV+1))
	if err != nil || len(data) > maxWAV {
		fail(w, http.StatusRequestEntityTooLarge, fmt.Errorf("wav: read body (at most %d bytes): %v", maxWAV, err))
		return
	}
	var samples []int16
	if music := r.URL.Query().Get("music"); music == "" || len(data) > 0 {
		if samples, err = stereo48k(data); err != nil {
			fail(w, http.StatusBadRequest, err)
			return
		}
	}
	if samples, err = withMusic(r.URL.Query(), samples); err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	length := time.Duration(len(samples)/2) * time.Second / 48000
	ctx, cancel := context.WithTimeout(r.Context(), length+opTimeout)
	defer cancel()
	if err := m.PlayPCM(ctx, samples); err != nil {
		fail(w, http.StatusBadGateway, err)
		return
	}
	reply(w, http.StatusOK, struct {
		PlayedMs    int64 `json:"played_ms"`
		HeardFrames int   `json:"heard_bot_frames"`
	}{length.Milliseconds(), len(m.Heard(string(c.sim.BotID())))})
}

// stereo48k decodes a WAV of 16-bit PCM at 48 kHz, mono or stereo, into interleaved stereo.
func stereo48k(data []byte) ([]int16, error) {
	samples, format, err := wav.Decode(nil, data)
	if err != nil {
		return nil, fmt.Errorf("wav: %w", err)
	}
	if format.Rate != 48000 || (format.Channels != 1 && format.Channels != 2) {
		return nil, fmt.Errorf("wav: %d Hz, %d channels: want 48000 Hz, mono or stereo", format.Rate, format.Channels)
	}
	if format.Channels == 1 {
		stereo := make([]int16, 2*len(samples))
		for i, s := range samples {
			stereo[2*i], stereo[2*i+1] = s, s
		}
		samples = stereo
	}
	return samples, nil
}

// maxMusic is the longest music one /voice/play plays.
const maxMusic = 600 * time.Second

// withMusic is what /voice/play plays for query q: samples as they are, or with music=SECONDS
// that much voicesim.Music (seed=N, default 1) with samples, if any, as its vocals.
func withMusic(q url.Values, samples []int16) ([]int16, error) {
	music := q.Get("music")
	if music == "" {
		return samples, nil
	}
	secs, err := strconv.ParseFloat(music, 64)
	if err != nil || !(secs >= pcm.FrameDuration.Seconds() && secs <= maxMusic.Seconds()) { // NaN too
		return nil, fmt.Errorf(`"music" %q: allowed values are seconds from 0.02 to %d`, music, int(maxMusic.Seconds()))
	}
	d := time.Duration(secs * float64(time.Second))
	seed := uint64(1)
	if s := q.Get("seed"); s != "" {
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			return nil, fmt.Errorf(`"seed" %q: allowed values are whole numbers from 0`, s)
		}
	}
	return voicesim.Music(d, seed, samples), nil
}

// voiceStats is GET /voice/stats: the voice server's UDP counters, as
// voicesim counts them; with ?as=NAME (or "bot"), of the packets that
// member sent (drops by injected loss count only server-wide: a dropped
// packet is never attributed).
func (c *Controller) voiceStats(w http.ResponseWriter, r *http.Request) {
	vs := c.sim.VoiceSim()
	if vs == nil {
		fail(w, http.StatusConflict, errNoVoiceServer)
		return
	}
	st := vs.Stats()
	if as := r.URL.Query().Get("as"); as != "" {
		u, err := c.user(as)
		if err != nil {
			fail(w, http.StatusBadRequest, err)
			return
		}
		st = vs.UserStats(string(u))
	}
	reply(w, http.StatusOK, map[string]uint64{
		"packets": st.Packets, "rtp": st.RTP, "decrypt_failures": st.DecryptFailures, "malformed": st.Malformed,
		"forwarded": st.Forwarded, "fault_dropped": st.FaultDropped,
	})
}

// voiceState is GET /voice/state?channel=C: who is in the voice channel
// and, with DAVE, the call's state (version, epoch, members, counters).
func (c *Controller) voiceState(w http.ResponseWriter, r *http.Request) {
	vs := c.sim.VoiceSim()
	if vs == nil {
		fail(w, http.StatusConflict, errNoVoiceServer)
		return
	}
	ch, err := c.channel(r.URL.Query().Get("channel"))
	if err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	d := vs.DAVE(string(c.guild), string(ch))
	reply(w, http.StatusOK, struct {
		Users []string `json:"users"`
		DAVE  any      `json:"dave"`
	}{vs.Users(string(c.guild), string(ch)), map[string]any{
		"version": d.Version, "epoch": d.Epoch, "established": d.Established, "members": d.Members,
		"busy": d.Busy, "invalid_reports": d.Stats.InvalidReports, "transitions": d.Stats.Transitions,
	}})
}

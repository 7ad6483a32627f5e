package voicesim

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/banterbot/banter/audio/opus"
	"github.com/banterbot/banter/discord/dave"
)

const (
	sampleRate      = 48000
	channels        = 2
	frameSamples    = 960 // per channel, 20 ms at 48 kHz
	frameDuration   = 20 * time.Millisecond
	silenceTrailing = TrailingSilenceFrames
)

// TrailingSilenceFrames is the number of Opus silence frames PlayOpus and
// PlayPCM send after the audio, as Discord clients do at the end of a talk
// spurt: a play of n frames sends n+TrailingSilenceFrames packets, one a
// frame interval.
const TrailingSilenceFrames = 5

// MemberOptions describe a simulated member joining a voice channel.
type MemberOptions struct {
	GuildID, ChannelID, UserID string
	// Mode is the member's transport mode. Default aead_aes256_gcm_rtpsize.
	Mode Mode
	// Deaf stops the forwarding unit from sending the member audio.
	Deaf bool
	// FrameInterval paces PlayOpus. Default 20 ms, the real frame time;
	// tests may shorten it.
	FrameInterval time.Duration
	// NoDAVE makes the member a client without DAVE support
	// (max_dave_protocol_version 0) on a server with DAVE on: the call
	// is downgraded to protocol 0 while it is in it. Without DAVE on the
	// server, members never use DAVE.
	NoDAVE bool
}

// Member is an in-process participant in a voice channel. It has its own
// loopback UDP socket and speaks real RTP to the server: what it plays
// goes through the forwarding unit (and the faults) like any client's
// audio, and it decrypts and records what the forwarding unit sends it.
type Member struct {
	s      *Server
	p      *participant
	opts   MemberOptions
	conn   *net.UDPConn
	tr     *transport
	loopWG sync.WaitGroup
	leave  sync.Once
	// dave is the member's own DAVE participant (nil without DAVE): the
	// server hands it gateway messages; PlayOpus encrypts with it and the
	// receive loop decrypts with it.
	dave *dave.Session

	playMu  sync.Mutex // serialises PlayOpus; guards the send state below
	seq     uint16
	ts      uint32
	counter uint32
	sendBuf []byte
	encBuf  []byte
	nonce   [24]byte

	mu      sync.Mutex // guards following
	heard   map[string]*heardTrack
	stats   MemberStats
	changed chan struct{} // closed and replaced on every new frame
}

type heardTrack struct {
	frames [][]byte
	pcm    []int16
}

// MemberStats counts what a member's socket received.
type MemberStats struct {
	Packets         uint64
	Frames          uint64 // decrypted Opus frames from a known speaker (silence included)
	Silence         uint64 // F8 FF FE frames
	DecryptFailures uint64
	Malformed       uint64
	UnknownSSRC     uint64
	DecodeErrors    uint64
	// DAVEDecryptFailures counts frames the member's DAVE session could
	// not decrypt (dropped); DAVENotReady counts frames PlayOpus dropped
	// because the session had no sender key yet.
	DAVEDecryptFailures uint64
	DAVENotReady        uint64
}

var errClosed = errors.New("server closed")

// JoinMember adds a simulated member to a voice channel. It gets an SSRC
// and is announced to the channel's clients with op 11 (Clients Connect)
// and op 5 (the SSRC→user mapping, speaking 0). With the server's DAVE
// role on (and not o.NoDAVE) it is a DAVE participant with its own
// dave.Session and joins the channel's MLS group; the ids must then be
// numeric. It leaves on Leave or when the Server closes.
func (s *Server) JoinMember(ctx context.Context, o MemberOptions) (*Member, error) {
	if o.GuildID == "" || o.ChannelID == "" || o.UserID == "" {
		return nil, fmt.Errorf("voicesim: join member: %w: guild, channel and user ids are required", errMissingField)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("voicesim: join member: %w", err)
	}
	if o.Mode == ModeUnknown {
		o.Mode = ModeAES256GCMRTPSize
	}
	if o.FrameInterval <= 0 {
		o.FrameInterval = frameDuration
	}
	var key [32]byte
	rand.Read(key[:])
	tr, err := newTransport(o.Mode, key)
	if err != nil {
		return nil, fmt.Errorf("voicesim: join member: %w", err)
	}
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, fmt.Errorf("voicesim: join member: %w", err)
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	var ds *dave.Session
	if s.daveEnabled() && !o.NoDAVE {
		uid, err := parseSnowflake(o.UserID)
		cid, err2 := parseSnowflake(o.ChannelID)
		if err = errors.Join(err, err2); err != nil {
			conn.Close()
			return nil, fmt.Errorf("voicesim: join member: %w", err)
		}
		ds = dave.NewSession(dave.Config{UserID: uid, ChannelID: cid, Logger: s.log})
	}
	m := &Member{
		dave: ds,
		s:    s, opts: o, conn: conn, tr: tr,
		seq:     binary.BigEndian.Uint16(rnd[:]),
		ts:      binary.BigEndian.Uint32(rnd[2:]),
		heard:   map[string]*heardTrack{},
		changed: make(chan struct{}),
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		conn.Close()
		return nil, fmt.Errorf("voicesim: join member: %w", errClosed)
	}
	key2 := partKey{o.GuildID, o.UserID}
	if old := s.parts[key2]; old != nil {
		s.removeLocked(old, CloseDisconnected)
	}
	p := &participant{
		key:    key2,
		sess:   Session{GuildID: o.GuildID, ChannelID: o.ChannelID, UserID: o.UserID, SelfDeaf: o.Deaf},
		ssrc:   s.allocSSRCLocked(),
		tr:     tr,
		remote: conn.LocalAddr().(*net.UDPAddr),
		member: m,
	}
	m.p = p
	s.parts[key2] = p
	s.bySSRC[p.ssrc] = p
	s.members[m] = struct{}{}
	peers := s.peersLocked(p)
	for _, q := range peers {
		s.sendSeqJSONLocked(q, OpClientsConnect, clientsConnectPayload{UserIDs: []string{o.UserID}})
	}
	s.announceSpeakingLocked(p)
	if s.daveEnabled() {
		s.memberJoinDAVELocked(p, peers)
	}
	s.mu.Unlock()

	m.loopWG.Add(1)
	go func() {
		defer m.loopWG.Done()
		m.readLoop()
	}()
	return m, nil
}

// UserID is the member's user id.
func (m *Member) UserID() string { return m.opts.UserID }

// SSRC is the member's RTP SSRC.
func (m *Member) SSRC() uint32 { return m.p.ssrc }

// Leave removes the member: the channel gets op 13 (Client Disconnect), the
// socket closes and the member's goroutine is waited for. Safe to call
// more than once.
func (m *Member) Leave() {
	m.leave.Do(func() {
		m.s.mu.Lock()
		m.s.removeLocked(m.p, CloseNormal)
		delete(m.s.members, m)
		m.s.mu.Unlock()
		m.conn.Close()
		m.loopWG.Wait()
	})
}

func (m *Member) setSpeaking(flags int) {
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	if m.s.parts[m.p.key] != m.p {
		return
	}
	m.p.speaking = flags
	m.p.spoke = true
	m.s.announceSpeakingLocked(m.p)
}

// PlayOpus sends the Opus frames as RTP, one per FrameInterval (20 ms), to
// the server, which forwards them to the channel. Before the first frame it
// announces speaking (op 5, flag 1) and after the last it sends five
// silence frames and announces speaking 0, as Discord clients do. It
// blocks until done or ctx ends. Calls are serialised.
func (m *Member) PlayOpus(ctx context.Context, frames [][]byte) error {
	m.playMu.Lock()
	defer m.playMu.Unlock()
	m.setSpeaking(1)
	defer m.setSpeaking(0)
	t := time.NewTicker(m.opts.FrameInterval)
	defer t.Stop()
	send := func(f []byte) error {
		m.seq++
		m.ts += frameSamples
		m.counter++
		m.sendBuf = m.tr.appendRTP(&m.nonce, m.sendBuf[:0], m.seq, m.ts, m.p.ssrc, f, m.counter)
		if _, err := m.conn.WriteToUDP(m.sendBuf, m.s.UDPAddr()); err != nil {
			return fmt.Errorf("voicesim: member %s play: %w", m.opts.UserID, err)
		}
		return nil
	}
	total := len(frames) + silenceTrailing
	for i := range total {
		if i > 0 {
			select {
			case <-ctx.Done():
				return fmt.Errorf("voicesim: member %s play: %w", m.opts.UserID, ctx.Err())
			case <-t.C:
			}
		}
		f := []byte(silence)
		if i < len(frames) {
			f = frames[i]
		}
		if m.dave != nil {
			enc, err := m.dave.EncryptOpus(m.encBuf[:0], f)
			if err != nil {
				m.count(func(st *MemberStats) { st.DAVENotReady++ })
				continue // no sender key yet: send nothing (WP)
			}
			m.encBuf, f = enc, enc
		}
		if err := send(f); err != nil {
			return err
		}
	}
	return nil
}

// PlayPCM encodes 48 kHz interleaved stereo PCM to 20 ms Opus frames
// (the system libopus through audio/opus; the last frame is zero-padded) and
// plays them with PlayOpus.
func (m *Member) PlayPCM(ctx context.Context, pcm48kStereo []int16) error {
	frames, err := EncodePCM(pcm48kStereo)
	if err != nil {
		return fmt.Errorf("voicesim: member %s play pcm: %w", m.opts.UserID, err)
	}
	return m.PlayOpus(ctx, frames)
}

// EncodePCM encodes 48 kHz interleaved stereo PCM into 20 ms Opus frames;
// the last frame is zero-padded.
func EncodePCM(pcm48kStereo []int16) ([][]byte, error) {
	enc, err := opus.NewEncoder(opus.EncoderConfig{Application: opus.ApplicationAudio, Bitrate: 64000})
	if err != nil {
		return nil, fmt.Errorf("voicesim: opus encoder: %w", err)
	}
	const n = frameSamples * channels
	var frames [][]byte
	buf := make([]int16, n)
	pkt := make([]byte, opus.MaxPacketSize)
	for off := 0; off < len(pcm48kStereo); off += n {
		chunk := pcm48kStereo[off:min(off+n, len(pcm48kStereo))]
		if len(chunk) < n {
			clear(buf)
			copy(buf, chunk)
			chunk = buf
		}
		k, err := enc.Encode(chunk, pkt)
		if err != nil {
			return nil, fmt.Errorf("voicesim: opus encode: %w", err)
		}
		frames = append(frames, append([]byte(nil), pkt[:k]...))
	}
	return frames, nil
}

// readLoop receives what the forwarding unit sends the member.
func (m *Member) readLoop() {
	buf := make([]byte, 64*1024)
	plainBuf := make([]byte, 0, 64*1024)
	daveBuf := make([]byte, 0, 64*1024)
	decoders := map[uint32]*opus.Decoder{}
	pcmBuf := make([]int16, opus.MaxFrameSamples*opus.Channels)
	nonce := new([24]byte)
	var h rtpHeader
	for {
		n, _, err := m.conn.ReadFromUDP(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		pkt := buf[:n]
		m.count(func(st *MemberStats) { st.Packets++ })
		if err := parseRTPHeader(&h, pkt); err != nil || h.PT != opusPT {
			m.count(func(st *MemberStats) { st.Malformed++ })
			continue
		}
		plain, err := m.tr.open(nonce, plainBuf[:0], &h, pkt)
		if err != nil {
			if errors.Is(err, errDecrypt) {
				m.count(func(st *MemberStats) { st.DecryptFailures++ })
			} else {
				m.count(func(st *MemberStats) { st.Malformed++ })
			}
			continue
		}
		user := m.s.userBySSRC(m.opts.GuildID, h.SSRC)
		if user == "" {
			m.count(func(st *MemberStats) { st.UnknownSSRC++ })
			continue
		}
		if m.dave != nil {
			if plain, err = m.dave.DecryptOpus(user, daveBuf[:0], plain); err != nil {
				m.count(func(st *MemberStats) { st.DAVEDecryptFailures++ })
				continue
			}
			daveBuf = plain
		}
		if isSilence(plain) {
			m.count(func(st *MemberStats) { st.Frames++; st.Silence++ })
			continue
		}
		dec := decoders[h.SSRC]
		if dec == nil {
			if dec, err = opus.NewDecoder(); err != nil {
				m.count(func(st *MemberStats) { st.DecodeErrors++ })
				continue
			}
			decoders[h.SSRC] = dec
		}
		frame := append([]byte(nil), plain...)
		ns, derr := dec.Decode(frame, pcmBuf)
		m.mu.Lock()
		m.stats.Frames++
		if derr != nil {
			m.stats.DecodeErrors++
		}
		tr := m.heard[user]
		if tr == nil {
			tr = &heardTrack{}
			m.heard[user] = tr
		}
		tr.frames = append(tr.frames, frame)
		if derr == nil {
			tr.pcm = append(tr.pcm, pcmBuf[:ns*opus.Channels]...)
		}
		close(m.changed)
		m.changed = make(chan struct{})
		m.mu.Unlock()
	}
}

func (m *Member) count(f func(*MemberStats)) {
	m.mu.Lock()
	f(&m.stats)
	m.mu.Unlock()
}

// userBySSRC maps an SSRC in a guild to its user id.
func (s *Server) userBySSRC(guildID string, ssrc uint32) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.bySSRC[ssrc]; p != nil && p.key.guild == guildID {
		return p.key.user
	}
	return ""
}

// Heard returns the Opus frames (transport-decrypted, silence frames
// excluded) the member received from userID, in arrival order. The outer
// slice is a copy; the frames must not be modified.
func (m *Member) Heard(userID string) [][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t := m.heard[userID]; t != nil {
		return append([][]byte(nil), t.frames...)
	}
	return nil
}

// HeardPCM returns the decoded 48 kHz interleaved stereo PCM of what the
// member heard from userID (a copy).
func (m *Member) HeardPCM(userID string) []int16 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t := m.heard[userID]; t != nil {
		return append([]int16(nil), t.pcm...)
	}
	return nil
}

// Stats returns the member's receive counters.
func (m *Member) Stats() MemberStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stats
}

// WaitHeard waits until the member has heard at least minFrames non-silent
// frames from userID, or ctx ends.
func (m *Member) WaitHeard(ctx context.Context, userID string, minFrames int) error {
	for {
		m.mu.Lock()
		n := 0
		if t := m.heard[userID]; t != nil {
			n = len(t.frames)
		}
		ch := m.changed
		m.mu.Unlock()
		if n >= minFrames {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("voicesim: member %s heard %d/%d frames from %s: %w", m.opts.UserID, n, minFrames, userID, ctx.Err())
		case <-ch:
		}
	}
}

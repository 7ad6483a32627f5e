package voice

import (
	"crypto/tls"
	"log/slog"
	"time"
)

// Config is what one voice connection needs. Endpoint, GuildID, UserID,
// SessionID and Token come from the main gateway's VOICE_STATE_UPDATE and
// VOICE_SERVER_UPDATE; a token is good for one connection only.
type Config struct {
	// Endpoint is VOICE_SERVER_UPDATE's endpoint ("host:port"; a wss://
	// prefix is tolerated). The URL dialled is wss://{Endpoint}?v=8.
	Endpoint  string
	GuildID   string
	ChannelID string // for logs
	UserID    string // the bot's user id
	SessionID string
	Token     string

	// TLSConfig is used for the WebSocket (nil: system roots). Point it at
	// a simulator with RootCAs.
	TLSConfig *tls.Config
	// E2EE is the DAVE session; nil advertises max_dave_protocol_version 0
	// and passes frames through.
	E2EE E2EE
	// Logger receives connection-level events (never per packet). Nil
	// discards.
	Logger *slog.Logger
	// Metrics may be nil.
	Metrics *Metrics

	// HandshakeTimeout bounds Dial and each resume. Default 10 s.
	HandshakeTimeout time.Duration
	// KeepaliveInterval is the UDP keepalive period. Default 5 s.
	KeepaliveInterval time.Duration
	// ResumeAttempts bounds consecutive resume attempts after a drop.
	// Default 5.
	ResumeAttempts int
	// ResumeBackoff is the delay before the second resume attempt; it
	// doubles per attempt (the first is immediate). Default 250 ms.
	ResumeBackoff time.Duration
	// MissedHeartbeats is how many unacknowledged heartbeats mark the
	// socket dead (it is then resumed). Default 3.
	MissedHeartbeats int
	// SendSpin is pace.Pacer.Spin for the sender: the last stretch before
	// each 20 ms slot is spent yielding rather than on a timer, which takes
	// the ~1 ms timer granularity out of the send jitter for up to
	// SendSpin/20 ms of a core while speaking. Default 1 ms; negative
	// disables.
	SendSpin time.Duration
	// SendRealtimePriority, if > 0, runs each frame's wait, encryption and
	// write on an OS thread in the SCHED_FIFO class at this priority
	// (pace.EnterRealtime) sleeping with clock_nanosleep, so CPU load does
	// not delay the send. It needs CAP_SYS_NICE or RLIMIT_RTPRIO; without
	// it the connection logs once and paces normally. Default 0 (off).
	SendRealtimePriority int
	// Clock, if set, sends this connection's frames on a process-wide
	// SendClock (shared with other connections) instead of pacing each
	// frame in SendOpus: SendOpus then queues the frame and returns, and
	// SendSpin and SendRealtimePriority do not apply. See SendClock.
	Clock *SendClock
	// StreamDepth is each speaker stream's channel capacity in frames.
	// Default 50 (one second).
	StreamDepth int
}

func (c *Config) setDefaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = 10 * time.Second
	}
	if c.KeepaliveInterval <= 0 {
		c.KeepaliveInterval = 5 * time.Second
	}
	if c.ResumeAttempts <= 0 {
		c.ResumeAttempts = 5
	}
	if c.ResumeBackoff <= 0 {
		c.ResumeBackoff = 250 * time.Millisecond
	}
	if c.MissedHeartbeats <= 0 {
		c.MissedHeartbeats = 3
	}
	if c.SendSpin == 0 {
		c.SendSpin = time.Millisecond
	}
	if c.StreamDepth <= 0 {
		c.StreamDepth = 50
	}
}
